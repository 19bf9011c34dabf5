"""EKS bearer tokens made in-process, as ``aws eks get-token`` makes them, so the image needs no AWS CLI.

The algorithm is aws-cli's (aws/aws-cli awscli/customizations/eks/get_token.py, ``TokenGenerator`` and
``STSClientFactory``): an STS ``GetCallerIdentity`` URL presigned with SigV4 for 60 s, with the
``x-k8s-aws-id: <cluster>`` header among the signed headers, base64url-encoded without padding and
prefixed ``k8s-aws-v1.``. STS honours the signature for 15 minutes, so aws-cli reports expiry after 14
(``TOKEN_EXPIRATION_MINS``); the token here is reused until a minute before that.

Only the two commands whose meaning is known are replaced (``aws [--region R] [--profile P] eks
get-token --cluster-name X [--role-arn A]`` and ``aws-iam-authenticator token -i X [-r A]``); an exec
entry with options or environment this module does not understand runs as configured, through the
kubernetes client's own exec support.
"""
from __future__ import annotations

import base64
import os
import threading
import time
from dataclasses import dataclass
from typing import Callable

import boto3
import botocore.exceptions

from bot.errors import ClusterConfigError

TOKEN_PREFIX = "k8s-aws-v1."
K8S_AWS_ID_HEADER = "x-k8s-aws-id"
URL_TIMEOUT = 60
TOKEN_LIFETIME = 14 * 60.0
REFRESH_BEFORE = 60.0
DEFAULT_SESSION_NAME = "EKSGetTokenAuth"

# Options that take a value, by command, mapped to the field they set; flags that change nothing here.
_AWS_OPTIONS = {"--cluster-name": "cluster", "--cluster-id": "cluster", "--region": "region",
                "--role-arn": "role_arn", "--session-name": "session_name", "--profile": "profile",
                "--output": None}
_AUTHENTICATOR_OPTIONS = {"-i": "cluster", "--cluster-id": "cluster", "-r": "role_arn", "--role": "role_arn",
                          "--region": "region", "--session-name": "session_name"}
_UNDERSTOOD_ENV = {"AWS_PROFILE": "profile", "AWS_REGION": "region", "AWS_DEFAULT_REGION": "region"}


@dataclass(frozen=True)
class EksTokenSpec:
    cluster: str
    region: str | None = None
    role_arn: str | None = None
    session_name: str | None = None
    profile: str | None = None


def parse_exec(exec_entry: dict) -> EksTokenSpec | None:
    """The token request an exec entry stands for, or None when it is anything else."""
    command = os.path.basename(str(exec_entry.get("command") or ""))
    args = [str(a) for a in exec_entry.get("args") or []]
    if command == "aws":
        rest = _without_subcommand(args, ("eks", "get-token"))
        options = _AWS_OPTIONS
    elif command == "aws-iam-authenticator":
        rest = _without_subcommand(args, ("token",))
        options = _AUTHENTICATOR_OPTIONS
    else:
        return None
    if rest is None:
        return None
    fields = _options(rest, options)
    if fields is None:
        return None
    for item in exec_entry.get("env") or []:
        name, value = str((item or {}).get("name", "")), (item or {}).get("value")
        if name not in _UNDERSTOOD_ENV:
            return None  # credentials or endpoints set for the command: let it run as configured
        fields.setdefault(_UNDERSTOOD_ENV[name], str(value))
    if not fields.get("cluster"):
        return None
    return EksTokenSpec(**fields)


def _without_subcommand(args: list[str], words: tuple[str, ...]) -> list[str] | None:
    """``args`` less the sub-command words, which must appear in order (global options may precede)."""
    positions = []
    start = 0
    for word in words:
        try:
            start = args.index(word, start)
        except ValueError:
            return None
        positions.append(start)
    return [a for i, a in enumerate(args) if i not in positions]


def _options(args: list[str], known: dict[str, str | None]) -> dict[str, str] | None:
    fields: dict[str, str] = {}
    i = 0
    while i < len(args):
        name, eq, value = args[i].partition("=")
        if name not in known:
            return None
        if not eq:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
        field = known[name]
        if field is not None:
            fields[field] = value
        i += 1
    return fields


class EksTokenSource:
    """Tokens for one cluster, made when needed and kept until a minute before they expire."""

    def __init__(self, spec: EksTokenSpec, *, fallback_region: str | None,
                 clock: Callable[[], float] = time.time) -> None:
        self.spec = spec
        self._fallback_region = fallback_region
        self._clock = clock
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires = 0.0

    @property
    def expires_at(self) -> float:
        """When the token in hand stops being accepted (0 before the first one is made)."""
        return self._expires

    def token(self) -> str:
        with self._lock:
            if self._token is None or self._clock() >= self._expires - REFRESH_BEFORE:
                now = self._clock()
                self._token = self._make()
                self._expires = now + TOKEN_LIFETIME
            return self._token

    def _make(self) -> str:
        try:
            url = presigned_url(self._sts_client(), self.spec.cluster)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            raise ClusterConfigError(
                f"cannot make an EKS token for cluster {self.spec.cluster}: {' '.join(str(exc).split())}: give "
                "gpubot AWS credentials (IRSA or EKS Pod Identity in a pod, AWS_PROFILE on a laptop)") from None
        return TOKEN_PREFIX + base64.urlsafe_b64encode(url.encode("utf-8")).decode("utf-8").rstrip("=")

    def _sts_client(self):
        session = boto3.Session(profile_name=self.spec.profile)
        region = self.spec.region or session.region_name or self._fallback_region
        if self.spec.role_arn is None:
            sts = session.client("sts", region_name=region)
        else:
            creds = session.client("sts", region_name=region).assume_role(
                RoleArn=self.spec.role_arn, RoleSessionName=self.spec.session_name or DEFAULT_SESSION_NAME,
            )["Credentials"]
            sts = session.client("sts", region_name=region, aws_access_key_id=creds["AccessKeyId"],
                                 aws_secret_access_key=creds["SecretAccessKey"],
                                 aws_session_token=creds["SessionToken"])
        _register_cluster_header(sts)
        return sts


def presigned_url(sts, cluster: str) -> str:
    return sts.generate_presigned_url("get_caller_identity", Params={K8S_AWS_ID_HEADER: cluster},
                                      ExpiresIn=URL_TIMEOUT, HttpMethod="GET")


def _register_cluster_header(sts) -> None:
    """GetCallerIdentity takes no parameters: the cluster rides in the request context to a header
    added before signing, so the signature covers it (aws-cli's ``_register_k8s_aws_id_handlers``)."""

    def keep(params, context, **_):
        if K8S_AWS_ID_HEADER in params:
            context[K8S_AWS_ID_HEADER] = params.pop(K8S_AWS_ID_HEADER)

    def inject(request, **_):
        if K8S_AWS_ID_HEADER in request.context:
            request.headers[K8S_AWS_ID_HEADER] = request.context[K8S_AWS_ID_HEADER]

    sts.meta.events.register("provide-client-params.sts.GetCallerIdentity", keep)
    sts.meta.events.register("before-sign.sts.GetCallerIdentity", inject)


def token_source(user: dict, *, fallback_region: str | None) -> EksTokenSource | None:
    """A token source for a kubeconfig user whose exec is an EKS token command, else None."""
    exec_entry = user.get("exec")
    spec = parse_exec(exec_entry) if isinstance(exec_entry, dict) else None
    return EksTokenSource(spec, fallback_region=fallback_region) if spec else None
