"""The pacer every outbound Slack call passes: per method (workspace-wide, shared by the worker
processes of one replica) and per channel for posts (the channel's work runs in one process, see
``bot.workers``). Answers wait for a slot until their deadline; best-effort calls (progress) take one
only when half the window is still free, and are dropped otherwise."""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Callable

from bot.delivery.limits import CHANNEL_LIMITS, METHOD_LIMITS, MethodLimit, scaled
from bot.delivery.windows import SlidingWindows

MAX_CHANNELS = 10_000  # channel windows kept (least recently used dropped: a dropped one is empty anyway)


class PaceTimeout(Exception):
    """No slot before the call's deadline."""


class Pacer:
    def __init__(self, windows: SlidingWindows | None = None, *, share: float = 1.0,
                 channel_limits: dict[str, MethodLimit] | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.windows = windows or SlidingWindows(method_limits(share))
        self._channel_limits = channel_limits if channel_limits is not None else CHANNEL_LIMITS
        self._channels: OrderedDict[tuple[str, str], SlidingWindows] = OrderedDict()
        self._channel_lock = threading.Lock()
        self._held: dict[str, float] = {}  # 429s of methods we do not pace
        self._taken = threading.local()  # the slot this thread took last: (method, stamp)
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
            self._sleep(wait)

    def try_acquire(self, method: str, channel: str | None) -> bool:
        """A slot now, only if half the method's window would still be free; False: drop the call."""
        spare = self.windows.limits[method].per_window // 2 if self.windows.paced(method) else 0
        return self._reserve(method, channel, spare=spare) <= 0

    def finished(self, method: str, channel: str | None) -> None:
        """The call that took a slot (on this thread) has been answered or failed. Windows count it from
        here, not from when its slot was taken: Slack counts arrivals, and a call held up on a busy machine
        arrives late, so counting from the reservation let later calls arrive inside its window
        (bench_limits: about 100 of 350 posts refused at 200 concurrent commands)."""
        now = self._clock()
        with self._channel_lock:
            window = self._channel_window(method, channel)
            if window is not None:
                window.finished(now)
        taken = getattr(self._taken, "slot", None)
        if taken is not None and taken[0] == method:
            self._taken.slot = None
            self.windows.settle(method, taken[1], now)

    def hold(self, method: str, channel: str | None, retry_after: float) -> None:
        until = self._clock() + max(retry_after, 0.0)
        if self.windows.paced(method):
            self.windows.hold(method, until)
        else:
            with self._channel_lock:
                self._held[method] = max(self._held.get(method, 0.0), until)

    def _reserve(self, method: str, channel: str | None, *, spare: int) -> float:
        now = self._clock()
        with self._channel_lock:
            held = self._held.get(method, 0.0)
            if now < held:
                return held - now
            window = self._channel_window(method, channel)
            if window is not None:
                # Checked first and taken only with the method's slot, so a refused call uses neither.
                wait = window.reserve(method, now)
                if wait > 0:
                    return wait
            if not self.windows.paced(method):
                return 0.0
            wait = self.windows.reserve(method, now, spare=spare)
            if wait > 0 and window is not None:
                window.release_last(method)
            if wait <= 0:
                self._taken.slot = (method, now)
            return wait

    def _channel_window(self, method: str, channel: str | None) -> "_ChannelWindow | None":
        limit = self._channel_limits.get(method)
        if limit is None or not channel:
            return None
        key = (method, channel)
        window = self._channels.get(key)
        if window is None:
            window = self._channels[key] = _ChannelWindow(limit)
            if len(self._channels) > MAX_CHANNELS:
                self._channels.popitem(last=False)
        else:
            self._channels.move_to_end(key)
        return window


class _ChannelWindow:
    """One channel's window (guarded by the pacer's channel lock): the times its posts were answered,
    and how many are still in flight (their arrival at Slack is not known yet, so they block a slot)."""

    IN_FLIGHT_POLL_S = 0.05

    def __init__(self, limit: MethodLimit) -> None:
        self.limit = limit
        self.times: list[float] = []
        self.in_flight = 0

    def reserve(self, _method: str, now: float) -> float:
        self.times = [t for t in self.times if now - t < self.limit.window_s]
        if len(self.times) + self.in_flight >= self.limit.per_window:
            return self.times[0] + self.limit.window_s - now if self.times else self.IN_FLIGHT_POLL_S
        self.in_flight += 1
        return 0.0

    def finished(self, now: float) -> None:
        self.in_flight = max(0, self.in_flight - 1)
        self.times.append(now)

    def release_last(self, _method: str) -> None:
        self.in_flight = max(0, self.in_flight - 1)  # the method's own limit refused the call: never sent


def method_limits(share: float = 1.0) -> dict[str, MethodLimit]:
    return {method: scaled(limit, share) for method, limit in METHOD_LIMITS.items()}
