"""Typed settings, read from the environment once by whoever starts the program (CLI, app factory)."""
from __future__ import annotations

import os
from pathlib import Path
from dataclasses import dataclass, field
from typing import Mapping

from bot.durations import DurationError, parse_duration


class SettingsError(ValueError):
    """A setting has a value we cannot use; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    # Kubernetes: kubeconfig path (None: KUBECONFIG / ~/.kube/config, or in-cluster config).
    kubeconfig: str | None = None
    context: str | None = None
    namespace: str = "default"
    # Seconds for one API request (connect + read); retries on 429/5xx with exponential backoff.
    request_timeout: float = 10.0
    max_retries: int = 3
    retry_backoff: float = 0.2
    page_size: int = 500
    # Where the Karpenter controller runs (absent on EKS Auto Mode); None: look in kube-system (the
    # upstream default) and then karpenter.
    karpenter_namespace: str | None = None
    karpenter_selector: str = "app.kubernetes.io/name=karpenter"
    log_tail_lines: int = 2000
    # Pods of one job examined in detail; bounds the cost of a diagnosis.
    max_pods_per_job: int = 16
    # AWS: region and EC2 endpoint may also come from the kubeconfig's gpubot.dev/aws extension.
    aws_region: str | None = None
    ec2_endpoint: str | None = None
    # `explain` input bound.
    explain_max_bytes: int = 64 * 1024 * 1024
    # Slack: Socket Mode needs the app token; HTTP mode needs the signing secret.
    slack_bot_token: str | None = None
    slack_app_token: str | None = None
    slack_signing_secret: str | None = None
    slack_api_url: str = "https://slack.com/api/"
    slack_mode: str = "http"
    http_port: int = 3000
    # HTTP edge: connections open at once from one client address, and in all (each past either gets 503).
    # Slack connects from many addresses; behind a proxy that pools connections, all come from its own.
    http_max_connections_per_client: int = 32
    http_max_connections: int = 1024
    # /healthz and /readyz listen here, apart from Slack and Alertmanager, so a flood cannot fail them.
    probe_port: int = 8081
    # channel ID -> default namespace for /gpu commands in that channel
    channel_namespaces: Mapping[str, str] = field(default_factory=dict)
    # Seconds between in-place progress updates of a running diagnosis (at least 3: Slack's chat.update
    # budget is shared with the answers).
    progress_interval: float = 3.0
    # Seconds an answer keeps trying to reach Slack (paced, retried on 429/5xx) before it is logged as lost.
    answer_deadline: float = 900.0
    # This replica's part of Slack's per-method limits (1 / the number of replicas).
    slack_rate_share: float = 1.0
    # Worker processes that run diagnoses for `gpubot serve` (0: threads in the serving process), and
    # the diagnoses each runs at once.
    workers: int = 2
    worker_threads: int = 8
    # Seconds `gpubot serve` lets acknowledged diagnoses finish after SIGTERM before it exits.
    shutdown_grace: float = 20.0
    # Incident store: SQLite file by default, postgresql+psycopg://... in production.
    database_url: str = ""
    # Who may read what from where, who approves (see README "Security model"); None: no policy file,
    # every channel reads everything and remediations are off.
    policy_path: str | None = None
    # Key that signs button values (HMAC-SHA256); None: derived from the Slack signing secret (or app
    # token), so every replica of one app signs alike without another secret to distribute.
    button_key: str | None = None
    # Seconds a button stays usable after its message was posted.
    button_ttl: float = 7 * 24 * 3600.0
    # Socket Mode: seconds between pings; a connection that stops answering is replaced after about four.
    socket_ping_interval: float = 3.0
    # The cluster's name in the policy when gpubot runs in-cluster (kubeconfig contexts name themselves).
    cluster_name: str | None = None
    # Proactive alerts (README "Alerts"). Seconds between sweeps of the leader replica.
    sweep_interval: float = 60.0
    # A GPU pod Pending longer than this many seconds is a problem worth telling on call about.
    sweep_pending_after: float = 600.0
    # Where alerts go when the policy's `alerts:` routes name no channel; None: alerts are not posted.
    alert_channel: str | None = None
    # More new problems than this in one sweep or webhook are posted as one digest message.
    alert_digest_after: int = 10
    # Bearer token Alertmanager sends to POST /alertmanager; None: the endpoint answers 503.
    alertmanager_token: str | None = None
    # Leader election (only the leader sweeps): a coordination.k8s.io/v1 Lease, timings as client-go's.
    lease_name: str = "gpubot-leader"
    lease_namespace: str | None = None  # None: the pod's own namespace (POD_NAMESPACE), else `namespace`
    lease_duration: float = 15.0
    lease_renew_deadline: float = 10.0
    lease_retry_period: float = 2.0
    # This replica's name in the Lease; None: the pod name (POD_NAME) or the host name.
    identity: str | None = None
    # Logs: one JSON object per line ("json") or text for a terminal ("text"), at this level.
    log_format: str = "text"
    log_level: str = "INFO"
    # Seconds after which resolved incidents, alerts and delivery records are pruned (0: keep forever).
    retention_incidents: float = 90 * 86400.0
    retention_alerts: float = 90 * 86400.0
    retention_deliveries: float = 14 * 86400.0
    # Button keys, newest first: the first signs, any verifies (GPUBOT_BUTTON_KEYS; GPUBOT_BUTTON_KEY is one key).
    button_keys: tuple[str, ...] = ()

    def require_slack(self) -> None:
        """Fail at start-up, naming the variable, rather than on the first Slack request."""
        if not self.slack_bot_token:
            raise SettingsError("SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-...) of the app")
        if self.slack_mode == "socket" and not self.slack_app_token:
            raise SettingsError("GPUBOT_SLACK_MODE=socket needs SLACK_APP_TOKEN (an xapp-... token with connections:write)")
        if self.slack_mode == "http" and not self.slack_signing_secret:
            raise SettingsError("HTTP mode needs SLACK_SIGNING_SECRET (Basic Information > App Credentials)")


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number of seconds, got {raw!r}") from None
    if value <= 0:
        raise SettingsError(f"{name} must be positive, got {raw!r}")
    return value


def _int(env: Mapping[str, str], name: str, default: int, *, minimum: int = 0) -> int:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, got {raw!r}")
    return value


def _channel_namespaces(raw: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in (raw or "").split(","):
        if not item.strip():
            continue
        channel, sep, namespace = item.strip().partition("=")
        if not sep or not channel or not namespace:
            raise SettingsError(f"GPUBOT_CHANNEL_NAMESPACES items look like C0123ABC=ml-training, got {item.strip()!r}")
        out[channel.strip()] = namespace.strip()
    return out


def _slack_mode(env: Mapping[str, str]) -> str:
    mode = (env.get("GPUBOT_SLACK_MODE") or ("socket" if env.get("SLACK_APP_TOKEN") else "http")).lower()
    if mode not in ("socket", "http"):
        raise SettingsError(f"GPUBOT_SLACK_MODE must be socket or http, got {mode!r}")
    return mode


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    settings = _read(env)
    _check_lease_timings(settings)
    _check_ports(settings)
    return settings


def _check_ports(s: Settings) -> None:
    if s.probe_port and s.probe_port == s.http_port:
        raise SettingsError(f"GPUBOT_PROBE_PORT must differ from GPUBOT_HTTP_PORT (both {s.http_port}): the probes "
                            "have a port of their own so that traffic on the other cannot fail them")
    if s.http_max_connections_per_client > s.http_max_connections:
        raise SettingsError(f"GPUBOT_HTTP_MAX_CONNECTIONS_PER_CLIENT ({s.http_max_connections_per_client}) cannot "
                            f"exceed GPUBOT_HTTP_MAX_CONNECTIONS ({s.http_max_connections})")


def _check_lease_timings(s: Settings) -> None:
    # The same rule client-go's leaderelection.NewLeaderElector enforces (JitterFactor 1.2): a leader
    # must give up before its lease can expire, and retry more than once before it must give up.
    if not s.lease_duration > s.lease_renew_deadline > 1.2 * s.lease_retry_period:
        raise SettingsError(
            "GPUBOT_LEASE_DURATION must exceed GPUBOT_LEASE_RENEW_DEADLINE, which must exceed 1.2 x "
            f"GPUBOT_LEASE_RETRY_PERIOD (got {s.lease_duration:g} / {s.lease_renew_deadline:g} / "
            f"{s.lease_retry_period:g}; defaults 15 / 10 / 2)")


def _read(env: Mapping[str, str]) -> Settings:
    api_url = env.get("SLACK_API_URL") or "https://slack.com/api/"
    return Settings(
        kubeconfig=env.get("KUBECONFIG") or None,
        context=env.get("GPUBOT_CONTEXT") or None,
        namespace=env.get("GPUBOT_NAMESPACE") or "default",
        request_timeout=_float(env, "GPUBOT_REQUEST_TIMEOUT", 10.0),
        max_retries=_int(env, "GPUBOT_MAX_RETRIES", 3),
        retry_backoff=_float(env, "GPUBOT_RETRY_BACKOFF", 0.2),
        page_size=_int(env, "GPUBOT_PAGE_SIZE", 500, minimum=1),
        karpenter_namespace=env.get("GPUBOT_KARPENTER_NAMESPACE") or None,
        karpenter_selector=env.get("GPUBOT_KARPENTER_SELECTOR") or "app.kubernetes.io/name=karpenter",
        log_tail_lines=_int(env, "GPUBOT_LOG_TAIL_LINES", 2000, minimum=1),
        max_pods_per_job=_int(env, "GPUBOT_MAX_PODS_PER_JOB", 16, minimum=1),
        aws_region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None,
        ec2_endpoint=env.get("AWS_ENDPOINT_URL_EC2") or env.get("AWS_ENDPOINT_URL") or None,
        explain_max_bytes=_int(env, "GPUBOT_EXPLAIN_MAX_BYTES", 64 * 1024 * 1024, minimum=1),
        slack_bot_token=env.get("SLACK_BOT_TOKEN") or None,
        slack_app_token=env.get("SLACK_APP_TOKEN") or None,
        slack_signing_secret=env.get("SLACK_SIGNING_SECRET") or None,
        slack_api_url=api_url if api_url.endswith("/") else api_url + "/",
        slack_mode=_slack_mode(env),
        http_port=_int(env, "GPUBOT_HTTP_PORT", 3000, minimum=0),
        http_max_connections_per_client=_int(env, "GPUBOT_HTTP_MAX_CONNECTIONS_PER_CLIENT", 32, minimum=1),
        http_max_connections=_int(env, "GPUBOT_HTTP_MAX_CONNECTIONS", 1024, minimum=1),
        probe_port=_int(env, "GPUBOT_PROBE_PORT", 8081, minimum=0),
        channel_namespaces=_channel_namespaces(env.get("GPUBOT_CHANNEL_NAMESPACES")),
        progress_interval=_float(env, "GPUBOT_PROGRESS_INTERVAL", 3.0),
        answer_deadline=_float(env, "GPUBOT_ANSWER_DEADLINE", 900.0),
        slack_rate_share=_share(env),
        workers=_int(env, "GPUBOT_WORKERS", 2),
        worker_threads=_int(env, "GPUBOT_WORKER_THREADS", 8, minimum=1),
        shutdown_grace=_float(env, "GPUBOT_SHUTDOWN_GRACE", 20.0),
        database_url=env.get("GPUBOT_DATABASE_URL") or _default_database(env),
        policy_path=env.get("GPUBOT_POLICY") or None,
        button_key=(_button_keys(env) or (None,))[0],
        button_ttl=_float(env, "GPUBOT_BUTTON_TTL", 7 * 24 * 3600.0),
        cluster_name=env.get("GPUBOT_CLUSTER_NAME") or None,
        socket_ping_interval=_float(env, "GPUBOT_SOCKET_PING_INTERVAL", 3.0),
        sweep_interval=_float(env, "GPUBOT_SWEEP_INTERVAL", 60.0),
        sweep_pending_after=_float(env, "GPUBOT_SWEEP_PENDING_AFTER", 600.0),
        alert_channel=env.get("GPUBOT_ALERT_CHANNEL") or None,
        alert_digest_after=_int(env, "GPUBOT_ALERT_DIGEST_AFTER", 10, minimum=1),
        alertmanager_token=env.get("GPUBOT_ALERTMANAGER_TOKEN") or None,
        lease_name=env.get("GPUBOT_LEASE_NAME") or "gpubot-leader",
        lease_namespace=env.get("GPUBOT_LEASE_NAMESPACE") or env.get("POD_NAMESPACE") or None,
        lease_duration=_float(env, "GPUBOT_LEASE_DURATION", 15.0),
        lease_renew_deadline=_float(env, "GPUBOT_LEASE_RENEW_DEADLINE", 10.0),
        lease_retry_period=_float(env, "GPUBOT_LEASE_RETRY_PERIOD", 2.0),
        identity=env.get("POD_NAME") or None,
        log_format=_choice(env, "GPUBOT_LOG_FORMAT", "text", ("text", "json")),
        log_level=_choice(env, "GPUBOT_LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")).upper(),
        retention_incidents=_retention(env, "GPUBOT_RETENTION_INCIDENTS", 90 * 86400.0),
        retention_alerts=_retention(env, "GPUBOT_RETENTION_ALERTS", 90 * 86400.0),
        retention_deliveries=_retention(env, "GPUBOT_RETENTION_DELIVERIES", 14 * 86400.0),
        button_keys=_button_keys(env),
    )


def _choice(env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = (env.get(name) or default).strip()
    for choice in choices:
        if raw.lower() == choice.lower():
            return choice
    raise SettingsError(f"{name} must be one of {', '.join(choices)}, got {raw!r}")


def _retention(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        value = parse_duration(raw, name=name, bare_seconds=True).total_seconds()
    except DurationError as exc:
        raise SettingsError(f"{exc} (0 keeps forever)") from None
    if value < 0:
        raise SettingsError(f"{name} cannot be negative (0 keeps forever), got {raw!r}")
    return value


def _button_keys(env: Mapping[str, str]) -> tuple[str, ...]:
    """GPUBOT_BUTTON_KEYS, newest first; else GPUBOT_BUTTON_KEY alone; else () (derived from the signing secret)."""
    raw = env.get("GPUBOT_BUTTON_KEYS") or ""
    keys = tuple(key.strip() for key in raw.split(",") if key.strip())
    if not keys:
        single = _button_key(env)
        return (single,) if single else ()
    for position, key in enumerate(keys, 1):
        if len(key) < 32:
            raise SettingsError(f"GPUBOT_BUTTON_KEYS: key {position} (newest first) must be at least 32 characters "
                                "(e.g. `openssl rand -hex 32`)")
    return keys


def _share(env: Mapping[str, str]) -> float:
    share = _float(env, "GPUBOT_SLACK_RATE_SHARE", 1.0)
    if share > 1:
        raise SettingsError(f"GPUBOT_SLACK_RATE_SHARE is this replica's part of Slack's limits, at most 1, got {share:g}"
                            " (with 2 replicas: 0.5)")
    return share


def _button_key(env: Mapping[str, str]) -> str | None:
    raw = env.get("GPUBOT_BUTTON_KEY") or None
    if raw is not None and len(raw) < 32:
        raise SettingsError("GPUBOT_BUTTON_KEY must be at least 32 characters (e.g. `openssl rand -hex 32`)")
    return raw


def _default_database(env: Mapping[str, str]) -> str:
    state = Path(env.get("XDG_STATE_HOME") or Path(env.get("HOME") or Path.home()) / ".local" / "state") / "gpubot"
    return f"sqlite:///{state / 'gpubot.db'}"
