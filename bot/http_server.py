"""HTTP mode: Slack's requests (commands, events, interactivity) at ``POST /slack/events``.

A threaded server so one slow request never delays another's acknowledgement, hardened for traffic
that is not Slack's:
- every request is checked here before Bolt sees it: one value per signature header (the one Bolt
  reads), a numeric timestamp within five minutes, a valid signature, then not a replay (bot/replay.py);
  only a request that passed all of these reaches Bolt, which checks the signature again;
- malformed framing (Content-Length, timestamp) is answered 400 with one line (``{"error": ...}``),
  never 500;
- a request must arrive whole within ``read_timeout`` seconds of its first byte, and a kept-alive
  connection is closed after ``idle_timeout`` seconds without one, so slow or idle clients cannot hold
  threads;
- at most ``max_connections`` connections are served at once; the next ones get 503 and are closed;
- each refused request is logged as one line (method, path, reason, client), never its body or
  signature.
"""
from __future__ import annotations

import io
import json
import logging
import re
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Mapping
from urllib.parse import urlparse

from slack_bolt import App, BoltRequest
from slack_bolt.middleware.request_verification import RequestVerification
from slack_sdk.signature import SignatureVerifier

from bot.replay import SIGNATURE_WINDOW, ReplayGuard

log = logging.getLogger(__name__)
# Another endpoint served beside Slack's: (method, headers, body) -> (status, JSON answer).
Route = Callable[[str, Mapping[str, str], bytes], "tuple[int, dict]"]
MAX_BODY = 1024 * 1024  # Slack payloads are far smaller; a bigger body is not from Slack
READ_TIMEOUT = 10.0
IDLE_TIMEOUT = 10.0
MAX_CONNECTIONS = 256

SIGNATURE = "X-Slack-Signature"
TIMESTAMP = "X-Slack-Request-Timestamp"
_SINGLE_VALUED = ("Content-Length", "Transfer-Encoding", SIGNATURE, TIMESTAMP)
_DIGITS = re.compile(r"[0-9]{1,15}")  # int() would also take " 1", "+1", "1_0" and non-ASCII digits
_METHODS = (b"GET ", b"POST ", b"HEAD ", b"PUT ", b"DELETE ", b"OPTIONS ", b"PATCH ")
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain; charset=utf-8\r\n"
         b"Content-Length: 25\r\nConnection: close\r\n\r\ntoo many connections; retry")


class Refused(Exception):
    """A request answered with ``status`` and one line of text, and logged as one line."""

    def __init__(self, status: int, reason: str, *, close: bool = False) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.close = close


