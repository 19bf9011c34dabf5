"""Cluster requests in flight, for whoever shows progress while one is slow (the CLI's spinner).

The gateway records each call with its cluster and overall limit; nothing here prints. It lives outside
``bot.gateway`` so the CLI can read it without importing the kubernetes client.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator


@dataclass(eq=False)
class Wait:
    cluster: str
    limit: float
    started: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return time.monotonic() - self.started


_active: list[Wait] = []
_lock = threading.Lock()


@contextmanager
def waiting(cluster: str, limit: float) -> Iterator[Wait]:
    wait = Wait(cluster=cluster, limit=limit)
    with _lock:
        _active.append(wait)
    try:
        yield wait
    finally:
        with _lock:
            _active.remove(wait)


def oldest() -> Wait | None:
    """The call waiting longest, or None when none is in flight."""
    with _lock:
        return _active[0] if _active else None
