"""HTTP mode: Slack's requests (commands, events, interactivity) at ``POST /slack/events``.

A threaded server so one slow request never delays another's acknowledgement. Bolt verifies each
request's signature and refuses timestamps older than five minutes; this layer also refuses an exact
replay of a request already seen within that window.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

from slack_bolt import App, BoltRequest

log = logging.getLogger(__name__)
MAX_BODY = 1024 * 1024  # Slack payloads are far smaller; a bigger body is not from Slack
REPLAY_WINDOW = 5 * 60


class ReplayGuard:
    def __init__(self) -> None:
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def first_time(self, timestamp: str, signature: str) -> bool:
        now = time.time()
        key = f"{timestamp}:{signature}"
        with self._lock:
            if len(self._seen) > 10_000:
                self._seen = {k: t for k, t in self._seen.items() if now - t < REPLAY_WINDOW}
            if key in self._seen:
                return False
            self._seen[key] = now
            return True


def make_handler(app: App, guard: ReplayGuard) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, fmt: str, *args) -> None:
            log.debug("%s " + fmt, self.address_string(), *args)

        def _send(self, status: int, body: str, headers: dict | None = None) -> None:
            payload = body.encode("utf-8")
            self.send_response(status)
            for name, values in (headers or {}).items():
                for value in values if isinstance(values, list) else [values]:
                    if name.lower() != "content-length":
                        self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            if urlparse(self.path).path in ("/healthz", "/readyz"):
                self._send(200, "ok", {"Content-Type": "text/plain"})
            else:
                self._send(404, "not found", {"Content-Type": "text/plain"})

        def do_POST(self) -> None:
            url = urlparse(self.path)
            if url.path != "/slack/events":
                self._send(404, "not found", {"Content-Type": "text/plain"})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY:
                # The body is left unread, so the connection cannot carry another request.
                self.close_connection = True
                status, error = (413, "request too large") if length > MAX_BODY else (400, "bad Content-Length")
                self._send(status, json.dumps({"error": error}), {"Content-Type": "application/json",
                                                                  "Connection": "close"})
                return
            body = self.rfile.read(length).decode("utf-8", errors="replace")
            timestamp = self.headers.get("X-Slack-Request-Timestamp", "")
            signature = self.headers.get("X-Slack-Signature", "")
            if signature and not guard.first_time(timestamp, signature):
                self._send(401, json.dumps({"error": "replayed request"}), {"Content-Type": "application/json"})
                return
            headers = {k.lower(): [v] for k, v in self.headers.items()}
            response = app.dispatch(BoltRequest(body=body, query=url.query, headers=headers))
            self._send(response.status, response.body, response.headers)

    return Handler


class _Server(ThreadingHTTPServer):
    # Python's default backlog of 5 resets connections when Slack sends a burst of requests.
    request_queue_size = 128
    daemon_threads = True


class SlackHttpServer:
    def __init__(self, app: App, *, host: str = "0.0.0.0", port: int = 3000) -> None:
        self._server = _Server((host, port), make_handler(app, ReplayGuard()))
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def start(self) -> "SlackHttpServer":
        self._thread = threading.Thread(target=self._server.serve_forever, name="gpubot-http", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
