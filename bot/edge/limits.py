"""The connection budget of one port: how many connections one client address, and everyone together,
may hold open at once, and which connection gives way when the port is full.

Counted per TCP connection, when it is accepted and when it is gone, not per request: uvicorn's own
``limit_concurrency`` is one global number checked only once a request has arrived
(``uvicorn/protocols/http/h11_impl.py``), so idle sockets never meet it and one address could take every
slot; hence this count, kept by the protocol (``bot/edge/protocol.py``).

A full port sheds rather than refuses. An idle connection costs a file descriptor and a few KiB, so
many are fine, but refusing new connections while idle ones hold the slots lets anyone with a few
addresses starve Slack, or the kubelet on the probe port. So when every slot is taken, a new connection
takes the slot of one that is waiting for a request: first the one that has sent nothing for longest
(since it was accepted, or since its last answer), then one that has been sending a request for more
than SLOW_SENDER seconds. A connection whose request has arrived whole (a Slack request is verified as
soon as its body is in) is never shed, and one that started sending a moment ago is left to finish.
Only when nothing can be shed is the new connection refused.

The per-address share is not shed: an address at its share is refused, which keeps one address from
cycling through everyone else's slots. Addresses of trusted proxies have no share (every client behind
the proxy arrives from them); only the total applies to them.

All calls come from the server's event loop thread; the lock only makes the totals safe to read from
another thread (tests, probes).
"""
from __future__ import annotations

import ipaddress
import threading
import time
from collections import Counter, OrderedDict
from typing import Iterable, Protocol

# A request that has been on its way this long is a slow one (Slack's arrive whole in milliseconds):
# it may give its slot to a new connection. Younger ones are let finish, so a client that connects and
# sends at once is never shed by connections opened just after it.
SLOW_SENDER = 1.0


class Connection(Protocol):
    def shed(self) -> None: ...


class ConnectionLimits:
    def __init__(self, *, total: int, per_client: int, trusted_proxies: Iterable[str] = ()) -> None:
        """``trusted_proxies``: networks (CIDRs) of proxies whose ``X-Forwarded-For`` is believed
        (bot/edge/server.py); their addresses have no per-address share."""
        if total < 1 or per_client < 1:
            raise ValueError(f"connection limits must be at least 1 (total {total}, per client {per_client})")
        self.total = total
        self.per_client = per_client
        self.shed_count = 0
        self.trusted_proxies = tuple(str(ipaddress.ip_network(cidr, strict=False)) for cidr in trusted_proxies)
        self._unshared = tuple(ipaddress.ip_network(cidr) for cidr in self.trusted_proxies)
        self._open: Counter[str] = Counter()
        self._client: dict[Connection, str] = {}
        # Connections waiting for a request, in the order they began to wait (oldest first): those that
        # have sent nothing, and those part-way through sending one (with when they started).
        self._silent: OrderedDict[Connection, None] = OrderedDict()
        self._sending: OrderedDict[Connection, float] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def open(self) -> int:
        return len(self._client)

    def from_client(self, client: str) -> int:
        return self._open.get(client, 0)

    def admit(self, connection: Connection, client: str) -> str | None:
        """Take a slot for a new connection from ``client``, shedding a waiting one if the port is full;
        None when taken, else why it was refused."""
        with self._lock:
            if self._open[client] >= self.per_client and not self._is_unshared(client):
                return f"{self._open[client]} connections already open from this address"
            if len(self._client) >= self.total:
                victim = self._victim()
                if victim is None:
                    return f"{len(self._client)} connections already open, none idle"
                self._forget(victim)
                self.shed_count += 1
            else:
                victim = None
            self._open[client] += 1
            self._client[connection] = client
            self._silent[connection] = None
        if victim is not None:
            victim.shed()  # outside the lock: closing may call back into release()
        return None

    def silent(self, connection: Connection) -> None:
        """``connection`` waits for a request and has sent none of it."""
        with self._lock:
            if connection in self._client and connection not in self._silent:
                self._sending.pop(connection, None)
                self._silent[connection] = None

    def sending(self, connection: Connection) -> None:
        """``connection`` has sent part of a request."""
        with self._lock:
            if connection in self._client and connection not in self._sending:
                self._silent.pop(connection, None)
                self._sending[connection] = time.monotonic()

    def busy(self, connection: Connection) -> None:
        """``connection``'s request has arrived whole: it keeps its slot until answered."""
        with self._lock:
            self._silent.pop(connection, None)
            self._sending.pop(connection, None)

    def release(self, connection: Connection) -> None:
        with self._lock:
            self._forget(connection)

    def _victim(self) -> Connection | None:
        if self._silent:
            return next(iter(self._silent))
        if self._sending:
            oldest, since = next(iter(self._sending.items()))
            if time.monotonic() - since >= SLOW_SENDER:
                return oldest
        return None

    def _forget(self, connection: Connection) -> None:
        client = self._client.pop(connection, None)
        if client is None:
            return  # shed earlier: its slot was already given to another
        self._silent.pop(connection, None)
        self._sending.pop(connection, None)
        self._open[client] -= 1
        if self._open[client] <= 0:
            del self._open[client]  # the table holds only addresses with a connection open

    def _is_unshared(self, client: str) -> bool:
        if not self._unshared:
            return False
        try:
            address = ipaddress.ip_address(client)
        except ValueError:
            return False
        return any(address in network for network in self._unshared)
