"""Sliding windows of call times, one per paced method, in memory that worker processes can share.

Layout per method: [head, held_until, t_0 .. t_{n-1}], a ring of the last n call times (monotonic
clock, the same in every process of the machine). A call may go when the oldest of the last n is older
than the window: never more than n calls in any window, bursts included, which is how the fake Slack
(and a strict reading of Slack's tiers) counts.
"""
from __future__ import annotations

import array
import math
import threading
from typing import Any, Mapping, MutableSequence

from bot.delivery.limits import MethodLimit

NEVER = -math.inf


class SlidingWindows:
    def __init__(self, limits: Mapping[str, MethodLimit], *, storage: MutableSequence[float] | None = None,
                 lock: Any = None) -> None:
        self.limits = dict(limits)
        self._offsets: dict[str, int] = {}
        size = 0
        for key in sorted(self.limits):
            self._offsets[key] = size
            size += 2 + self.limits[key].per_window
        if storage is None:
            storage = array.array("d", [NEVER] * size)
            for offset in self._offsets.values():
                storage[offset] = 0.0
        elif len(storage) != size:
            raise ValueError(f"shared window storage has {len(storage)} slots, the limits need {size}")
        self._times = storage
        self._lock = lock if lock is not None else threading.Lock()

    @classmethod
    def storage_size(cls, limits: Mapping[str, MethodLimit]) -> int:
        return sum(2 + limit.per_window for limit in limits.values())

    @classmethod
    def initial(cls, limits: Mapping[str, MethodLimit]) -> list[float]:
        """Values for fresh shared storage (see ``bot.workers``)."""
        return list(cls(limits)._times)

    def paced(self, key: str) -> bool:
        return key in self._offsets

    def reserve(self, key: str, now: float, *, spare: int = 0) -> float:
        """Take a slot now and return 0, or return the seconds until one frees. ``spare`` > 0 takes the
        slot only if that many more would still be free (best-effort work leaves room for answers)."""
        limit = self.limits[key]
        base = self._offsets[key]
        n = limit.per_window
        with self._lock:
            held = self._times[base + 1]
            if now < held:
                return held - now
            head = int(self._times[base])
            probe = min(spare, n - 1)
            oldest = self._times[base + 2 + (head + probe) % n]
            if now - oldest < limit.window_s:
                return oldest + limit.window_s - now
            self._times[base + 2 + head] = now
            self._times[base] = float((head + 1) % n)
            return 0.0

    def settle(self, key: str, stamp: float, now: float) -> None:
        """The call that took its slot at ``stamp`` has been answered at ``now``: the slot counts from
        then. Slack counts a call when it arrives, which is after the slot was taken and no later than
        the answer; a call held up on a busy machine would otherwise arrive inside the window of the
        call ``n`` after it."""
        base = self._offsets[key]
        n = self.limits[key].per_window
        with self._lock:
            for i in range(n):
                if self._times[base + 2 + i] == stamp:
                    self._times[base + 2 + i] = max(stamp, now)
                    return

    def hold(self, key: str, until: float) -> None:
        """Slack said 429: no call of ``key`` before ``until``, from any thread or process."""
        base = self._offsets[key]
        with self._lock:
            self._times[base + 1] = max(self._times[base + 1], until)
