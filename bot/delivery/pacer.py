"""The pacer every outbound Slack call passes: per method (workspace-wide) and per channel for posts,
both in windows shared by the worker processes of one replica. Answers wait for a slot until their
deadline; best-effort calls (progress) take one only when half the window is still free, and are
dropped otherwise.

Channels are hashed into a fixed number of shared buckets, each paced like one channel: a post about an
incident goes to the incident's own thread, which may be in a channel another worker serves, so a
channel's posts do not all come from one process (bench_limits: about 90 of 350 posts refused at 200
concurrent commands when channel windows were per process). Two channels sharing a bucket are only
paced a little more than needed.
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from bot.delivery.limits import CHANNEL_BUCKETS, CHANNEL_LIMITS, METHOD_LIMITS, MethodLimit, channel_key, scaled
from bot.delivery.windows import SlidingWindows
from bot.metrics import pacer_wait


class PaceTimeout(Exception):
    """No slot before the call's deadline."""


class Pacer:
    def __init__(self, windows: SlidingWindows | None = None, *, share: float = 1.0,
                 channel_limits: dict[str, MethodLimit] | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.windows = windows or SlidingWindows(method_limits(share))
        self._channel_limits = channel_limits if channel_limits is not None else CHANNEL_LIMITS
        self._lock = threading.Lock()
        self._held: dict[str, float] = {}  # 429s of methods we do not pace
        self._taken = threading.local()  # the slots this thread's last call took: [(key, stamp)]
        self._clock = clock
        self._sleep = sleep

    def acquire(self, method: str, channel: str | None, deadline: float) -> None:
        """Wait for a slot for ``method`` (and ``channel``); PaceTimeout if none frees before ``deadline``."""
        while True:
            wait = self._reserve(method, channel, spare=0)
            if wait <= 0:
                return
            now = self._clock()
            if now + wait > deadline:
                raise PaceTimeout(f"{method}: no slot within {max(0.0, deadline - now):.1f} s")
            with pacer_wait():
                self._sleep(wait)

    def try_acquire(self, method: str, channel: str | None) -> bool:
        """A slot now, only if half the method's window would still be free; False: drop the call."""
        spare = self.windows.limits[method].per_window // 2 if self.windows.paced(method) else 0
        return self._reserve(method, channel, spare=spare) <= 0

    def finished(self, method: str, channel: str | None) -> None:
        """The call that took slots on this thread has been answered or failed: they count from now.

        Slack counts a call when it arrives, which is after its slot was taken and no later than its
        answer; until then a slot counts as taken in the future (windows.IN_FLIGHT_S), so a call held up
        on a busy machine cannot arrive inside the window of the calls after it."""
        now = self._clock()
        for key, stamp in getattr(self._taken, "slots", ()):
            self.windows.settle(key, stamp, now)
        self._taken.slots = ()

    def hold(self, method: str, channel: str | None, retry_after: float) -> None:
        until = self._clock() + max(retry_after, 0.0)
        if self.windows.paced(method):
            self.windows.hold(method, until)
        else:
            with self._lock:
                self._held[method] = max(self._held.get(method, 0.0), until)

    def _reserve(self, method: str, channel: str | None, *, spare: int) -> float:
        now = self._clock()
        with self._lock:
            held = self._held.get(method, 0.0)
        if now < held:
            return held - now
        wanted = [(method, spare)] if self.windows.paced(method) else []
        if method in self._channel_limits and channel:
            bucket = channel_key(method, channel)
            if self.windows.paced(bucket):
                wanted.append((bucket, 0))
        if not wanted:
            return 0.0
        wait, stamps = self.windows.reserve_all(wanted, now)
        if wait <= 0:
            self._taken.slots = stamps
        return wait


def method_limits(share: float = 1.0, *, channels: bool = True) -> dict[str, MethodLimit]:
    """Every window a replica keeps: each paced method's, and (``channels``) the channel buckets'."""
    limits = {method: scaled(limit, share) for method, limit in METHOD_LIMITS.items()}
    if channels:
        for method, limit in CHANNEL_LIMITS.items():
            for bucket in range(CHANNEL_BUCKETS):
                limits[f"{method}@{bucket}"] = limit
    return limits

