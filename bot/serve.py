"""``gpubot serve``: the Slack bot in Socket Mode (no public URL needed) or HTTP mode."""
from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from typing import Callable, TypeVar

from bot.edge import probes as probe_module
from bot.edge.probes import ProbeServer, Readiness
from bot.errors import SlackAuthFailed, UserError
from bot.http_server import SlackHttpServer
from bot.logs import configure_logging
from bot.observe import counted_webhook, serving_readiness
from bot.render import charts
from bot.settings import Settings
from bot.workers import WorkerPool
from bot.workpool import WorkPool

log = logging.getLogger("gpubot")
T = TypeVar("T")


def _schema_is_current(settings: Settings) -> None:
    from bot.store import check_current, make_engine

    engine = make_engine(settings.database_url)
    try:
        check_current(engine)
    finally:
        engine.dispose()


def run(settings: Settings) -> int:
    from bot.alerts.runtime import Alerts, cluster_name
    from bot.app import build_app, work_pool

    configure_logging(settings)
    log.info("gpubot: %s", check_policy(settings))
    _schema_is_current(settings)  # before worker processes start: each would fail on it with a traceback
    ready = Starting("starting: waiting for Slack to answer auth.test")
    probes = _listening(lambda: ProbeServer(ready=ready, port=settings.probe_port),
                        "GPUBOT_PROBE_PORT", settings.probe_port)
    probes.start()  # /healthz from here: a pod waiting for Slack is alive, and must not be restarted for it
    if settings.workers == 0:  # else charts are drawn in the worker processes, and each warms its own
        charts.warm_up_in_background()  # matplotlib's first chart costs seconds: paid now, not by /gpu nodes
    try:
        _slack_accepts_token(settings)
        ready.waiting = "starting"
        workers = None
        if settings.workers > 0:
            from bot.workers import WorkerPool

            workers = WorkerPool(settings, processes=settings.workers, threads=settings.worker_threads).start()
            log.info("gpubot: diagnoses run in %d worker processes, %d at a time each", settings.workers,
                     settings.worker_threads)
        app, deps = build_app(settings, workers=workers)
        alerts = Alerts(settings, deps.service, deps.store.engine, app.client, deps.signer,
                        cluster=cluster_name(deps.service)).start()
        routes = {"/alertmanager": counted_webhook(alerts.endpoint.handle)}
        # In Socket Mode Slack comes over the WebSocket; Alertmanager still needs the port.
        server = _listening(lambda: SlackHttpServer(app if settings.slack_mode == "http" else None,
                                                    port=settings.http_port, routes=routes,
                                                    max_connections=settings.http_max_connections,
                                                    max_connections_per_client=settings.http_max_connections_per_client,
                                                    trusted_proxies=settings.trusted_proxies),
                            "GPUBOT_HTTP_PORT", settings.http_port)
    except BaseException:
        probes.stop()
        raise
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    ready.current = serving_readiness(server=server, app=app, deps=deps, alerts=alerts, workers=workers)
    server.start()
    if settings.slack_mode == "socket":
        handler = socket_mode_handler(app, settings)
        handler.connect()
        log.info("gpubot: connected to Slack in Socket Mode; /alertmanager on port %d, probes on port %d",
                 server.port, probes.port)
        _until_set(stop)
        handler.close()  # no new envelopes; Slack sends them to another connection
    else:
        print(f"gpubot: listening for Slack on http://0.0.0.0:{server.port}/slack/events; "
              f"/healthz and /readyz on port {probes.port}", file=sys.stderr, flush=True)
        _until_set(stop)
    server.stop()  # from here /readyz answers 503: the Service sends new requests elsewhere
    alerts.stop()
    _finish_work(workers if workers is not None else work_pool(app), settings.shutdown_grace)
    probes.stop()  # last: the kubelet sees a live process while the diagnoses finish
    sys.stdout.flush()
    sys.stderr.flush()
    # Lazy listeners run on non-daemon pool threads; an interpreter exit would wait for them without
    # limit. Whatever outlived the grace period is dropped on purpose.
    os._exit(0)


