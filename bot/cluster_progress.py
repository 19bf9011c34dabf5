"""Progress on the terminal while a cluster is slow to answer.

A spinner on stderr names the cluster and how much of its limit has passed ("waiting for cluster prod:
4 s of 10 s"), so a hung API server is not silence. It appears only on a terminal, only after a second
without an answer, and goes away when the answer (or the one-line error) comes; piped or redirected
output gets nothing.
"""
from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

from bot import cluster_waits as waits

if TYPE_CHECKING:  # rich costs ~90 ms to import: only a terminal that will show the spinner pays it
    from rich.console import Console
    from rich.status import Status

SHOW_AFTER = 1.0


def describe(wait: waits.Wait) -> str:
    return f"waiting for cluster {wait.cluster}: {wait.elapsed():.0f} s of {wait.limit:g} s"


@contextmanager
def cluster_progress(*, enabled: bool = True, console: "Console | None" = None, show_after: float = SHOW_AFTER,
                     poll: float = 0.1) -> Iterator[None]:
    if not enabled or (console is None and not sys.stderr.isatty()):
        yield
        return
    if console is None:
        from rich.console import Console

        console = Console(stderr=True)
    if not console.is_terminal:
        yield
        return
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, kwargs={"console": console, "stop": stop, "show_after": show_after,
                                                      "poll": poll}, daemon=True, name="cluster-progress")
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()


def _watch(*, console: "Console", stop: threading.Event, show_after: float, poll: float) -> None:
    status: "Status | None" = None
    try:
        while not stop.wait(poll):
            wait = waits.oldest()
            if wait is not None and wait.elapsed() >= show_after:
                if status is None:
                    status = console.status(describe(wait))
                    status.start()
                else:
                    status.update(describe(wait))
            elif status is not None:
                status.stop()
                status = None
    finally:
        if status is not None:
            status.stop()
