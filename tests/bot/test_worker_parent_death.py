"""Worker processes never outlive `gpubot serve`: killed outright (SIGKILL, the OOM killer, a node
lost) at any moment, even while the workers are still starting, its workers go within seconds; stopped
with SIGTERM, it lets them finish and takes them with it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import SIM_ENV
from tests.fakes import workspace as ws
from tests.fakes.ports import free_port
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import migrated_sqlite
from tests.slack.serve_process import serving

ROOT = Path(__file__).resolve().parents[2]
GONE_WITHIN_S = 5.0


def _workers(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid), "-f", "spawn_main"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for whoever adopted it to reap it is gone for our purpose)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def _wait(check, what: str, timeout: float):
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return found


def _all_gone(pids: list[int], within: float) -> None:
    deadline = time.monotonic() + within
    while alive := [pid for pid in pids if _alive(pid)]:
        if time.monotonic() > deadline:
            for pid in alive:  # leave nothing behind for the next test
                os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"worker processes {alive} outlived their parent by {within} s")
        time.sleep(0.05)


def test_workers_still_starting_die_with_a_killed_parent(seed_sim, tmp_path):
    with FakeSlack() as slack:
        env = {**os.environ, **SIM_ENV, "KUBECONFIG": str(seed_sim.kubeconfig), "SLACK_BOT_TOKEN": ws.BOT_TOKEN,
               "SLACK_API_URL": slack.url, "SLACK_SIGNING_SECRET": ws.SIGNING_SECRET, "GPUBOT_SLACK_MODE": "http",
               "PYTHONPATH": str(ROOT), "GPUBOT_DATABASE_URL": migrated_sqlite(tmp_path / "gpubot.db"),
               "GPUBOT_HTTP_PORT": str(free_port()), "GPUBOT_PROBE_PORT": str(free_port()), "GPUBOT_WORKERS": "2"}
        log = tmp_path / "serve.log"
        with log.open("w") as out:
            proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], env=env, cwd=ROOT, stdout=out,
                                    stderr=subprocess.STDOUT)
        try:
            workers = _wait(lambda: len(_workers(proc.pid)) == 2 and _workers(proc.pid), "two worker processes", 120)
            time.sleep(1.0)  # into their start-up (imports, the Bolt app), well before they are ready
            proc.kill()
            proc.wait(timeout=10)
            _all_gone(workers, GONE_WITHIN_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)


def test_busy_workers_die_with_a_killed_parent(seed_sim, tmp_path):
    with FakeSlack() as slack, serving(seed_sim, slack, tmp_path, GPUBOT_WORKERS="2") as served:
        _wait(lambda: served.log.read_text().count("ready") >= 2, "two workers ready", 120)
        workers = _workers(served.proc.pid)
        assert len(workers) == 2
        served.proc.kill()
        served.proc.wait(timeout=10)
        _all_gone(workers, GONE_WITHIN_S)


def test_sigterm_takes_the_workers_with_it(seed_sim, tmp_path):
    with FakeSlack() as slack, serving(seed_sim, slack, tmp_path, grace=5, GPUBOT_WORKERS="2") as served:
        _wait(lambda: served.log.read_text().count("ready") >= 2, "two workers ready", 120)
        workers = _workers(served.proc.pid)
        served.proc.send_signal(signal.SIGTERM)
        assert served.proc.wait(timeout=30) == 0
        _all_gone(workers, GONE_WITHIN_S)
