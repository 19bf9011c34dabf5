"""The pacer keeps gpubot inside Slack's published limits: per method across threads and processes, per
channel for posts, answers before progress, and a 429's Retry-After for everyone."""
from __future__ import annotations

import multiprocessing
import threading

import pytest

from bot.delivery.limits import METHOD_LIMITS, MethodLimit
from bot.delivery.pacer import Pacer, PaceTimeout, method_limits
from bot.delivery.windows import SlidingWindows


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _pacer(clock: Clock, **kwargs) -> Pacer:
    return Pacer(clock=clock, sleep=clock.sleep, **kwargs)


def call(pacer: Pacer, method: str, channel: str | None, *, deadline: float) -> None:
    """A call as the client makes it: a slot, the request, then its answer (at once, here)."""
    pacer.acquire(method, channel, deadline=deadline)
    pacer.finished(method, channel)


def test_tier3_allows_50_calls_a_minute_and_the_51st_waits_for_the_oldest_to_age_out():
    clock = Clock()
    pacer = _pacer(clock)
    for _ in range(50):
        call(pacer, "chat.update", "C1", deadline=clock.now + 1)
    assert clock.now == 1000.0  # a burst of the whole window goes at once
    call(pacer, "chat.update", "C1", deadline=clock.now + 120)
    assert clock.now == pytest.approx(1060.5)


def test_posts_are_one_a_second_per_channel_and_channels_do_not_wait_for_each_other():
    clock = Clock()
    pacer = _pacer(clock)
    pacer.acquire("chat.postMessage", "C1", deadline=clock.now + 5)
    clock.now += 0.4  # on the wire; answered
    pacer.finished("chat.postMessage", "C1")
    call(pacer, "chat.postMessage", "C2", deadline=clock.now + 5)
    assert clock.now == 1000.4  # another channel did not wait
    call(pacer, "chat.postMessage", "C1", deadline=clock.now + 5)
    assert clock.now == pytest.approx(1001.5)  # a second (and the margin) after the first was answered


def test_a_post_still_in_flight_holds_its_channel_until_answered():
    # Slack counts a post when it arrives; one still on the wire may arrive any time, so the next waits.
    clock = Clock()
    pacer = _pacer(clock)
    pacer.acquire("chat.postMessage", "C1", deadline=clock.now + 5)
    assert not pacer.try_acquire("chat.postMessage", "C1")
    with pytest.raises(PaceTimeout):
        pacer.acquire("chat.postMessage", "C1", deadline=clock.now + 3)  # never answered: no slot
    pacer.finished("chat.postMessage", "C1")
    start = clock.now
    pacer.acquire("chat.postMessage", "C1", deadline=clock.now + 5)
    assert clock.now == pytest.approx(start + 1.1)
    pacer.finished("chat.update", "C1")  # methods without a channel limit: nothing to settle


def test_a_refused_channel_slot_does_not_spend_the_methods_window():
    clock = Clock()
    limits = {**method_limits(), "chat.postMessage": MethodLimit(2)}
    pacer = _pacer(clock, windows=SlidingWindows(limits))
    assert pacer.try_acquire("chat.postMessage", "C1")
    pacer.finished("chat.postMessage", "C1")
    assert not pacer.try_acquire("chat.postMessage", "C1")  # the channel's second within the second
    call(pacer, "chat.postMessage", "C2", deadline=clock.now + 1)  # the method still had a slot for C2
    assert clock.now == 1000.0


def test_best_effort_takes_a_slot_only_while_half_the_window_is_free():
    clock = Clock()
    pacer = _pacer(clock)
    taken = 0
    for i in range(60):
        if pacer.try_acquire("chat.update", f"C{i}"):
            taken += 1
            pacer.finished("chat.update", f"C{i}")
    assert taken == 25  # the other 25 of chat.update's 50 are kept for answers
    for _ in range(25):
        call(pacer, "chat.update", "C1", deadline=clock.now + 1)  # answers still go at once
    with pytest.raises(PaceTimeout):
        call(pacer, "chat.update", "C1", deadline=clock.now + 30)


def test_retry_after_holds_the_method_for_every_caller_and_unknown_methods_too():
    clock = Clock()
    pacer = _pacer(clock)
    pacer.hold("chat.update", "C1", 7)
    pacer.hold("apps.connections.open", None, 3)
    assert not pacer.try_acquire("chat.update", "C9")
    call(pacer, "chat.update", "C9", deadline=clock.now + 10)
    assert clock.now == pytest.approx(1007.0)
    call(pacer, "apps.connections.open", None, deadline=clock.now + 10)  # 3 s hold already over
    assert clock.now == pytest.approx(1007.0)


