"""Refuses an exact replay of a signed Slack request within the window Bolt still accepts it in.

Only requests whose signature was already checked are recorded, so forged traffic cannot fill the set.
The key is the ``X-Slack-Signature`` value itself: it is an HMAC over the timestamp and the body, so two
requests share it only if they are the same request. Memory stays bounded: an entry leaves once its
timestamp is older than the window (after that the signature check refuses the request anyway), and a
hard cap drops the oldest first. Per replica and in memory; events are deduplicated across replicas by
``event_id`` in the database.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Callable

log = logging.getLogger(__name__)

SIGNATURE_WINDOW = 5 * 60  # Slack's, and Bolt's: a timestamp further than this from now is refused
DEFAULT_CAPACITY = 100_000


class ReplayGuard:
    def __init__(self, *, window: float = SIGNATURE_WINDOW, capacity: int = DEFAULT_CAPACITY,
                 clock: Callable[[], float] = time.time) -> None:
        if capacity < 1:
            raise ValueError(f"replay guard capacity must be at least 1, not {capacity}")
        self._window = window
        self._capacity = capacity
        self._clock = clock
        self._seen: set[str] = set()
        # (expiry, signature) in insertion order. Expiries are kept non-decreasing (an entry never
        # leaves before one recorded earlier), so eviction only ever looks at the left end: O(1).
        self._order: deque[tuple[float, str]] = deque()
        self._lock = threading.Lock()
        self._warned_full = False

    def __len__(self) -> int:
        return len(self._seen)

    def first_time(self, signature: str, timestamp: int) -> bool:
        """True the first time a verified ``signature`` is seen (and records it), False for a replay."""
        now = self._clock()
        with self._lock:
            self._expire(now)
            if signature in self._seen:
                return False
            expiry = timestamp + self._window
            if self._order and self._order[-1][0] > expiry:
                expiry = self._order[-1][0]  # kept a little longer, never shorter, than needed
            self._seen.add(signature)
            self._order.append((expiry, signature))
            if len(self._order) > self._capacity:
                self._drop_oldest(now)
            return True

    def _expire(self, now: float) -> None:
        while self._order and self._order[0][0] < now:
            self._seen.discard(self._order.popleft()[1])

    def _drop_oldest(self, now: float) -> None:
        self._seen.discard(self._order.popleft()[1])
        if not self._warned_full:
            # More signed requests in five minutes than the cap: a replay of the oldest would pass.
            log.warning("replay guard full (%d signed requests within %d s): the oldest are dropped early; "
                        "raise its capacity if this replica really receives that many", self._capacity,
                        self._window)
            self._warned_full = True