class _DeadlineReader(io.RawIOBase):
    """The connection's reading side with one deadline for a whole request, not one per recv: a client
    sending a byte a second would otherwise never time out."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.deadline = float("inf")
        self.probing = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int | None:
        if self.probing:  # only what has already arrived, without waiting
            self._sock.settimeout(0.0)
            try:
                return self._sock.recv_into(buffer)
            except BlockingIOError:
                return None
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("deadline passed")
        self._sock.settimeout(remaining)
        return self._sock.recv_into(buffer)


def bolt_verifier(app: App) -> SignatureVerifier:
    """The verifier Bolt checks each request with, so this layer applies the same secret and clock."""
    for middleware in app._middleware_list:
        if isinstance(middleware, RequestVerification):
            return middleware.verifier
    raise ValueError("HTTP mode needs Bolt's request verification: create the app with "
                     "GPUBOT_SLACK_MODE=http and a signing secret (request_verification_enabled=True)")


def make_handler(app: App | None, guard: ReplayGuard, *, read_timeout: float, idle_timeout: float,
                 routes: Mapping[str, Route] | None = None) -> type[BaseHTTPRequestHandler]:
    verifier = bolt_verifier(app) if app is not None else None
    routes = dict(routes or {})

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def setup(self) -> None:
            super().setup()
            self.rfile.close()  # the socket's own file: replaced by one that keeps the deadline
            self._reader = _DeadlineReader(self.connection)
            self.rfile = io.BufferedReader(self._reader)

        def handle_one_request(self) -> None:
            self.command = self.path = None
            self._reader.deadline = time.monotonic() + idle_timeout
            try:
                if not self.rfile.peek(1):  # the client closed the connection
                    self.close_connection = True
                    return
            except (TimeoutError, OSError):
                self.close_connection = True  # idle: nothing to answer
                return
            self._reader.deadline = time.monotonic() + read_timeout
            super().handle_one_request()  # a TimeoutError in it closes the connection via log_error

        # -- logging: one line per refusal, never a traceback, never the request's bytes -----------
        def log_message(self, fmt: str, *args) -> None:
            log.debug("%s " + fmt, self.address_string(), *args)

        def log_error(self, fmt: str, *args) -> None:
            # Called by the base class only for a request that did not arrive within read_timeout.
            self._log_refusal(f"request not received within {read_timeout:g} s")

        def _log_refusal(self, reason: str) -> None:
            path = urlparse(self.path).path if self.path else "-"
            log.info("refused %s %s from %s: %s", self.command or "-", path, self.client_address[0], reason)

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            # The base class's page repeats the offending request line; answer one line instead.
            self.close_connection = True
            phrase = HTTPStatus(code).phrase
            self._log_refusal(phrase.lower())
            self._send(code, phrase.lower(), {"Connection": "close"})

        # -- answering -----------------------------------------------------------------------------
        def _send(self, status: int, body: str, headers: dict | None = None) -> None:
            payload = body.encode("utf-8")
            self.connection.settimeout(read_timeout)  # a client that never reads its answer is let go
            self.send_response(status)
            headers = dict(headers or {})
            if not any(name.lower() == "content-type" for name in headers):
                headers["Content-Type"] = "text/plain; charset=utf-8"
            for name, values in headers.items():
                for value in values if isinstance(values, list) else [values]:
                    if name.lower() != "content-length":
                        self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _refuse(self, refused: Refused) -> None:
            self._log_refusal(refused.reason)
            headers = {"Content-Type": "application/json"}
            if refused.close:
                self.close_connection = True  # the body is left unread: the connection cannot go on
                headers["Connection"] = "close"
            self._send(refused.status, json.dumps({"error": refused.reason}), headers)

        def do_GET(self) -> None:
            if urlparse(self.path).path in ("/healthz", "/readyz"):
                self._send(200, "ok")
            else:
                self._send(404, "not found")

        def do_POST(self) -> None:
            url = urlparse(self.path)
            if url.path in routes:
                self._route(routes[url.path])
                return
            if url.path != "/slack/events" or app is None:
                self._send(404, "not found", {"Connection": "close"})
                self.close_connection = True
                return
            try:
                length, timestamp, signature = self._checked_headers()
                body = self._read_body(length)
                self._check_signature(body, timestamp, signature)
                if not guard.first_time(signature, int(timestamp)):
                    raise Refused(401, "replayed request")
            except Refused as refused:
                self._refuse(refused)
                return
            response = app.dispatch(BoltRequest(body=body, query=url.query, headers=self._bolt_headers()))
            self._send(response.status, response.body, response.headers)

        def _route(self, route: Route) -> None:
            """Another endpoint on the same port (Alertmanager's webhook): its own authentication."""
            try:
                length, _, _ = self._checked_headers(signed=False)
                body = self._read_body(length)
            except Refused as refused:
                self._refuse(refused)
                return
            headers = {name: value for name, value in self.headers.items()}
            if len(self.headers.get_all("Authorization") or []) > 1:
                headers["Authorization"] = ""  # two credentials: neither is taken
            status, answer = route("POST", headers, body.encode("utf-8"))
            if status >= 400:
                self._log_refusal(f"{status} {answer.get('error', '')}"[:200])
            self._send(status, json.dumps(answer), {"Content-Type": "application/json"})

        def _checked_headers(self, *, signed: bool = True) -> tuple[int, str | None, str | None]:
            for name in _SINGLE_VALUED:
                if len(self.headers.get_all(name) or []) > 1:
                    # Bolt verifies the first value; a guard reading another could be fooled.
                    raise Refused(400, f"more than one {name} header", close=True)
            if self.headers.get("Transfer-Encoding") is not None:
                raise Refused(400, "Transfer-Encoding is not supported; send Content-Length", close=True)
            raw_length = (self.headers.get("Content-Length") or "0").strip()
            if not _DIGITS.fullmatch(raw_length):
                raise Refused(400, "bad Content-Length", close=True)
            if int(raw_length) > MAX_BODY:
                raise Refused(413, "request too large", close=True)
            if not signed:
                return int(raw_length), None, None
            timestamp, signature = self.headers.get(TIMESTAMP), self.headers.get(SIGNATURE)
            if signature is not None and (timestamp is None or not _DIGITS.fullmatch(timestamp)):
                raise Refused(400, f"missing or non-numeric {TIMESTAMP}", close=True)
            return int(raw_length), timestamp, signature

        def _read_body(self, length: int) -> str:
            data = self.rfile.read(length)
            if len(data) < length:
                raise Refused(400, "body shorter than Content-Length", close=True)
            self._reader.probing = True
            try:
                extra = self.rfile.peek(1)
            finally:
                self._reader.probing = False
            if extra and not _starts_request(extra):
                raise Refused(400, "body longer than Content-Length", close=True)
            return data.decode("utf-8", errors="replace")

        def _check_signature(self, body: str, timestamp: str | None, signature: str | None) -> None:
            if signature is None:
                raise Refused(401, "unsigned request")
            if abs(verifier.clock.now() - int(timestamp)) > SIGNATURE_WINDOW:
                raise Refused(401, "stale timestamp")
            if not verifier.is_valid(body, timestamp, signature):
                raise Refused(401, "invalid signature")

        def _bolt_headers(self) -> dict[str, list[str]]:
            headers: dict[str, list[str]] = {}
            for name, value in self.headers.items():  # every value: a dict by name would keep the last
                headers.setdefault(name.lower(), []).append(value)
            return headers

    return Handler


def _starts_request(data: bytes) -> bool:
    """Whether bytes after a body are the start of a pipelined request rather than more body."""
    return any(data.startswith(method) or method.startswith(data) for method in _METHODS)


class _Server(ThreadingHTTPServer):
    # Python's default backlog of 5 resets connections when Slack sends a burst of requests, and a
    # connection past a full backlog waits for the client's SYN retry (a second or more): 200 commands
    # at once took 1.2 s at p99 with 128. The kernel caps it at net.core.somaxconn (4096 by default).
    request_queue_size = 1024
    daemon_threads = True

    def __init__(self, address, handler, *, max_connections: int) -> None:
        self._slots = threading.BoundedSemaphore(max_connections)
        self._open = 0
        self._count_lock = threading.Lock()
        super().__init__(address, handler)

    @property
    def open_connections(self) -> int:
        return self._open

    def process_request(self, request, client_address) -> None:
        if not self._slots.acquire(blocking=False):
            self._refuse_busy(request, client_address)
            return
        self._counted(+1)
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._release()

    def _counted(self, delta: int) -> None:
        with self._count_lock:
            self._open += delta

    def _release(self) -> None:
        self._counted(-1)
        self._slots.release()

    def _refuse_busy(self, request: socket.socket, client_address) -> None:
        # Answered from the accepting thread without reading the request: no thread, no waiting.
        log.info("refused connection from %s: %d connections already open", client_address[0], self._open)
        try:
            request.settimeout(0.0)
            request.send(_BUSY)
            request.shutdown(socket.SHUT_WR)
            request.recv(65536)  # what already arrived, so closing does not reset the answer away
        except OSError:
            pass
        self.shutdown_request(request)

    def handle_error(self, request, client_address) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, OSError):  # the client went away mid-answer: nothing to fix here
            log.info("connection from %s ended: %s", client_address[0], type(error).__name__)
        else:
            log.exception("error serving a request from %s", client_address[0])


class SlackHttpServer:
    """Slack's requests at POST /slack/events (``app``; None in Socket Mode, where they come over the
    WebSocket), /healthz, and other POST endpoints in ``routes`` (path -> handler)."""

    def __init__(self, app: App | None, *, host: str = "0.0.0.0", port: int = 3000,
                 read_timeout: float = READ_TIMEOUT, idle_timeout: float = IDLE_TIMEOUT,
                 max_connections: int = MAX_CONNECTIONS, replay_guard: ReplayGuard | None = None,
                 routes: Mapping[str, Route] | None = None) -> None:
        if read_timeout <= 0 or idle_timeout <= 0 or max_connections < 1:
            raise ValueError("read_timeout and idle_timeout must be positive and max_connections at least 1")
        self.replay_guard = replay_guard or ReplayGuard()
        handler = make_handler(app, self.replay_guard, read_timeout=read_timeout, idle_timeout=idle_timeout,
                               routes=routes)
        self._server = _Server((host, port), handler, max_connections=max_connections)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def open_connections(self) -> int:
        """Connections being served now (each holds one thread)."""
        return self._server.open_connections

    def start(self) -> "SlackHttpServer":
        self._thread = threading.Thread(target=self._server.serve_forever, name="gpubot-http", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
