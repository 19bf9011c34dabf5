"""The pool Slack's lazy listeners (diagnoses, explains) run on, counting work not yet finished.

Shutdown waits on it: a pod stopped mid-diagnosis would otherwise leave a "Diagnosing ..." message in
Slack that never turns into an answer."""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor


class WorkPool(ThreadPoolExecutor):
    def __init__(self, max_workers: int = 16) -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix="gpubot-listener")
        self._unfinished = 0
        self._changed = threading.Condition()

    def submit(self, fn, /, *args, **kwargs) -> Future:
        with self._changed:
            self._unfinished += 1
        try:
            future = super().submit(fn, *args, **kwargs)
        except BaseException:
            self._finished()
            raise
        future.add_done_callback(lambda _: self._finished())
        return future

    def _finished(self) -> None:
        with self._changed:
            self._unfinished -= 1
            self._changed.notify_all()

    @property
    def unfinished(self) -> int:
        """Work submitted and not yet done, queued or running."""
        with self._changed:
            return self._unfinished

    def ahead(self, _body: dict | None = None) -> int:
        """Work that must finish or start before new work can (0: it starts at once)."""
        with self._changed:
            return max(0, self._unfinished - self._max_workers + 1)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no work is left; False if some was still running after ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: self._unfinished == 0, timeout)
