"""uvicorn's h11 protocol with the limits a public port needs and uvicorn leaves out.

- **Connections per client address and in all** (``ConnectionLimits``), counted from ``connection_made``
  to ``connection_lost``: a full port sheds a connection that is waiting for a request to make room
  (this protocol tells the budget, as bytes arrive, whether its connection has sent nothing, is sending
  a request, or has one whole); past an address's share, or with nothing to shed, a connection is
  answered 503 with ``Retry-After`` from the accepting loop, without reading it, and closed.
- **A request arrives whole within ``read_timeout`` seconds** of its first byte, headers and body: a
  client sending a byte a second is cut off, however steadily it sends. uvicorn has no such deadline.
- **A new connection must start a request within ``idle_timeout``**; between requests uvicorn's own
  keep-alive timeout (the same number) applies. uvicorn arms that only after a first response
  (``H11Protocol.on_response_complete``), so a connection that never sends a byte would otherwise stay
  open for good: the "256 idle sockets" attack.
- **Malformed HTTP is answered 400 with one JSON line** and logged once, as every other refusal
  (``bot/edge/refusals.py``), instead of uvicorn's plain-text page and warning.
"""
from __future__ import annotations

import asyncio
import logging
import sys

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from bot.edge.limits import ConnectionLimits
from bot.edge.refusals import answer, log_refusal, log_shed, protocol_reason

_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain; charset=utf-8\r\n"
         b"Content-Length: 25\r\nConnection: close\r\n\r\ntoo many connections; retry")
_INCOMPLETE = (h11.SEND_BODY,)  # their request's head is in, its body is not


class _AnsweredHere(logging.Filter):
    """Drops uvicorn's own warning for malformed HTTP: ``send_400_response`` below logs the refusal."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != "Invalid HTTP request received."


logging.getLogger("uvicorn.error").addFilter(_AnsweredHere())


class EdgeProtocol(H11Protocol):
    def __init__(self, *args, limits: ConnectionLimits, read_timeout: float, idle_timeout: float,
                 **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.access_log = False  # uvicorn logs every request when any handler exists; refusals are logged here
        self._limits = limits
        self._read_timeout = read_timeout
        self._idle_timeout = idle_timeout
        self._admitted = False
        self._peer = "-"
        self._deadline: asyncio.TimerHandle | None = None
        # The first bytes of a request whose head h11 has not parsed yet, for a refusal's log line.
        self._head = b""
        self._reading_head = False

    # -- connections ----------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._peer = self.client[0] if self.client else "-"
        refused = self._limits.admit(self, self._peer)
        if refused is not None:
            log_refusal(None, None, self._peer, refused)
            transport.write(_BUSY)
            transport.close()
            return
        self._admitted = True
        # The keep-alive slot: cancelled by the first byte (H11Protocol.data_received), like uvicorn's.
        self.timeout_keep_alive_task = self.loop.call_later(self._idle_timeout, self.timeout_keep_alive_handler)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._admitted:
            self._admitted = False
            self._limits.release(self)
        self._cancel_deadline()
        super().connection_lost(exc)

    def shed(self) -> None:
        """Give this connection's slot to a new one: it is waiting for a request (ConnectionLimits)."""
        log_shed(self._peer)
        self._cancel_deadline()
        self.transport.close()  # nothing to answer: no request of it is whole

    # -- the request deadline -------------------------------------------------------------------
    def data_received(self, data: bytes) -> None:
        if not self._admitted:
            return  # refused: already answered and closing
        if self.conn.their_state is h11.IDLE:
            if not self._reading_head:
                self._head, self._reading_head = b"", True
            self._head = (self._head + data)[:200]
        super().data_received(data)
        self._track_request()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start on a pipelined request already buffered
        self._track_request()

    def _track_request(self) -> None:
        state = self.conn.their_state
        if state is not h11.IDLE:
            self._reading_head = False
        reading = state in _INCOMPLETE or (state is h11.IDLE and bool(self.conn.trailing_data[0]))
        if reading:
            self._limits.sending(self)
        elif state is h11.IDLE:
            self._limits.silent(self)
        else:
            self._limits.busy(self)  # its request is whole: being answered
        if not reading:
            self._cancel_deadline()
        elif self._deadline is None and not self.transport.is_closing():
            self._deadline = self.loop.call_later(self._read_timeout, self._too_slow)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        method, path = self._request_line()
        log_refusal(method, path, self._peer, f"request not received within {self._read_timeout:g} s")
        self.transport.close()  # nothing is answered: the client is not reading at this pace anyway

    # -- malformed HTTP -------------------------------------------------------------------------
    def send_400_response(self, msg: str) -> None:
        # Called by H11Protocol.handle_events while it handles h11's RemoteProtocolError.
        reason = protocol_reason(sys.exc_info()[1])
        method, path = self._request_line()
        log_refusal(method, path, self._peer, reason)
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # its body broke off: the app's answer is not written after ours
            self.cycle.message_event.set()
        body = answer(reason)
        self.transport.write(b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
        self.transport.close()

    def _request_line(self) -> tuple[str | None, str | None]:
        if self.scope is not None and not self._reading_head:  # h11 parsed this request's head
            return self.scope["method"], self.scope["path"]
        words = self._head.split(b"\r\n", 1)[0].split(b" ")
        if len(words) == 3 and words[0].isalpha() and words[2].startswith(b"HTTP/"):
            return words[0].decode("ascii"), words[1].split(b"?", 1)[0].decode("ascii", "replace")[:100]
        return None, None
