"""EKS tokens made in-process as `aws eks get-token` makes them: the presigned STS URL is checked
against SigV4 recomputed here from the specification, STS itself (moto in server mode, over HTTP)
answers the URL, and the gateway sends the token to the API server (a recording HTTP server) with
no AWS CLI on the machine."""
from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import threading
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from bot.errors import ClusterConfigError
from bot.gateway import connect
from bot.gateway.eks_token import (REFRESH_BEFORE, TOKEN_LIFETIME, EksTokenSource, EksTokenSpec, parse_exec,
                                   token_source)
from bot.settings import load_settings

KEY_ID, SECRET = "AKIDEXAMPLETESTING", "testing-secret"
AWS_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL",
           "AWS_ENDPOINT_URL_STS", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE")


@pytest.fixture
def aws_env(monkeypatch):
    for key in AWS_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    return monkeypatch


def _url_of(token: str) -> str:
    assert token.startswith("k8s-aws-v1.")
    body = token.removeprefix("k8s-aws-v1.")
    assert "=" not in body  # base64url without padding, as aws-cli strips it
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()


def _sigv4_presign_signature(url: str, headers: dict[str, str], secret: str) -> str:
    """The signature SigV4 gives a presigned GET (AWS General Reference, "Create a signed AWS API
    request": canonical request, string to sign, derived key), computed without botocore. Outside S3
    a presigned GET signs the hash of its empty body, not UNSIGNED-PAYLOAD."""
    parts = urllib.parse.urlsplit(url)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True) if k != "X-Amz-Signature"]
    quote = lambda s: urllib.parse.quote(s, safe="-_.~")  # noqa: E731
    canonical_query = "&".join(f"{quote(k)}={quote(v)}" for k, v in sorted(query))
    params = dict(query)
    signed = params["X-Amz-SignedHeaders"].split(";")
    canonical_headers = "".join(f"{h}:{headers[h].strip()}\n" for h in signed)
    canonical = "\n".join(["GET", parts.path or "/", canonical_query, canonical_headers,
                           params["X-Amz-SignedHeaders"], hashlib.sha256(b"").hexdigest()])
    scope = params["X-Amz-Credential"].split("/", 1)[1]
    date, region, service, _ = scope.split("/")
    to_sign = "\n".join(["AWS4-HMAC-SHA256", params["X-Amz-Date"], scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = f"AWS4{secret}".encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def test_token_is_a_presigned_get_caller_identity_url_signed_over_the_cluster_header(aws_env):
    token = EksTokenSource(EksTokenSpec(cluster="gpu-prod", region="eu-west-1"), fallback_region=None).token()
    url = _url_of(token)
    parts = urllib.parse.urlsplit(url)
    params = dict(urllib.parse.parse_qsl(parts.query))
    assert parts.scheme == "https" and parts.netloc == "sts.eu-west-1.amazonaws.com"
    assert params["Action"] == "GetCallerIdentity" and params["Version"] == "2011-06-15"
    assert params["X-Amz-Algorithm"] == "AWS4-HMAC-SHA256" and params["X-Amz-Expires"] == "60"
    assert params["X-Amz-Credential"].startswith(f"{KEY_ID}/") and "/eu-west-1/sts/aws4_request" in params["X-Amz-Credential"]
    assert params["X-Amz-SignedHeaders"] == "host;x-k8s-aws-id"
    headers = {"host": parts.netloc, "x-k8s-aws-id": "gpu-prod"}
    assert params["X-Amz-Signature"] == _sigv4_presign_signature(url, headers, SECRET)
    # Signed for another cluster, the same URL would not verify: the header is part of the signature.
    assert params["X-Amz-Signature"] != _sigv4_presign_signature(url, {**headers, "x-k8s-aws-id": "other"}, SECRET)


@pytest.fixture
def sts_url():
    """moto's STS alone over HTTP (what `moto_server sts` serves): the shared moto server picks a service
    from the Authorization header, which a presigned URL does not have."""
    from moto.moto_server.werkzeug_app import create_backend_app
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, create_backend_app("sts"), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_sts_answers_the_presigned_url(aws_env, sts_url):
    aws_env.setenv("AWS_ENDPOINT_URL_STS", sts_url)
    url = _url_of(EksTokenSource(EksTokenSpec(cluster="gpu-prod", region="us-east-1"), fallback_region=None).token())
    assert url.startswith(f"{sts_url}/?Action=GetCallerIdentity")
    # The request the EKS authenticator makes with the token: a GET of the URL with the cluster header.
    request = urllib.request.Request(url, headers={"x-k8s-aws-id": "gpu-prod"})
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read().decode()
    assert "<GetCallerIdentityResponse" in body and "<Arn>arn:aws:sts::" in body


def test_token_is_kept_until_a_minute_before_expiry(aws_env):
    now = [1_000_000.0]
    source = EksTokenSource(EksTokenSpec(cluster="c", region="us-east-1"), fallback_region=None, clock=lambda: now[0])
    first = source.token()
    assert source.expires_at == 1_000_000.0 + TOKEN_LIFETIME
    now[0] += TOKEN_LIFETIME - REFRESH_BEFORE - 1
    assert source.token() == first and source.expires_at == 1_000_000.0 + TOKEN_LIFETIME
    now[0] += 2  # within the last minute: a new token, good for another 14 minutes from now
    _url_of(source.token())
    assert source.expires_at == now[0] + TOKEN_LIFETIME


def test_no_credentials_is_one_line_naming_the_cluster(aws_env):
    aws_env.delenv("AWS_ACCESS_KEY_ID")
    aws_env.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(ClusterConfigError) as err:
        EksTokenSource(EksTokenSpec(cluster="gpu-prod", region="us-east-1"), fallback_region=None).token()
    assert "gpu-prod" in str(err.value) and "credentials" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("entry, spec", [
    ({"command": "aws", "args": ["--region", "us-west-2", "eks", "get-token", "--cluster-name", "prod", "--output", "json"]},
     EksTokenSpec(cluster="prod", region="us-west-2")),
    ({"command": "aws", "args": ["eks", "get-token", "--cluster-name=prod", "--role-arn", "arn:aws:iam::1:role/r"],
      "env": [{"name": "AWS_PROFILE", "value": "ops"}]},
     EksTokenSpec(cluster="prod", role_arn="arn:aws:iam::1:role/r", profile="ops")),
    ({"command": "/usr/local/bin/aws-iam-authenticator", "args": ["token", "-i", "prod", "-r", "arn:aws:iam::1:role/r"]},
     EksTokenSpec(cluster="prod", role_arn="arn:aws:iam::1:role/r")),
    # Anything else runs as configured: other plugins, unknown options, credentials in the exec's env.
    ({"command": "kubelogin", "args": ["get-token"]}, None),
    ({"command": "aws", "args": ["eks", "get-token", "--cluster-name", "prod", "--debug"]}, None),
    ({"command": "aws", "args": ["eks", "describe-cluster", "--name", "prod"]}, None),
    ({"command": "aws", "args": ["eks", "get-token", "--cluster-name", "prod"],
      "env": [{"name": "AWS_ACCESS_KEY_ID", "value": "x"}]}, None),
    ({"command": "aws", "args": ["eks", "get-token"]}, None),
])
def test_which_exec_entries_are_answered_in_process(entry, spec):
    assert parse_exec(entry) == spec


class _Recorder(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server's naming
        type(self).seen.append(self.headers.get("Authorization", ""))
        body = json.dumps({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "default"}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_gateway_sends_the_in_process_token_with_no_aws_cli(aws_env, tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        path = tmp_path / "config"
        # The command does not exist: only the in-process token can get this request through.
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "eks-prod",
            "clusters": [{"name": "eks", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}],
            "users": [{"name": "eks-user", "user": {"exec": {
                "apiVersion": "client.authentication.k8s.io/v1beta1", "command": str(tmp_path / "no" / "aws"),
                "args": ["--region", "ap-northeast-2", "eks", "get-token", "--cluster-name", "gpu-prod"]}}}],
            "contexts": [{"name": "eks-prod", "context": {"cluster": "eks", "user": "eks-user"}}],
        }))
        gw = connect(load_settings({"KUBECONFIG": str(path)}))
        assert gw.get_pod("default", "p")["metadata"]["name"] == "p"
        sent = _Recorder.seen[-1]
        assert sent.startswith("Bearer k8s-aws-v1.")
        url = _url_of(sent.removeprefix("Bearer "))
        assert "sts.ap-northeast-2.amazonaws.com" in url and "X-Amz-SignedHeaders=host%3Bx-k8s-aws-id" in url
        gw.close()
    finally:
        server.shutdown()


def test_other_users_are_left_to_the_client():
    assert token_source({"token": "abc"}, fallback_region=None) is None
    assert token_source({"exec": {"command": "gke-gcloud-auth-plugin"}}, fallback_region=None) is None
