"""How many connections one client address, and everyone together, may hold open at once.

Counted per TCP connection, when it is accepted and when it is gone, not per request: an idle or
half-sent connection holds a slot as surely as a busy one, which is what a client exhausting the edge
does. uvicorn's own ``limit_concurrency`` is one global number checked only once a request has arrived
(``uvicorn/protocols/http/h11_impl.py``), so idle sockets never meet it and one address could take every
slot; hence this count, kept by the protocol (``bot/edge/protocol.py``).

All calls come from the server's event loop thread; the lock only makes the totals safe to read from
another thread (tests, probes).
"""
from __future__ import annotations

import threading
from collections import Counter


class ConnectionLimits:
    def __init__(self, *, total: int, per_client: int) -> None:
        if total < 1 or per_client < 1:
            raise ValueError(f"connection limits must be at least 1 (total {total}, per client {per_client})")
        self.total = total
        self.per_client = per_client
        self._open: Counter[str] = Counter()
        self._count = 0
        self._lock = threading.Lock()

    @property
    def open(self) -> int:
        return self._count

    def from_client(self, client: str) -> int:
        return self._open.get(client, 0)

    def admit(self, client: str) -> str | None:
        """Take a slot for a new connection from ``client``; None when taken, else why it was refused."""
        with self._lock:
            if self._open[client] >= self.per_client:
                return f"{self._open[client]} connections already open from this address"
            if self._count >= self.total:
                return f"{self._count} connections already open"
            self._open[client] += 1
            self._count += 1
            return None

    def release(self, client: str) -> None:
        with self._lock:
            self._open[client] -= 1
            if self._open[client] <= 0:
                del self._open[client]  # the table holds only addresses with a connection open
            self._count -= 1
