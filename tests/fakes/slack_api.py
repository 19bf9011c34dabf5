"""A fake Slack Web API on loopback, reached over real HTTP by slack_sdk's own ``WebClient``.

    with FakeSlack() as slack:
        client = WebClient(token=slack.token, base_url=slack.url)
        client.chat_postMessage(channel="C0TRAIN", text="hi")
        [call] = slack.wait_for("chat.postMessage")
        assert call.args["text"] == "hi"

Every request is recorded as a ``Call`` (method, parsed arguments, headers, monotonic time, the JSON
answered). Answers are shaped like Slack's (see ``slack_methods``); Block Kit limits are enforced
(``block_kit_limits``) so oversize output fails at the network edge, as in production. A slash
command's or button's ``response_url`` can point at ``slack.response_url()``: those POSTs are recorded
as method ``"response_url"``.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qsl, urlsplit

from . import workspace as ws
from .block_kit_limits import problems
from .slack_limits import ResponseUrls, SlackLimits
from .slack_methods import APP_TOKEN_METHODS, METHODS, SlackError, SlackState, upload_bytes

JSON_ARGS = ("blocks", "view", "attachments", "metadata")
RESPONSE_URL = "response_url"
UPLOAD = "upload"  # the POST of a file's bytes to the URL files.getUploadURLExternal gave
# The bot scopes of deploy/slack-app-manifest*.yaml; a test drops one to see the bot do without it.
DEFAULT_SCOPES = frozenset({"app_mentions:read", "chat:write", "commands", "im:history", "channels:history",
                            "groups:history", "usergroups:read", "users:read", "files:write"})


@dataclass
class Call:
    method: str
    args: dict[str, Any]
    headers: dict[str, str]
    time: float
    path: str = ""
    response: dict[str, Any] | None = None
    status: int = 200


@dataclass
class _Injected:
    body: dict[str, Any]
    status: int
    headers: dict[str, str]
    times: int


@dataclass
class _Recorder:
    calls: list[Call] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def add(self, call: Call) -> None:
        with self.changed:
            self.calls.append(call)
            self.changed.notify_all()


class _BurstServer(ThreadingHTTPServer):
    request_queue_size = 128  # a burst of concurrent bot calls must not be reset (default backlog: 5)


class FakeSlack:
    """The Web API at ``.url`` (``http://127.0.0.1:<port>/api/``), response URLs under ``/response/``."""

    def __init__(self, *, token: str = ws.BOT_TOKEN, app_token: str = ws.APP_TOKEN, socket_mode: bool = False,
                 enforce_limits: bool = False, scopes: frozenset[str] | set[str] = DEFAULT_SCOPES):
        self.token = token
        # Past Slack's published per-method and per-channel limits: 429 with Retry-After (slack_limits).
        self.limits = SlackLimits() if enforce_limits else None
        self.response_urls = ResponseUrls()
        self.app_token = app_token
        self.state = SlackState(socket_url=self._socket_url, root_url=lambda: self.root, scopes=frozenset(scopes))
        self.socket_mode = None
        self._want_socket_mode = socket_mode
        self._recorder = _Recorder()
        self._injected: dict[str, list[_Injected]] = {}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> FakeSlack:
        self._server = _BurstServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-slack", daemon=True)
        self._thread.start()
        if self._want_socket_mode:
            from .socket_mode import FakeSocketMode

            self.socket_mode = FakeSocketMode(app_id=ws.APP_ID).start()
        return self

    def stop(self) -> None:
        if self.socket_mode is not None:
            self.socket_mode.stop()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            for conn in list(self._connections):  # idle keep-alive connections would outlive the server
                _close_quietly(conn)
            self._server = None

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def root(self) -> str:
        assert self._server is not None, "FakeSlack is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def url(self) -> str:
        """The value for slack_sdk's ``base_url`` and gpubot's ``SLACK_API_URL``."""
        return f"{self.root}/api/"

    def response_url(self, response_id: str | None = None) -> str:
        """A response_url as Slack gives one with each command or click (a new one unless named)."""
        return f"{self.root}/response/{response_id or self.state.next_id('R')}"

    def _socket_url(self) -> str | None:
        return self.socket_mode.connection_url() if self.socket_mode is not None else None

    # -- recording -----------------------------------------------------------------------------
    def calls(self, method: str | None = None) -> list[Call]:
        with self._recorder.changed:
            return [c for c in self._recorder.calls if method is None or c.method == method]

    def wait_for(self, method: str, *, count: int = 1, timeout: float = 10,
                 predicate: Callable[[Call], bool] | None = None) -> list[Call]:
        """Block until ``count`` calls of ``method`` (matching ``predicate``) arrived; return them all."""
        deadline = time.monotonic() + timeout

        def matching() -> list[Call]:
            return [c for c in self._recorder.calls if c.method == method and (predicate is None or predicate(c))]

        with self._recorder.changed:
            while len(found := matching()) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [(c.method, c.args) for c in self._recorder.calls]
                    raise AssertionError(
                        f"waited {timeout}s for {count} {method} call(s), got {len(found)}; calls seen: {seen!r}")
                self._recorder.changed.wait(left)
            return found

    def reset(self) -> None:
        """Forget recorded calls, injected answers, stored messages and views."""
        with self._recorder.changed:
            self._recorder.calls.clear()
        self._injected.clear()
        self.state.messages.clear()
        self.state.views.clear()
        self.state.files.clear()
        self.response_urls = ResponseUrls()

    def seed_message(self, channel: str, **kwargs) -> str:
        """A message someone else posted (see ``SlackState.seed_message``); returns its ts."""
        return self.state.seed_message(channel, **kwargs)

    def inject(self, method: str, *, error: str = "ratelimited", status: int = 200,
               headers: dict[str, str] | None = None, times: int = 1) -> None:
        """Make the next ``times`` calls of ``method`` fail, e.g. ``inject("chat.postMessage",
        error="ratelimited", status=429, headers={"Retry-After": "1"})``."""
        answer = _Injected({"ok": False, "error": error}, status, dict(headers or {}), times)
        self._injected.setdefault(method, []).append(answer)

    # -- answering -----------------------------------------------------------------------------
    def _answer(self, method: str, args: dict, headers: dict[str, str]) -> tuple[int, dict, dict[str, str]]:
        injected = self._take_injected(method)
        if injected is not None:
            return injected.status, injected.body, injected.headers
        retry_after = self.limits.check(method, args) if self.limits is not None else None
        if retry_after is not None:
            return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(retry_after)}
        auth_error = self._auth_error(method, headers.get("Authorization"))
        if auth_error:
            return 200, {"ok": False, "error": auth_error}, {}
        handler = METHODS.get(method)
        if handler is None:
            return 200, {"ok": False, "error": "unknown_method"}, {}
        try:
            body = handler(self.state, args)
        except SlackError as e:
            body = e.body()
        extra = {"x-oauth-scopes": ",".join(sorted(self.state.scopes))}
        return 200, body, extra if method == "auth.test" else {}

    def _auth_error(self, method: str, authorization: str | None) -> str | None:
        if not authorization:
            return "not_authed"
        scheme, _, token = authorization.partition(" ")
        expected = self.app_token if method in APP_TOKEN_METHODS else self.token
        if scheme != "Bearer" or token != expected:
            if token in (self.token, self.app_token):
                return "not_allowed_token_type"
            return "invalid_auth"
        return None

    def _take_injected(self, method: str) -> _Injected | None:
        with self._recorder.changed:  # requests arrive on many threads
            queue = self._injected.get(method)
            if not queue:
                return None
            head = queue[0]
            head.times -= 1
            if head.times <= 0:
                queue.pop(0)
            return head

    def _answer_response_url(self, path: str, args: dict) -> tuple[int, Any]:
        """Slack's response URLs answer like incoming webhooks: plain-text errors with HTTP 400 (404 for
        a URL used up or expired)."""
        used = self.response_urls.use(path)
        if used:
            return 404, used
        if not any(args.get(k) for k in ("text", "blocks", "attachments", "delete_original")):
            return 400, "no_text"
        if args.get("blocks") is not None and problems(args["blocks"]):
            return 400, "invalid_blocks"
        if isinstance(args.get("text"), str) and len(args["text"]) > 40_000:
            return 400, "msg_too_long"
        return 200, {"ok": True}


