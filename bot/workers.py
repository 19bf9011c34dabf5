"""Diagnoses in worker processes, so the process that acknowledges Slack never waits behind them.

Two cores shared by fifty diagnoses in one Python process leave an ack queued behind the GIL for
seconds. ``gpubot serve`` therefore acks in its own process and hands each lazy listener (Bolt's name
for the work after the ack) to a worker process, as Bolt's AWS Lambda adapter does
(slack_bolt/adapter/aws_lambda/lazy_listener_runner.py): the request is dispatched again in the worker
with ``x-slack-bolt-lazy-only`` and the listener's name, and Bolt runs only that function there.

- A request goes to the worker its conversation hashes to: a channel's posts are paced in one process
  (one message a second per channel), and what a worker holds in memory for a conversation (a private
  explanation waiting for "Share in channel") is found again by the next click there.
- Per-method limits are shared by all workers through one window in shared memory (bot.delivery).
- The serving process knows how many requests each worker has not finished, so a command can be told
  where it stands in the queue; a worker that dies is started again and its lost work logged.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Any, Callable

from slack_bolt import App, BoltRequest
from slack_bolt.lazy_listener import LazyListenerRunner
from slack_bolt.util.utils import get_name_for_callable

from bot.delivery.pacer import Pacer, method_limits
from bot.delivery.windows import SlidingWindows
from bot.metrics import WorkerMetrics
from bot.settings import Settings

log = logging.getLogger(__name__)
_CTX = multiprocessing.get_context("spawn")  # never fork a process that already runs threads
SUPERVISE_EVERY_S = 1.0
WORKER_NICENESS = 10


@dataclass(frozen=True)
class Job:
    """A lazy listener's request, as plain data a worker can rebuild it from."""

    mode: str
    body: Any  # the raw body (HTTP mode: exactly the bytes Slack signed) or the Socket Mode payload
    headers: dict[str, list[str]]
    query: dict[str, list[str]]

    @classmethod
    def of(cls, request: BoltRequest, function_name: str | None = None) -> "Job":
        headers = {k: list(v) for k, v in request.headers.items()}
        headers["x-slack-bolt-lazy-only"] = ["1"]
        headers["x-slack-bolt-lazy-function-name"] = [function_name or request.lazy_function_name or ""]
        body = request.raw_body if request.mode == "http" else request.body
        return cls(request.mode, body, headers, {k: list(v) for k, v in request.query.items()})

    def request(self) -> BoltRequest:
        return BoltRequest(body=self.body, headers=self.headers, query=self.query, mode=self.mode)


def conversation_of(body: dict) -> str:
    """The channel (or person) a request belongs to: its worker is chosen by it."""
    event = body.get("event") or {}
    container = body.get("container") or {}
    return str(body.get("channel_id") or event.get("channel") or container.get("channel_id")
               or (body.get("channel") or {}).get("id") or (body.get("user") or {}).get("id")
               or body.get("user_id") or event.get("user") or "")


