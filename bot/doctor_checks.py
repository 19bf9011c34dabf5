"""The checks of ``gpubot doctor``: each returns a Check that says what it found and, failing, what to fix.

A check catches only the failures of the dependency it checks (a refused token, a closed port, a
missing permission) and turns them into one line; anything else is a bug and surfaces as one.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from bot.errors import GpubotError
from bot.settings import Settings

PASS, FAIL, SKIP = "ok", "FAIL", "skipped"
# Where the Slack app manifests live in a checkout; one per mode, with the same bot scopes.
DEPLOY = Path(__file__).resolve().parent.parent / "deploy"


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # PASS, FAIL or SKIP
    detail: str
    fix: str = ""
    configuration: bool = False  # a failure of our own configuration (exit 2), not of a dependency (exit 3)


def _one_line(text: object, limit: int = 300) -> str:
    return " ".join(str(text).split())[:limit]


def policy(settings: Settings) -> Check:
    from bot.policy import load_policy

    if not settings.policy_path:
        return Check("policy", SKIP, "GPUBOT_POLICY is not set: every channel reads everything, remediations are off")
    try:
        loaded = load_policy(settings.policy_path)
    except GpubotError as exc:
        return Check("policy", FAIL, _one_line(exc), "correct the line named (`gpubot policy check FILE` checks it)",
                     configuration=True)
    remediations = "on" if loaded.remediations.enabled else "off"
    return Check("policy", PASS, f"{settings.policy_path}: {len(loaded.channels)} channel(s), remediations {remediations}")


def database(settings: Settings) -> Check:
    from sqlalchemy.exc import SQLAlchemyError

    from bot.store import make_engine, migrate

    try:
        engine = make_engine(settings.database_url)
    except GpubotError as exc:
        return Check("database", FAIL, _one_line(exc), "set GPUBOT_DATABASE_URL to postgresql://USER@HOST/DB "
                     "or sqlite:///PATH", configuration=True)
    where = engine.url.render_as_string(hide_password=True)
    try:
        have, want = migrate.current(engine), migrate.head()
    except (SQLAlchemyError, OSError, GpubotError) as exc:  # the store may already say it in one line
        reason = _one_line(getattr(exc, "reason", None) or getattr(exc, "orig", None) or exc, 200)
        return Check("database", FAIL, f"cannot reach {where}: {reason}",
                     "start the database or correct host, port and credentials in GPUBOT_DATABASE_URL")
    finally:
        engine.dispose()
    if have != want:
        return Check("database", FAIL, f"{where}: schema at {have or 'none (empty)'}, gpubot needs {want}",
                     "run `gpubot db upgrade`")
    return Check("database", PASS, f"{where}: schema at head ({want})")


def manifest_scopes(mode: str) -> frozenset[str] | None:
    """The bot scopes the app manifest for this mode asks for; None where no manifest is at hand."""
    path = DEPLOY / f"slack-app-manifest-{mode}.yaml"
    if not path.is_file():  # an installed wheel carries no deploy/
        return None
    manifest = yaml.safe_load(path.read_text())
    return frozenset(manifest["oauth_config"]["scopes"]["bot"])


def slack(settings: Settings) -> Check:
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError, SlackClientError

    if not settings.slack_bot_token:
        return Check("slack", SKIP, "SLACK_BOT_TOKEN is not set (only `gpubot serve` needs it)")
    web = WebClient(token=settings.slack_bot_token, base_url=settings.slack_api_url,
                    timeout=max(1, int(settings.request_timeout)))
    try:
        answer = web.auth_test()
    except SlackApiError as exc:
        error = exc.response.get("error") if exc.response is not None else "error"
        return Check("slack", FAIL, f"auth.test refused the bot token ({error})",
                     "set SLACK_BOT_TOKEN to the Bot User OAuth Token (xoxb-...) from the app's OAuth & Permissions "
                     "page; reinstall the app if it was revoked")
    except (SlackClientError, OSError) as exc:
        reason = _one_line(getattr(exc, "reason", None) or exc, 200)  # URLError: the socket's own words
        return Check("slack", FAIL, f"cannot reach Slack at {settings.slack_api_url}: {reason}",
                     "check the network path to Slack (proxy, egress NetworkPolicy) or SLACK_API_URL")
    who = f"{answer.get('user')} in {answer.get('team')}"
    wanted = manifest_scopes(settings.slack_mode)
    header = next((v for k, v in (answer.headers or {}).items() if k.lower() == "x-oauth-scopes"), None)
    if wanted is None or header is None:
        return Check("slack", PASS, f"{who}; scopes not compared (no manifest or no x-oauth-scopes header)")
    missing = sorted(wanted - {s.strip() for s in header.split(",") if s.strip()})
    if missing:
        return Check("slack", FAIL, f"{who}; the token lacks scope(s) {', '.join(missing)}",
                     f"add them under OAuth & Permissions > Bot Token Scopes (deploy/slack-app-manifest-"
                     f"{settings.slack_mode}.yaml lists them) and reinstall the app")
    return Check("slack", PASS, f"{who}; all {len(wanted)} bot scopes of the {settings.slack_mode} manifest granted")


def slack_app_token(settings: Settings) -> Check:
    """Socket Mode's app-level token, asked for a connection URL as the Socket Mode client first does
    (https://api.slack.com/methods/apps.connections.open); the URL is not dialled."""
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError, SlackClientError

    name = "slack app token"
    if not settings.slack_app_token:
        return Check(name, FAIL, "GPUBOT_SLACK_MODE is socket but SLACK_APP_TOKEN is not set",
                     "set SLACK_APP_TOKEN to an xapp-... token with connections:write (Basic Information > "
                     "App-Level Tokens), or GPUBOT_SLACK_MODE=http", configuration=True)
    web = WebClient(token=settings.slack_app_token, base_url=settings.slack_api_url,
                    timeout=max(1, int(settings.request_timeout)))
    try:
        web.apps_connections_open(app_token=settings.slack_app_token)
    except SlackApiError as exc:
        error = exc.response.get("error") if exc.response is not None else "error"
        return Check(name, FAIL, f"apps.connections.open refused the app-level token ({error})",
                     "set SLACK_APP_TOKEN to an xapp-... token with connections:write (Basic Information > "
                     "App-Level Tokens) and turn Socket Mode on for the app")
    except (SlackClientError, OSError) as exc:
        reason = _one_line(getattr(exc, "reason", None) or exc, 200)
        return Check(name, FAIL, f"cannot reach Slack at {settings.slack_api_url}: {reason}",
                     "check the network path to Slack (proxy, egress NetworkPolicy) or SLACK_API_URL")
    return Check(name, PASS, "apps.connections.open answered a Socket Mode URL")


def cluster(settings: Settings, *, context: str | None, remediations: bool) -> tuple[list[Check], object | None]:
    """Access checks for reads, leader election and (when the policy enables them) remediation writes;
    with the gateway's context facts (region, EC2 endpoint) for the AWS check."""
    from bot.errors import ClusterError
    from bot.gateway import permissions
    from bot.gateway.kube import connect

    try:
        gateway = connect(settings, context=context)
    except GpubotError as exc:
        return [Check("cluster", FAIL, _one_line(exc), "pass --context with a context of the kubeconfig "
                      "(`kubectl config get-contexts`), or set KUBECONFIG")], None
    try:
        lease_ns = settings.lease_namespace or settings.namespace
        groups = [("cluster reads", permissions.reads(), "bind the ClusterRole gpubot-read (deploy/helm/gpubot, "
                   "templates/rbac.yaml) to this identity; as an IAM role: its EKS access entry's groups, rbac.groups"),
                  ("leader election", permissions.leader_election(namespace=lease_ns, lease=settings.lease_name),
                   f"bind the Role gpubot-leader-election in {lease_ns} to this identity")]
        if remediations:
            groups.append(("remediation writes", permissions.remediation_writes(),
                           "bind the ClusterRole gpubot-remediate (the chart's "
                           "remediation.enabled) to this identity"))
        checks = []
        for name, accesses, fix in groups:
            try:
                answers = permissions.review(gateway, accesses)
            except ClusterError as exc:
                reason = _one_line(exc)
                return [Check(f"cluster: {gateway.name}", FAIL, reason,
                              "check the API server address and credentials of this context")], gateway.info
            denied = [a.text() for a, allowed in answers if not allowed]
            if denied:
                checks.append(Check(name, FAIL, f"{gateway.name}: {len(denied)} of {len(answers)} denied: "
                                    + ", ".join(denied[:8]) + (" ..." if len(denied) > 8 else ""), fix))
            else:
                checks.append(Check(name, PASS, f"{gateway.name}: all {len(answers)} allowed"))
        return checks, gateway.info
    finally:
        gateway.close()


def aws(settings: Settings, info) -> Check:
    from bot.gateway.aws_access import AwsAccessError, check_aws

    region = settings.aws_region or getattr(info, "region", None)
    endpoint = settings.ec2_endpoint or getattr(info, "ec2_endpoint", None)
    if not region:
        return Check("aws", SKIP, "no region (AWS_REGION, or the kubeconfig's gpubot.dev/aws extension): "
                     "instance facts come from the embedded catalogue")
    try:
        arn, listed = check_aws(region=region, endpoint_url=endpoint, timeout=settings.request_timeout)
    except AwsAccessError as exc:
        text = str(exc)
        detail, _, fix = text.partition(": ")
        return Check("aws", FAIL, f"{region}: {detail}", fix)
    return Check("aws", PASS, f"{region}: {arn}; ec2:DescribeInstanceTypes answered")
