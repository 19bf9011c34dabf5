"""A fake Socket Mode endpoint: just enough WebSocket (RFC 6455) for slack_sdk's builtin client.

The server side of the opening handshake, then unmasked text frames out and masked frames in
(text, ping, pong, close). On connect it sends Slack's ``hello``; ``deliver(type, payload)`` sends an
envelope and returns its ``envelope_id``; the client's acknowledgement (``{"envelope_id": ...}``,
optionally with a ``payload``) lands in ``.acks``. Message shapes follow python-slack-sdk's
``tests/slack_sdk/socket_mode/mock_socket_mode_server.py`` recordings.
"""
from __future__ import annotations

import base64
import hashlib
import json
import socket
import struct
import threading
import uuid
from typing import Any

from .payloads import fixture

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_TEXT, OP_CLOSE, OP_PING, OP_PONG = 0x1, 0x8, 0x9, 0xA


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()


def frame(payload: bytes, opcode: int = OP_TEXT) -> bytes:
    """A final, unmasked server frame."""
    head = bytes([0x80 | opcode])
    size = len(payload)
    if size <= 125:
        head += bytes([size])
    elif size <= 0xFFFF:
        head += bytes([126]) + struct.pack("!H", size)
    else:
        head += bytes([127]) + struct.pack("!Q", size)
    return head + payload


def _read_exact(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("client closed the connection")
        data += chunk
    return data


def read_frame(sock: socket.socket) -> tuple[int, bytes]:
    """One client frame: (opcode, unmasked payload)."""
    first, second = _read_exact(sock, 2)
    size = second & 0x7F
    if size == 126:
        size = struct.unpack("!H", _read_exact(sock, 2))[0]
    elif size == 127:
        size = struct.unpack("!Q", _read_exact(sock, 8))[0]
    mask = _read_exact(sock, 4) if second & 0x80 else b"\0\0\0\0"
    data = _read_exact(sock, size)
    return first & 0x0F, bytes(b ^ mask[i % 4] for i, b in enumerate(data))


class _Client:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.send_lock = threading.Lock()
        self.open = True

    def send(self, payload: bytes, opcode: int = OP_TEXT) -> None:
        with self.send_lock:
            self.sock.sendall(frame(payload, opcode))


class FakeSocketMode:
    def __init__(self, *, app_id: str = "A0GPUBOT"):
        self.app_id = app_id
        self.acks: list[dict[str, Any]] = []
        self.received: list[str] = []  # every text frame the client sent, acks included
        self.handshakes: list[str] = []  # request lines, e.g. "GET /link/?ticket=...&app_id=... HTTP/1.1"
        self._clients: list[_Client] = []
        self._changed = threading.Condition()
        self._listener: socket.socket | None = None
        self._tickets = 0

    def start(self) -> FakeSocketMode:
        self._listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._accept_loop, name="fake-socket-mode", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() blocked in another thread
            except OSError:
                pass
            self._listener.close()
            self._listener = None
        self.drop_connections()

    def __enter__(self) -> FakeSocketMode:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def connection_url(self) -> str:
        """What ``apps.connections.open`` answers: a fresh ticket each time, as Slack issues."""
        assert self._listener is not None, "FakeSocketMode is not started"
        self._tickets += 1
        port = self._listener.getsockname()[1]
        return f"ws://127.0.0.1:{port}/link/?ticket=fake-ticket-{self._tickets}&app_id={self.app_id}"

    # -- talking to the client -----------------------------------------------------------------
    def wait_for_connection(self, timeout: float = 10) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: any(c.open for c in self._clients), timeout):
                raise AssertionError(f"no Socket Mode client connected within {timeout}s")

    def deliver(self, type: str, payload: dict[str, Any], *, timeout: float = 10) -> str:
        """Send an envelope (``slash_commands``, ``events_api`` or ``interactive``) to the newest client."""
        self.wait_for_connection(timeout)
        envelope_id = str(uuid.uuid4())
        envelope: dict[str, Any] = {"envelope_id": envelope_id, "payload": payload, "type": type,
                                    "accepts_response_payload": _accepts_response_payload(type, payload)}
        if type == "events_api":
            envelope.update(retry_attempt=0, retry_reason="")
        self.send(envelope)
        return envelope_id

    def send(self, message: dict[str, Any]) -> None:
        """Any message to the newest open client, e.g. ``{"type": "disconnect", "reason": "warning"}``."""
        with self._changed:
            client = next((c for c in reversed(self._clients) if c.open), None)
        if client is None:
            raise AssertionError("no Socket Mode client is connected")
        client.send(json.dumps(message, separators=(",", ":")).encode())

    def drop_connections(self) -> None:
        """End every client's TCP connection, as a network drop would.

        Call it before ``SocketModeClient.close()``: the builtin client holds its receive lock while
        blocked in ``recv`` (3 s timeout), so closing first costs up to 3 s. A WebSocket close frame
        would be politer but races the client's own ``disconnect()`` (slack_sdk 3.47 checks ``sock``
        outside its locks and can call ``None.close()``)."""
        with self._changed:
            clients = [c for c in self._clients if c.open]
        for client in clients:
            client.open = False
            try:
                client.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def wait_for_ack(self, envelope_id: str, timeout: float = 10) -> dict[str, Any]:
        def ack() -> dict[str, Any] | None:
            return next((a for a in self.acks if a.get("envelope_id") == envelope_id), None)

        with self._changed:
            if not self._changed.wait_for(lambda: ack() is not None, timeout):
                raise AssertionError(f"no ack for envelope {envelope_id} within {timeout}s; acks: {self.acks!r}")
            return ack()  # type: ignore[return-value]

    # -- serving -------------------------------------------------------------------------------
    def _accept_loop(self) -> None:
        listener = self._listener
        while listener is not None:
            try:
                sock, _ = listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(sock,), name="fake-socket-mode-client", daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        client = _Client(sock)
        try:
            if not self._handshake(sock):
                sock.close()
                return
            # hello goes out before the client counts as connected, so nothing delivered after
            # wait_for_connection() can overtake it, as on Slack's side
            client.send(json.dumps(self._hello(), separators=(",", ":")).encode())
            with self._changed:
                self._clients.append(client)
                self._changed.notify_all()
            self._read_loop(client)
        except (ConnectionError, OSError):
            pass
        finally:
            client.open = False
            with self._changed:
                self._changed.notify_all()
            sock.close()

    def _handshake(self, sock: socket.socket) -> bool:
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = sock.recv(1024)
            if not chunk:
                return False
            request += chunk
        lines = request.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        self.handshakes.append(lines[0])
        key = headers.get("sec-websocket-key")
        if headers.get("upgrade", "").lower() != "websocket" or not key:
            sock.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return False
        sock.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Accept: {accept_key(key)}\r\n\r\n").encode())
        return True

    def _hello(self) -> dict[str, Any]:
        with self._changed:
            connections = sum(c.open for c in self._clients) + 1  # this one is not listed yet
        hello = fixture("socket_mode_hello.json")
        hello["num_connections"] = connections
        hello["connection_info"]["app_id"] = self.app_id
        return hello

    def _read_loop(self, client: _Client) -> None:
        while client.open:
            opcode, data = read_frame(client.sock)
            if opcode == OP_PING:
                client.send(data, OP_PONG)
            elif opcode == OP_CLOSE:
                client.send(data[:2], OP_CLOSE)
                return
            elif opcode == OP_TEXT:
                self._record(data.decode("utf-8"))

    def _record(self, text: str) -> None:
        with self._changed:
            self.received.append(text)
            try:
                message = json.loads(text)
            except ValueError:
                message = None
            if isinstance(message, dict) and "envelope_id" in message:
                self.acks.append(message)
            self._changed.notify_all()


def _accepts_response_payload(type: str, payload: dict[str, Any]) -> bool:
    if type == "slash_commands":
        return True
    return type == "interactive" and payload.get("type") in ("view_submission", "block_suggestion")