class WorkerPool:
    def __init__(self, settings: Settings, *, processes: int, threads: int) -> None:
        if processes < 1:
            raise ValueError("a worker pool needs at least one process")
        self.settings = settings
        self.threads = threads
        limits = method_limits(settings.slack_rate_share)
        self._window_storage = _CTX.Array("d", SlidingWindows.initial(limits), lock=False)
        self._window_lock = _CTX.Lock()
        self.pacer = Pacer(SlidingWindows(limits, storage=self._window_storage, lock=self._window_lock))
        self._queues = [_CTX.Queue() for _ in range(processes)]
        self._finished = _CTX.Array("q", processes)  # per worker, written by the worker
        self._submitted = [0] * processes
        self._lost = [0] * processes
        self._procs: list[Any] = [None] * processes
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._supervisor: threading.Thread | None = None
        self.metrics = WorkerMetrics()  # the directory the workers' samples go to (bot.metrics)

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> "WorkerPool":
        for i in range(len(self._queues)):
            self._spawn(i)
        self._supervisor = threading.Thread(target=self._supervise, name="gpubot-workers", daemon=True)
        self._supervisor.start()
        return self

    def _spawn(self, i: int) -> None:
        proc = _CTX.Process(target=worker_main, name=f"gpubot-worker-{i}", daemon=True,
                            args=(self.settings, i, self._queues[i], self._finished, self._window_storage,
                                  self._window_lock, self.threads))
        with self.metrics.spawning():
            proc.start()
        self._procs[i] = proc

    def _supervise(self) -> None:
        while not self._stopping.wait(SUPERVISE_EVERY_S):
            for i, proc in enumerate(self._procs):
                if proc is not None and not proc.is_alive() and not self._stopping.is_set():
                    with self._lock:
                        lost = self._outstanding(i)
                        self._lost[i] += lost
                    log.error("gpubot: worker %d (pid %s) exited with %s; %d requests it held are lost (their "
                              "users can run them again); starting a new one", i, proc.pid, proc.exitcode, lost)
                    self.metrics.process_died(proc.pid)
                    self._queues[i] = _CTX.Queue()  # what the dead worker had not taken went with it
                    self._spawn(i)

    def stop(self, grace: float) -> bool:
        """Let the workers finish what they hold, up to ``grace`` seconds; False if some was abandoned."""
        idle = self.wait_idle(grace)
        self._stopping.set()
        for queue in self._queues:
            queue.put(None)
        deadline = time.monotonic() + 5
        for proc in self._procs:
            if proc is not None:
                proc.join(max(0.1, deadline - time.monotonic()))
                if proc.is_alive():
                    proc.kill()  # workers ignore SIGTERM (the serving process decides when they stop)
        self.metrics.close()
        return idle

    @property
    def alive(self) -> bool:
        """Every worker process running (a dead one is restarted within SUPERVISE_EVERY_S)."""
        supervising = self._supervisor is not None and self._supervisor.is_alive()
        return supervising and all(proc is not None and proc.is_alive() for proc in self._procs)

    # -- work -----------------------------------------------------------------------------------
    def worker_for(self, body: dict) -> int:
        return zlib.crc32(conversation_of(body).encode()) % len(self._queues)

    def submit(self, job: Job, body: dict) -> None:
        i = self.worker_for(body)
        with self._lock:
            self._submitted[i] += 1
        self._queues[i].put(job)

    def ahead(self, body: dict) -> int:
        """Requests that must finish or start before this one can (0: it starts at once)."""
        i = self.worker_for(body)
        with self._lock:
            return max(0, self._outstanding(i) - self.threads + 1)

    def _outstanding(self, i: int) -> int:
        return self._submitted[i] - self._finished[i] - self._lost[i]

    @property
    def unfinished(self) -> int:
        with self._lock:
            return sum(self._outstanding(i) for i in range(len(self._queues)))

    def wait_idle(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.unfinished > 0:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True


def _die_with_parent() -> None:
    """End this worker the moment the serving process is gone, however it went (SIGKILL, the OOM
    killer), whatever the worker is doing (starting, or a diagnosis waiting on a hung API server).

    multiprocessing's spawn start method hands each child the read end of a pipe only the parent holds
    open (``parent_process().sentinel``, Python 3.8+): it reads as closed once the parent is gone, on
    every platform. Linux's PR_SET_PDEATHSIG would do it with a signal, but prctl(2) ties it to the
    parent *thread* that started the child, and the supervisor thread restarts dead workers: a
    restarted worker would be killed when that thread ends at shutdown, mid-way through its grace."""
    import multiprocessing.connection

    parent = multiprocessing.parent_process()
    if parent is None:  # not started by multiprocessing (a test calling worker_main directly)
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        log.warning("gpubot: worker (pid %d): the serving process is gone; exiting", os.getpid())
        os._exit(1)  # no cleanup to wait for: nobody is left to take this worker's answers or counts

    threading.Thread(target=watch, name="gpubot-parent-watch", daemon=True).start()


class ProcessLazyRunner(LazyListenerRunner):
    """Bolt's lazy listeners, started in the worker processes instead of this process's threads."""

    def __init__(self, logger: logging.Logger, pool: WorkerPool) -> None:
        self.logger = logger
        self.pool = pool

    def start(self, function: Callable[..., None], request: BoltRequest) -> None:
        self.pool.submit(Job.of(request), request.body)


def run_lazy_listeners_in(app: App, pool: WorkerPool) -> None:
    """Hand ``app``'s lazy listeners to ``pool``'s processes.

    Bolt deep-copies a request before starting its lazy listener on another thread
    (slack_bolt/listener/thread_runner.py, _start_lazy_function); a worker process rebuilds the request
    from its bytes anyway, so the copy is skipped: it was a fifth of each ack's time."""
    runner = app.listener_runner
    runner.lazy_listener_runner = ProcessLazyRunner(app.logger, pool)

    def start_in_worker(lazy_func: Callable[..., None], request: BoltRequest) -> None:
        pool.submit(Job.of(request, get_name_for_callable(lazy_func)), request.body)

    runner._start_lazy_function = start_in_worker


def worker_main(settings: Settings, index: int, queue, finished, window_storage, window_lock, threads: int) -> None:
    """A worker process: one Bolt app (no signature check: only the serving process hands it requests,
    already verified) running each request's lazy listener on ``threads`` threads."""
    import queue as queues
    import signal
    from concurrent.futures import ThreadPoolExecutor
    from concurrent.futures import wait as wait_futures

    _die_with_parent()  # first: what follows (imports, the Bolt app) takes seconds on a loaded machine

    from bot.app import create_app
    from bot.logs import configure_logging
    from bot.render import charts

    # Stopping is the serving process's call (it lets the work finish first): a Ctrl-C or SIGTERM sent
    # to the whole process group must not cut diagnoses short here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    parent = os.getppid()
    # Acks first: on a busy machine the kernel gives the serving process the CPU before the diagnoses.
    os.nice(WORKER_NICENESS)
    configure_logging(settings, worker=index)
    charts.warm_up_in_background()  # the charts of /gpu nodes are drawn here, not in the serving process
    pacer = Pacer(SlidingWindows(method_limits(settings.slack_rate_share), storage=window_storage, lock=window_lock))
    app = create_app(settings, pacer=pacer, worker=True)
    log.info("gpubot: worker %d (pid %d) ready", index, os.getpid())

    def run(job: Job) -> None:
        try:
            app.dispatch(job.request())
        except Exception:  # a listener's own errors are handled by Bolt; this is anything else
            log.exception("gpubot: a request failed in worker %d", index)
        finally:
            with finished.get_lock():
                finished[index] += 1

    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"gpubot-worker-{index}")
    running: set = set()
    while True:
        if os.getppid() != parent:
            # The serving process was killed outright: nobody will wait for this work or count it.
            log.warning("gpubot: worker %d: the serving process is gone; exiting", index)
            os._exit(1)
        try:
            job = queue.get(timeout=1.0)
        except queues.Empty:
            continue
        if job is None:
            break
        running = {future for future in running if not future.done()}
        running.add(pool.submit(run, job))
    # The serving process asked us to stop after its grace: finish what we hold, unless it is gone (an
    # answer can wait out its whole deadline against a Slack that no longer answers).
    pool.shutdown(wait=False)
    while wait_futures(running, timeout=0.5).not_done:
        if os.getppid() != parent:
            log.warning("gpubot: worker %d: the serving process is gone; exiting with work unfinished", index)
            os._exit(1)
