"""``gpubot serve``: the Slack bot in Socket Mode (no public URL needed) or HTTP mode."""
from __future__ import annotations

import logging
import os
import signal
import sys
import threading

from bot.settings import Settings
from bot.workers import WorkerPool
from bot.workpool import WorkPool

log = logging.getLogger("gpubot")


def run(settings: Settings) -> int:
    from bot.alerts.runtime import Alerts, cluster_name
    from bot.app import build_app, work_pool

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    log.info("gpubot: %s", check_policy(settings))
    workers = None
    if settings.workers > 0:
        from bot.workers import WorkerPool

        workers = WorkerPool(settings, processes=settings.workers, threads=settings.worker_threads).start()
        log.info("gpubot: diagnoses run in %d worker processes, %d at a time each", settings.workers,
                 settings.worker_threads)
    app, deps = build_app(settings, workers=workers)
    alerts = Alerts(settings, deps.service, deps.store.engine, app.client, deps.signer,
                    cluster=cluster_name(deps.service)).start()
    routes = {"/alertmanager": alerts.endpoint.handle}
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    if settings.slack_mode == "socket":
        from bot.http_server import SlackHttpServer

        # Slack comes over the WebSocket; Alertmanager and the probes still need a port.
        server = SlackHttpServer(None, port=settings.http_port, routes=routes).start()
        handler = socket_mode_handler(app, settings)
        handler.connect()
        log.info("gpubot: connected to Slack in Socket Mode; /alertmanager and /healthz on port %d", server.port)
        stop.wait()
        handler.close()  # no new envelopes; Slack sends them to another connection
        server.stop()
    else:
        from bot.http_server import SlackHttpServer

        server = SlackHttpServer(app, port=settings.http_port, routes=routes).start()
        print(f"gpubot: listening for Slack on http://0.0.0.0:{server.port}/slack/events", file=sys.stderr, flush=True)
        stop.wait()
        server.stop()
    alerts.stop()
    _finish_work(workers if workers is not None else work_pool(app), settings.shutdown_grace)
    sys.stdout.flush()
    sys.stderr.flush()
    # Lazy listeners run on non-daemon pool threads; an interpreter exit would wait for them without
    # limit. Whatever outlived the grace period is dropped on purpose.
    os._exit(0)


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
