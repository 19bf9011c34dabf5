"""A loopback port that refuses connections for as long as the test needs it."""
from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def refused_port() -> Iterator[int]:
    """Yield a port bound but never listening: connecting gets ECONNREFUSED.

    Holding the binding, rather than closing a probe socket and hoping, keeps another server in the
    same run from being given the port while the test still expects it dead."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def free_port() -> int:
    """A port free now, for a server in another process that must be told its port up front."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
