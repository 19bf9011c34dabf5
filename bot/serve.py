"""``gpubot serve``: the Slack bot in Socket Mode (no public URL needed) or HTTP mode."""
from __future__ import annotations

import logging
import os
import signal
import sys
import threading

from bot.settings import Settings

log = logging.getLogger("gpubot")


def run(settings: Settings) -> int:
    from bot.app import create_app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    app = create_app(settings)
    if settings.slack_mode == "socket":
        log.info("gpubot: connecting to Slack in Socket Mode")
        socket_mode_handler(app, settings).start()
        return 0
    from bot.http_server import SlackHttpServer

    server = SlackHttpServer(app, port=settings.http_port)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    print(f"gpubot: listening for Slack on http://0.0.0.0:{server.port}/slack/events", file=sys.stderr, flush=True)
    stop.wait()
    log.info("gpubot: stopping; diagnoses in progress are abandoned (Slack users can press Re-run)")
    server.stop()
    sys.stdout.flush()
    # Lazy listeners run on non-daemon pool threads; waiting for a queue of diagnoses would delay a
    # rolling update by minutes. Requests already acknowledged are safe to drop.
    os._exit(0)


def socket_mode_handler(app, settings: Settings):
    """Bolt's Socket Mode handler; it opens the connection through app.client, so SLACK_API_URL applies."""
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    return SocketModeHandler(app, settings.slack_app_token)