def test_share_splits_the_published_limits_between_replicas():
    assert method_limits(0.5)["chat.update"].per_window == METHOD_LIMITS["chat.update"].per_window // 2
    assert method_limits(0.01)["usergroups.users.list"].per_window == 1


def test_channels_are_paced_in_windows_every_worker_process_shares():
    # An incident's thread may sit in a channel another worker serves: the channel's window must be
    # the same one in every process, so it lives in the shared windows.
    clock = Clock()
    windows = SlidingWindows(method_limits())
    first, second = _pacer(clock, windows=windows), _pacer(clock, windows=windows)
    call(first, "chat.postMessage", "C1", deadline=clock.now + 5)
    assert not second.try_acquire("chat.postMessage", "C1")
    call(second, "chat.postMessage", "C1", deadline=clock.now + 5)
    assert clock.now == pytest.approx(1001.1)


def test_threads_never_exceed_the_window_together():
    pacer = Pacer(windows=SlidingWindows({"chat.update": MethodLimit(20, 60.0)}))
    granted: list[bool] = []

    def worker() -> None:
        import time
        for _ in range(10):
            try:
                call(pacer, "chat.update", None, deadline=time.monotonic())  # no waiting: now or never
                granted.append(True)
            except PaceTimeout:
                granted.append(False)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(granted) == 20


def _take(storage, lock, count, out) -> None:
    windows = SlidingWindows({"chat.update": MethodLimit(50)}, storage=storage, lock=lock)
    import time
    out.put(sum(windows.reserve("chat.update", time.monotonic()) == 0 for _ in range(count)))


def test_worker_processes_share_one_window():
    limits = {"chat.update": MethodLimit(50)}
    ctx = multiprocessing.get_context("spawn")
    storage = ctx.Array("d", SlidingWindows.initial(limits), lock=False)
    lock = ctx.Lock()
    out = ctx.Queue()
    procs = [ctx.Process(target=_take, args=(storage, lock, 40, out)) for _ in range(3)]
    for p in procs:
        p.start()
    totals = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    assert sum(totals) == 50, totals  # 120 tried in three processes, 50 granted in the minute


def test_a_call_counts_from_when_it_was_answered():
    # The first of 50 chat.update calls was slow to arrive (answered 10 s after its slot): Slack counts it
    # from its arrival, so the 51st must wait for that, not for the slot's time.
    clock = Clock()
    pacer = _pacer(clock)
    pacer.acquire("chat.update", "C1", deadline=clock.now + 1)
    start = clock.now
    clock.now += 10
    pacer.finished("chat.update", "C1")
    for _ in range(49):
        pacer.acquire("chat.update", "C1", deadline=clock.now + 1)
        pacer.finished("chat.update", "C1")
    window = METHOD_LIMITS["chat.update"].window_s
    pacer.acquire("chat.update", "C1", deadline=clock.now + 120)
    assert clock.now == pytest.approx(start + 10 + window)
    pacer.finished("chat.update", "C1")
    pacer.finished("chat.update", "C1")  # a second report of the same call changes nothing


def test_concurrent_posts_to_one_channel_go_a_second_apart_not_a_stall_apart():
    # Callers waiting on a post still in flight look again as soon as it is answered (not when its
    # provisional time runs out), and Slack (the enforcing fake) sees them a second apart.
    import time

    from bot.slack_client import make_web_client, paced_copy
    from tests.fakes import workspace as ws
    from tests.fakes.slack_api import FakeSlack

    with FakeSlack(enforce_limits=True) as slack:
        pacer = Pacer(SlidingWindows(method_limits()))
        base = make_web_client(token=ws.BOT_TOKEN, base_url=slack.url, pacer=pacer)
        started = time.monotonic()
        threads = [threading.Thread(target=lambda i=i: paced_copy(base, pacer).chat_postMessage(channel="C1", text=f"{i}"))
                   for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        times = sorted(c.time for c in slack.calls("chat.postMessage") if c.status == 200)
        assert len(times) == 4 and not slack.limits.refusals
        assert all(b - a >= 1.0 for a, b in zip(times, times[1:])), times
        assert times[-1] - started < 8, times  # about 3.3 s; a stall per waiter would be 30 s each
