"""Sliding windows of call times, one per paced method (and channel bucket), in memory that worker
processes can share.

Layout per window: [unused, held_until, t_0 .. t_{n-1}], the times of the last n calls (monotonic clock,
the same in every process of the machine). A call not yet answered holds ``now + IN_FLIGHT_S``; its
answer settles it to the answer's time. A call may go when one of the n is a whole window old: never
more than n calls in any window by Slack's count (arrivals), bursts included, which is how the fake
Slack (and a strict reading of Slack's tiers) counts.
"""
from __future__ import annotations

import array
import math
import threading
from typing import Any, Mapping, MutableSequence

from bot.delivery.limits import MethodLimit

NEVER = -math.inf
# A slot taken for a call not yet answered counts as taken this far in the future: the call may arrive
# at Slack any time before its answer. Settled to the answer's time by ``settle``; a call whose end is
# never reported frees its slot after this long.
IN_FLIGHT_S = 30.0
# How often a caller waiting on a call in flight looks again: its answer usually comes within this.
IN_FLIGHT_POLL_S = 0.05


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
        return self.reserve_all([(key, spare)], now)[0]

    def reserve_all(self, wanted: list[tuple[str, int]], now: float) -> tuple[float, list[tuple[str, float]]]:
        """A slot in every window of ``wanted`` ((key, spare) pairs), all or none: (0, [(key, stamp)])
        when taken (settle each stamp when the call is answered), else (seconds until one frees, [])."""
        with self._lock:
            free: list[int] = []
            wait = 0.0
            for key, spare in wanted:
                key_wait, slot = self._wait(key, now, spare)
                wait = max(wait, key_wait)
                free.append(slot)
            if wait > 0:
                return wait, []
            stamp = now + IN_FLIGHT_S
            for (key, _), slot in zip(wanted, free):
                self._times[self._offsets[key] + 2 + slot] = stamp
            return 0.0, [(key, stamp) for key, _ in wanted]

    def _wait(self, key: str, now: float, spare: int) -> tuple[float, int]:
        """(0, the slot to take) or (seconds until one frees, -1). Calls are answered out of order, so
        a slot is free when its time is a whole window old, wherever it sits; ``spare`` more must be."""
        limit = self.limits[key]
        base = self._offsets[key]
        held = self._times[base + 1]
        if now < held:
            return held - now, -1
        times = self._times[base + 2 : base + 2 + limit.per_window]
        order = sorted(range(len(times)), key=times.__getitem__)
        need = min(spare, len(times) - 1)
        nth = times[order[need]]
        if nth > now:  # held by a call still in flight: free a window after its answer, whenever that is
            return IN_FLIGHT_POLL_S, -1
        if now - nth < limit.window_s:
            return nth + limit.window_s - now, -1
        return 0.0, order[0]

    def settle(self, key: str, stamp: float, now: float) -> None:
        """The call whose slot holds ``stamp`` (its in-flight mark) was answered at ``now``: the slot
        counts from then."""
        base = self._offsets[key]
        n = self.limits[key].per_window
        with self._lock:
            for i in range(n):
                if self._times[base + 2 + i] == stamp:
                    self._times[base + 2 + i] = now
                    return

    def hold(self, key: str, until: float) -> None:
        """Slack said 429: no call of ``key`` before ``until``, from any thread or process."""
        base = self._offsets[key]
        with self._lock:
            self._times[base + 1] = max(self._times[base + 1], until)
