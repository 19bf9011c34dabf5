"""`gpubot serve` acknowledges Slack in its own process and runs diagnoses in worker processes: the
answer still arrives, a command that has to wait is told where it stands, and a worker that dies is
replaced."""
from __future__ import annotations

import os
import signal
import subprocess
import time

from tests.fakes.slack_api import FakeSlack
from tests.slack.test_shutdown import COMMAND, _answered, _clear_faults, _fault, _serving


def _workers(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid), "-f", "spawn_main"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


# Generous: starting worker processes imports the whole diagnosis stack, which takes tens of seconds on
# a loaded 2-core machine; the waits end as soon as the condition holds.
def _wait(check, what: str, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    return found


def test_diagnoses_run_in_worker_processes_and_answer(seed_sim, tmp_path):
    with FakeSlack() as slack, _serving(seed_sim, slack, tmp_path, grace=30, GPUBOT_WORKERS="2") as (proc, send, log):
        _wait(lambda: log.read_text().count("ready") >= 2, "two workers")
        assert len(_workers(proc.pid)) >= 2
        reply = send.slash_command(COMMAND, response_url=slack.response_url())
        assert reply.status == 200
        _wait(lambda: _answered(slack), "the answer")
        assert "worker" in log.read_text()


def test_a_command_that_must_wait_is_told_where_it_stands(seed_sim, tmp_path):
    with FakeSlack() as slack, _serving(seed_sim, slack, tmp_path, grace=30, GPUBOT_WORKERS="1",
                                        GPUBOT_WORKER_THREADS="1") as (proc, send, log):
        _wait(lambda: "ready" in log.read_text(), "the worker")
        _fault(seed_sim, delay=4)  # the first diagnosis holds the only thread for a while
        try:
            first = send.slash_command(COMMAND, response_url=slack.response_url())
            assert first.status == 200 and "Queued" not in first.body
            slack.wait_for("chat.postMessage", timeout=30, predicate=lambda c: c.args["text"].startswith("Diagnosing"))
            second = send.slash_command(COMMAND, response_url=slack.response_url())
            third = send.slash_command(COMMAND, response_url=slack.response_url())
        finally:
            _clear_faults(seed_sim)
        assert second.status == 200 and "Queued: 1 request ahead of yours" in second.body, second.body
        assert "Queued: 2 requests ahead of yours" in third.body, third.body
        _wait(lambda: len(_answered(slack)) >= 3, "all three answers", timeout=180)


def test_a_worker_that_dies_is_replaced(seed_sim, tmp_path):
    with FakeSlack() as slack, _serving(seed_sim, slack, tmp_path, grace=30, GPUBOT_WORKERS="1") as (proc, send, log):
        _wait(lambda: "ready" in log.read_text(), "the worker")
        [worker] = _wait(lambda: _workers(proc.pid), "the worker process")
        os.kill(worker, signal.SIGKILL)
        _wait(lambda: "exited with" in log.read_text(), "the supervisor to notice")
        _wait(lambda: log.read_text().count("ready") >= 2, "a new worker")
        assert send.slash_command(COMMAND, response_url=slack.response_url()).status == 200
        _wait(lambda: _answered(slack), "the answer from the new worker")