def _close_quietly(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.close()


def parse_args(body: bytes, content_type: str, query: str) -> dict[str, Any]:
    """Arguments as Slack reads them: query string, then a JSON or form body; JSON-valued form fields
    (``blocks``, ``view``, ...) decoded to Python objects."""
    args: dict[str, Any] = dict(parse_qsl(query, keep_blank_values=True))
    if body:
        if "json" in content_type or body.lstrip()[:1] == b"{":
            args.update(json.loads(body.decode("utf-8")))
        else:
            args.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
    for key in JSON_ARGS:
        if isinstance(args.get(key), str) and args[key][:1] in ("[", "{"):
            args[key] = json.loads(args[key])
    return args


def _handler_for(fake: FakeSlack) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        timeout = 60

        def setup(self) -> None:
            super().setup()
            fake._connections.add(self.connection)

        def finish(self) -> None:
            fake._connections.discard(self.connection)
            super().finish()

        def log_message(self, format: str, *args) -> None:  # keep pytest output clean
            pass

        def do_GET(self) -> None:
            self._handle()

        def do_POST(self) -> None:
            self._handle()

        def _handle(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = dict(self.headers.items())
            if parts.path.startswith("/upload/v1/"):  # raw bytes (or multipart), never parsed as arguments
                status, answer = upload_bytes(fake.state, parts.path.rsplit("/", 1)[-1], raw)
                fake._recorder.add(Call(UPLOAD, {"length": len(raw)}, headers, time.monotonic(), parts.path, None,
                                        status))
                self._send(status, answer, {})
                return
            try:
                args = parse_args(raw, self.headers.get("Content-Type", ""), parts.query)
            except (ValueError, UnicodeDecodeError):
                args = {"_raw": raw.decode("utf-8", "replace")}
            if parts.path.startswith("/response/"):
                status, answer = fake._answer_response_url(parts.path, args)
                call = Call(RESPONSE_URL, args, headers, time.monotonic(), parts.path, None, status)
                fake._recorder.add(call)
                self._send(status, answer, {})
                return
            if not parts.path.startswith("/api/"):
                self._send(404, {"ok": False, "error": "not_found"}, {})
                return
            method = parts.path[len("/api/"):]
            status, body, extra = fake._answer(method, args, headers)
            fake._recorder.add(Call(method, args, headers, time.monotonic(), parts.path, body, status))
            self._send(status, body, extra)

        def _send(self, status: int, body: Any, extra: dict[str, str]) -> None:
            if isinstance(body, str):
                data, kind = body.encode("utf-8"), "text/plain; charset=utf-8"
            else:
                data, kind = json.dumps(body).encode("utf-8"), "application/json; charset=utf-8"
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler
