"""Typed settings, read from the environment once by whoever starts the program (CLI, app factory).

Each field of ``Settings`` carries its environment variable(s), a one-line help and its parser, so the
loader, ``gpubot serve --help`` and the README's table are generated from this one model
(bot/settings_help.py). A frozen dataclass rather than pydantic-settings: several variables have
fallbacks outside the GPUBOT_ prefix (AWS_DEFAULT_REGION, POD_NAMESPACE), defaults computed from other
variables (the Slack mode, the SQLite path) and one-line errors that name the variable and what to do;
pydantic-settings would need a custom source and an error translator for each of those.
"""
from __future__ import annotations

import ipaddress
import os
from dataclasses import MISSING, dataclass, field, fields
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Mapping

from bot.durations import DurationError, format_duration, parse_duration


class SettingsError(ValueError):
    """A setting has a value we cannot use; the message names the variable."""


Parser = Callable[[str, str], Any]


def _text(raw: str, name: str) -> str:
    return raw


def _seconds(raw: str, name: str) -> float:
    """A positive duration (``90s``, ``1h30m``, ``7d``) or, as before durations were read, plain seconds."""
    try:
        value = parse_duration(raw, name=name, bare_seconds=True).total_seconds()
    except DurationError as exc:
        raise SettingsError(str(exc)) from None
    if value <= 0:
        raise SettingsError(f"{name} must be positive, got {raw!r}")
    return value


def _retention(raw: str, name: str) -> float:
    try:
        value = parse_duration(raw, name=name, bare_seconds=True).total_seconds()
    except DurationError as exc:
        raise SettingsError(f"{exc} (0 keeps forever)") from None
    if value < 0:
        raise SettingsError(f"{name} cannot be negative (0 keeps forever), got {raw!r}")
    return value


