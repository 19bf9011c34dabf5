"""``gpubot serve``: the Slack bot in Socket Mode (no public URL needed) or HTTP mode."""
from __future__ import annotations

import logging
import os
import signal
import sys
import threading

from bot.settings import Settings
from bot.workpool import WorkPool

log = logging.getLogger("gpubot")


def run(settings: Settings) -> int:
    from bot.app import create_app, work_pool

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    log.info("gpubot: %s", check_policy(settings))
    app = create_app(settings)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    if settings.slack_mode == "socket":
        handler = socket_mode_handler(app, settings)
        handler.connect()
        log.info("gpubot: connected to Slack in Socket Mode")
        stop.wait()
        handler.close()  # no new envelopes; Slack sends them to another connection
    else:
        from bot.http_server import SlackHttpServer

        server = SlackHttpServer(app, port=settings.http_port).start()
        print(f"gpubot: listening for Slack on http://0.0.0.0:{server.port}/slack/events", file=sys.stderr, flush=True)
        stop.wait()
        server.stop()
    _finish_work(work_pool(app), settings.shutdown_grace)
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


def _finish_work(pool: WorkPool, grace: float) -> None:
    """Let acknowledged diagnoses post their answers before the process goes, up to ``grace`` seconds."""
    unfinished = pool.unfinished
    if not unfinished:
        log.info("gpubot: stopped")
        return
    log.info("gpubot: stopping; letting %d diagnoses in progress finish (up to %g s)", unfinished, grace)
    if pool.wait_idle(grace):
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