def _until_set(stop: threading.Event) -> None:
    """Wait for SIGTERM/SIGINT. Python runs signal handlers only in the main thread, between bytecodes: a
    signal the kernel hands to another thread leaves a main thread blocked in an untimed wait asleep, so
    the wait wakes twice a second to let a pending handler run."""
    while not stop.wait(0.5):
        pass


class Starting(Readiness):
    """/readyz while ``gpubot serve`` starts: not ready (saying what it waits on) until the serving
    process's own checks exist, then theirs. The probe port opens first so /healthz answers while
    start-up waits on Slack."""

    def __init__(self, waiting: str) -> None:  # no checks of its own: nothing to set up in Readiness
        self.waiting = waiting
        self.current: Readiness | None = None

    def reason(self) -> str | None:
        current = self.current
        return current.reason() if current is not None else self.waiting


def _slack_accepts_token(settings: Settings) -> None:
    """``auth.test`` before anything is built on the token: Bolt's own check would end start-up with
    a BoltError traceback, and an unreachable Slack would keep it waiting without a word."""
    from bot.slack_token import CONNECT_DEADLINE_S, verify_bot_token

    settings.require_slack()  # which token is missing, named before any call is made
    deadline = settings.slack_connect_deadline
    mark = getattr(probe_module, "mark_slack_auth", None)
    try:
        who = verify_bot_token(settings.slack_bot_token or "", api_url=settings.slack_api_url, deadline=deadline)
    except SlackAuthFailed as exc:
        if mark is not None:
            mark(False, str(exc))
        raise
    if mark is not None:
        mark(True)
    log.info("gpubot: Slack accepts the bot token (team %s, bot user %s)", who.get("team"), who.get("user"))
    if settings.slack_mode == "socket":
        # Bolt's Socket Mode handler would retry a refused app token for ever, saying little.
        from bot.slack_token import verify_app_token

        verify_app_token(settings.slack_app_token or "", api_url=settings.slack_api_url, deadline=deadline)
        log.info("gpubot: Slack accepts the app-level token (Socket Mode)")


def _listening(make: "Callable[[], T]", variable: str, port: int) -> "T":
    """A server bound to its port, or one line naming the setting to change."""
    try:
        return make()
    except OSError as exc:
        raise UserError(f"cannot listen on port {port} ({exc.strerror or exc}): another process holds it; "
                        f"set {variable} to a free port") from None


def check_policy(settings: Settings) -> str:
    """Read the policy file once before anything listens, so an invalid one stops start-up with its line
    and reason (PolicyError, exit 2); the app reads and reloads its own from the same settings."""
    from bot.policy import PolicySource

    return PolicySource.from_settings(settings).describe()


def _finish_work(pool: "WorkPool | WorkerPool", grace: float) -> None:
    """Let acknowledged diagnoses post their answers before the process goes, up to ``grace`` seconds."""
    unfinished = pool.unfinished
    finished = pool.stop if isinstance(pool, WorkerPool) else pool.wait_idle
    if not unfinished:
        finished(0.0)
        log.info("gpubot: stopped")
        return
    log.info("gpubot: stopping; letting %d diagnoses in progress finish (up to %g s)", unfinished, grace)
    if finished(grace):
        log.info("gpubot: stopped after the diagnoses in progress finished")
    else:
        log.warning("gpubot: %d diagnoses still running after %g s were abandoned "
                    "(their users can run the command again)", pool.unfinished, grace)


def socket_mode_handler(app, settings: Settings):
    """Bolt's Socket Mode handler; it opens the connection through app.client, so SLACK_API_URL applies."""
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    # Bolt pings every 10 s and replaces a connection silent for four pings or erroring on five: a
    # dropped WebSocket went unnoticed for most of a minute. Reconnecting is on (Bolt's default).
    return SocketModeHandler(app, settings.slack_app_token, ping_interval=settings.socket_ping_interval,
                             auto_reconnect_enabled=True)