def _integer(minimum: int = 0) -> Parser:
    def parse(raw: str, name: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise SettingsError(f"{name} must be an integer, got {raw!r}") from None
        if value < minimum:
            raise SettingsError(f"{name} must be at least {minimum}, got {raw!r}")
        return value
    return parse


def _choice(*choices: str) -> Parser:
    def parse(raw: str, name: str) -> str:
        for choice in choices:
            if raw.strip().lower() == choice.lower():
                return choice
        raise SettingsError(f"{name} must be one of {', '.join(choices)}, got {raw.strip()!r}")
    return parse


def _slack_mode(raw: str, name: str) -> str:
    if raw.lower() not in ("socket", "http"):
        raise SettingsError(f"GPUBOT_SLACK_MODE must be socket or http, got {raw.lower()!r}")
    return raw.lower()


def _api_url(raw: str, name: str) -> str:
    return raw if raw.endswith("/") else raw + "/"


def _share(raw: str, name: str) -> float:
    try:
        share = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {raw!r}") from None
    if share <= 0:
        raise SettingsError(f"{name} must be positive, got {raw!r}")
    if share > 1:
        raise SettingsError(f"GPUBOT_SLACK_RATE_SHARE is this replica's part of Slack's limits, at most 1, got {share:g}"
                            " (with 2 replicas: 0.5)")
    return share


def _channel_namespaces(raw: str, name: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in raw.split(","):
        if not item.strip():
            continue
        channel, sep, namespace = item.strip().partition("=")
        if not sep or not channel or not namespace:
            raise SettingsError(f"GPUBOT_CHANNEL_NAMESPACES items look like C0123ABC=ml-training, got {item.strip()!r}")
        out[channel.strip()] = namespace.strip()
    return out


def _button_key(raw: str, name: str) -> str:
    if len(raw) < 32:
        raise SettingsError("GPUBOT_BUTTON_KEY must be at least 32 characters (e.g. `openssl rand -hex 32`)")
    return raw


def _button_keys(raw: str, name: str) -> tuple[str, ...]:
    keys = tuple(key.strip() for key in raw.split(",") if key.strip())
    for position, key in enumerate(keys, 1):
        if key.startswith("hex:"):  # a derived key kept through a rotation of the signing secret
            try:
                raw = bytes.fromhex(key[4:])
            except ValueError:
                raise SettingsError(f"GPUBOT_BUTTON_KEYS: key {position} starts with hex: but is not hexadecimal "
                                    "(`gpubot doctor --derived-button-key` prints the derived key)") from None
            if len(raw) < 32:
                raise SettingsError(f"GPUBOT_BUTTON_KEYS: key {position} is {len(raw)} bytes of hex; a key needs 32")
        elif len(key) < 32:
            raise SettingsError(f"GPUBOT_BUTTON_KEYS: key {position} (newest first) must be at least 32 characters "
                                "(e.g. `openssl rand -hex 32`)")
    return keys


def _networks(raw: str, name: str) -> tuple[str, ...]:
    networks = []
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise SettingsError(f"{name}: {item!r} is not an address or CIDR range (e.g. 10.0.0.0/16)") from None
    return tuple(networks)


def _default_database(env: Mapping[str, str]) -> str:
    state = Path(env.get("XDG_STATE_HOME") or Path(env.get("HOME") or Path.home()) / ".local" / "state") / "gpubot"
    return f"sqlite:///{state / 'gpubot.db'}"


def setting(default: Any = None, *, env: str | tuple[str, ...], help: str, parse: Parser = _text,
            default_from: Callable[[Mapping[str, str]], Any] | None = None, shown: str | None = None) -> Any:
    """A Settings field with what the loader and the help need: variable names (the first that is set
    wins), a one-line help, the parser, and a default computed from the environment where it has one."""
    names = (env,) if isinstance(env, str) else env
    metadata = {"env": names, "help": help, "parse": parse, "default_from": default_from, "shown": shown}
    if isinstance(default, dict):
        return field(default_factory=dict, metadata=metadata)
    return field(default=default, metadata=metadata)


_DAY = 86400.0


@dataclass(frozen=True)
class Settings:
    kubeconfig: str | None = setting(env="KUBECONFIG", help="kubeconfig file(s); unset: ~/.kube/config or the in-cluster service account")
    context: str | None = setting(env="GPUBOT_CONTEXT", help="kubeconfig context (cluster); unset: the current context")
    namespace: str = setting("default", env="GPUBOT_NAMESPACE", help="namespace commands read when they name none")
    request_timeout: float = setting(10.0, env="GPUBOT_REQUEST_TIMEOUT", parse=_seconds, help="time for one Kubernetes API call, its retries included; a hung server is reported after it")
    max_retries: int = setting(3, env="GPUBOT_MAX_RETRIES", parse=_integer(0), help="retries of a Kubernetes request on 429/5xx, with exponential backoff")
    retry_backoff: float = setting(0.2, env="GPUBOT_RETRY_BACKOFF", parse=_seconds, help="first backoff between those retries (doubles each time)")
    page_size: int = setting(500, env="GPUBOT_PAGE_SIZE", parse=_integer(1), help="objects per list page")
    karpenter_namespace: str | None = setting(env="GPUBOT_KARPENTER_NAMESPACE", help="where the Karpenter controller runs; unset: kube-system, then karpenter (absent on EKS Auto Mode)")
    karpenter_selector: str = setting("app.kubernetes.io/name=karpenter", env="GPUBOT_KARPENTER_SELECTOR", help="label selector of the Karpenter controller pods")
    log_tail_lines: int = setting(2000, env="GPUBOT_LOG_TAIL_LINES", parse=_integer(1), help="container log lines read per container")
    max_pods_per_job: int = setting(16, env="GPUBOT_MAX_PODS_PER_JOB", parse=_integer(1), help="pods of one job examined in detail (bounds the cost of a diagnosis)")
    aws_region: str | None = setting(env=("AWS_REGION", "AWS_DEFAULT_REGION"), help="AWS region; unset: the kubeconfig's gpubot.dev/aws extension")
    ec2_endpoint: str | None = setting(env=("AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL"), help="EC2 endpoint; unset: the region's")
    explain_max_bytes: int = setting(64 * 1024 * 1024, env="GPUBOT_EXPLAIN_MAX_BYTES", parse=_integer(1), help="largest input `explain` reads, in bytes")
    slack_bot_token: str | None = setting(env="SLACK_BOT_TOKEN", help="Bot User OAuth Token (xoxb-...)")
    slack_app_token: str | None = setting(env="SLACK_APP_TOKEN", help="app-level token (xapp-..., connections:write), Socket Mode only")
    slack_signing_secret: str | None = setting(env="SLACK_SIGNING_SECRET", help="signing secret, HTTP mode (Basic Information > App Credentials)")
    slack_api_url: str = setting("https://slack.com/api/", env="SLACK_API_URL", parse=_api_url, help="Slack Web API base URL")
    slack_mode: str = setting("http", env="GPUBOT_SLACK_MODE", parse=_slack_mode, shown="socket if SLACK_APP_TOKEN is set, else http",
                              default_from=lambda env: "socket" if env.get("SLACK_APP_TOKEN") else "http", help="socket or http")
    http_port: int = setting(3000, env="GPUBOT_HTTP_PORT", parse=_integer(0), help="port for Slack events, interactivity and /alertmanager (HTTP mode)")
    http_max_connections_per_client: int = setting(32, env="GPUBOT_HTTP_MAX_CONNECTIONS_PER_CLIENT", parse=_integer(1), help="connections open at once from one client address (past it: 503)")
    http_max_connections: int = setting(1024, env="GPUBOT_HTTP_MAX_CONNECTIONS", parse=_integer(1), help="connections open at once in all (past it, a new one takes the slot of the longest idle; 503 when none can give way)")
    trusted_proxies: tuple[str, ...] = setting((), env="GPUBOT_TRUSTED_PROXIES", parse=_networks, help="CIDR ranges of proxies in front of the HTTP port (an ALB's subnets), comma-separated: client addresses come from their X-Forwarded-For, and they have no per-address connection limit")
    probe_port: int = setting(8081, env="GPUBOT_PROBE_PORT", parse=_integer(0), help="port of /healthz, /readyz and /metrics, apart so that a flood cannot fail them (0: none)")
    channel_namespaces: Mapping[str, str] = setting({}, env="GPUBOT_CHANNEL_NAMESPACES", parse=_channel_namespaces, help="default namespace per channel: C0123ABC=ml-training,C0456DEF=research")
    progress_interval: float = setting(3.0, env="GPUBOT_PROGRESS_INTERVAL", parse=_seconds, help="time between progress updates of a running diagnosis (Slack's chat.update budget)")
    answer_deadline: float = setting(900.0, env="GPUBOT_ANSWER_DEADLINE", parse=_seconds, help="how long an answer keeps trying to reach Slack before it is logged as lost")
    slack_rate_share: float = setting(1.0, env="GPUBOT_SLACK_RATE_SHARE", parse=_share, help="this replica's part of Slack's per-method limits (1 / replicas)")
    workers: int = setting(2, env="GPUBOT_WORKERS", parse=_integer(0), help="worker processes running diagnoses (0: threads in the serving process)")
    worker_threads: int = setting(8, env="GPUBOT_WORKER_THREADS", parse=_integer(1), help="diagnoses each worker runs at once")
    shutdown_grace: float = setting(20.0, env="GPUBOT_SHUTDOWN_GRACE", parse=_seconds, help="time acknowledged diagnoses get to finish after SIGTERM")
    database_url: str = setting("", env="GPUBOT_DATABASE_URL", default_from=_default_database, shown="sqlite:///$XDG_STATE_HOME/gpubot/gpubot.db",
                                help="incident store: postgresql+psycopg://... in production")
    policy_path: str | None = setting(env="GPUBOT_POLICY", help="policy file (README \"Security model\"); unset: every channel reads everything, remediations off")
    button_key: str | None = setting(env="GPUBOT_BUTTON_KEY", parse=_button_key, help="one key (32+ characters) signing button values; unset: derived from the signing secret")
    button_keys: tuple[str, ...] = setting((), env="GPUBOT_BUTTON_KEYS", parse=_button_keys, help="button keys, newest first, comma-separated: the first signs, any verifies (rotation)")
    button_ttl: float = setting(7 * _DAY, env="GPUBOT_BUTTON_TTL", parse=_seconds, help="how long a button stays usable after its message was posted")
    socket_ping_interval: float = setting(3.0, env="GPUBOT_SOCKET_PING_INTERVAL", parse=_seconds, help="Socket Mode ping interval; a silent connection is replaced after about four")
    cluster_name: str | None = setting(env="GPUBOT_CLUSTER_NAME", help="the cluster's name in the policy when running in-cluster")
    sweep_interval: float = setting(60.0, env="GPUBOT_SWEEP_INTERVAL", parse=_seconds, help="time between the leader's sweeps for problems")
    sweep_pending_after: float = setting(600.0, env="GPUBOT_SWEEP_PENDING_AFTER", parse=_seconds, help="a GPU pod Pending longer than this is a problem worth an alert")
    alert_channel: str | None = setting(env="GPUBOT_ALERT_CHANNEL", help="channel for alerts the policy routes nowhere; unset: not posted")
    alert_digest_after: int = setting(10, env="GPUBOT_ALERT_DIGEST_AFTER", parse=_integer(1), help="more new problems than this at once are posted as one digest")
    alertmanager_token: str | None = setting(env="GPUBOT_ALERTMANAGER_TOKEN", help="bearer token Alertmanager sends to POST /alertmanager; unset: 503")
    alertmanager_rate: int = setting(120, env="GPUBOT_ALERTMANAGER_RATE", parse=_integer(1), help="webhook requests a minute the Alertmanager token may send to one replica, in bursts of as many (past it: 429 with Retry-After)")
    alertmanager_inbox_rows: int = setting(500, env="GPUBOT_ALERTMANAGER_INBOX_ROWS", parse=_integer(1), help="Alertmanager bodies stored and not yet handled, all replicas together (past it: 429 with Retry-After)")
    alertmanager_inbox_bytes: int = setting(32 * 1024 * 1024, env="GPUBOT_ALERTMANAGER_INBOX_BYTES", parse=_integer(1), help="bytes of Alertmanager bodies stored and not yet handled, all replicas together (past it: 429 with Retry-After; an empty inbox takes one body of any size)")
    lease_name: str = setting("gpubot-leader", env="GPUBOT_LEASE_NAME", help="leader election Lease (coordination.k8s.io/v1)")
    lease_namespace: str | None = setting(env=("GPUBOT_LEASE_NAMESPACE", "POD_NAMESPACE"), help="namespace of the Lease; unset: GPUBOT_NAMESPACE")
    lease_duration: float = setting(15.0, env="GPUBOT_LEASE_DURATION", parse=_seconds, help="Lease duration (client-go's leaderelection timings)")
    lease_renew_deadline: float = setting(10.0, env="GPUBOT_LEASE_RENEW_DEADLINE", parse=_seconds, help="the leader gives up after failing to renew this long")
    lease_retry_period: float = setting(2.0, env="GPUBOT_LEASE_RETRY_PERIOD", parse=_seconds, help="time between tries to take or renew the Lease")
    identity: str | None = setting(env="POD_NAME", help="this replica's name in the Lease; unset: the host name")
    log_format: str = setting("text", env="GPUBOT_LOG_FORMAT", parse=_choice("text", "json"), help="text, or json (one object per line)")
    log_level: str = setting("INFO", env="GPUBOT_LOG_LEVEL", parse=_choice("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), help="DEBUG, INFO, WARNING, ERROR or CRITICAL")
    retention_incidents: float = setting(90 * _DAY, env="GPUBOT_RETENTION_INCIDENTS", parse=_retention, help="resolved incidents older than this are pruned (0: kept forever)")
    retention_alerts: float = setting(90 * _DAY, env="GPUBOT_RETENTION_ALERTS", parse=_retention, help="resolved alerts older than this are pruned (0: kept forever)")
    slack_connect_deadline: float = setting(120.0, env="GPUBOT_SLACK_CONNECT_DEADLINE", parse=_seconds, help="how long `gpubot serve` retries a Slack that does not answer at start before it exits 3")
    prometheus_url: str | None = setting(env="GPUBOT_PROMETHEUS_URL", help="Prometheus with the DCGM exporter's metrics; set: diagnoses add the GPUs' utilisation and memory over the last hour")
    retention_deliveries: float = setting(14 * _DAY, env="GPUBOT_RETENTION_DELIVERIES", parse=_retention, help="delivery records older than this are pruned (0: kept forever)")

    def require_slack(self) -> None:
        """Fail at start-up, naming the variable, rather than on the first Slack request."""
        if not self.slack_bot_token:
            raise SettingsError("SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-...) of the app")
        if self.slack_mode == "socket" and not self.slack_app_token:
            raise SettingsError("GPUBOT_SLACK_MODE=socket needs SLACK_APP_TOKEN (an xapp-... token with connections:write)")
        if self.slack_mode == "http" and not self.slack_signing_secret:
            raise SettingsError("HTTP mode needs SLACK_SIGNING_SECRET (Basic Information > App Credentials)")


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    settings = _read(env)
    _check_lease_timings(settings)
    _check_ports(settings)
    return settings


def _read(env: Mapping[str, str]) -> Settings:
    values: dict[str, Any] = {}
    for spec in fields(Settings):
        meta = spec.metadata
        name = next((n for n in meta["env"] if env.get(n)), None)
        if name is not None:
            values[spec.name] = meta["parse"](env[name], name)
        elif meta["default_from"] is not None:
            values[spec.name] = meta["default_from"](env)
    if not values.get("button_keys") and values.get("button_key"):
        values["button_keys"] = (values["button_key"],)
    if values.get("button_keys"):
        values["button_key"] = values["button_keys"][0]  # the signing key: newest first
    return Settings(**values)


def shown_default(spec) -> str:
    """The default of a Settings field as the help and the README show it."""
    meta = spec.metadata
    if meta["shown"]:
        return meta["shown"]
    default = spec.default if spec.default_factory is MISSING else spec.default_factory()
    if meta["parse"] in (_seconds, _retention):
        return format_duration(timedelta(seconds=default)) if default else "0"
    if default in (None, "", (), {}):
        return "unset"
    return str(default)


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
