"""`gpubot serve` as deployed, in a process of its own, against the simulated cluster and a fake Slack."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import SIM_ENV
from tests.fakes import workspace as ws
from tests.fakes.ports import free_port
from tests.fakes.signing import SlackRequests
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import migrated_sqlite

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Serving:
    proc: subprocess.Popen
    send: SlackRequests
    log: Path
    port: int
    probe_port: int


@contextmanager
def serving(sim, slack: FakeSlack, tmp_path: Path, *, grace: float = 20, mode: str = "http", **extra_env: str):
    port, probe_port = free_port(), free_port()
    env = {**os.environ, **SIM_ENV, "KUBECONFIG": str(sim.kubeconfig), "SLACK_BOT_TOKEN": ws.BOT_TOKEN,
           "SLACK_API_URL": slack.url, "GPUBOT_SLACK_MODE": mode, "GPUBOT_SHUTDOWN_GRACE": str(grace),
           "PYTHONPATH": str(ROOT), "GPUBOT_DATABASE_URL": migrated_sqlite(tmp_path / "gpubot.db"), **extra_env}
    env["GPUBOT_HTTP_PORT"] = str(port)  # Socket Mode serves /alertmanager on it too
    env["GPUBOT_PROBE_PORT"] = str(probe_port)
    if mode == "http":
        env.update(SLACK_SIGNING_SECRET=ws.SIGNING_SECRET)
        ready = b"listening for Slack"
    else:
        env.update(SLACK_APP_TOKEN=ws.APP_TOKEN)
        ready = b"connected to Slack in Socket Mode"
    log = tmp_path / "serve.log"
    with log.open("w") as out:  # a file, not a pipe nobody reads
        proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], env=env, cwd=ROOT,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while ready not in log.read_bytes():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "gpubot serve did not start"
            time.sleep(0.1)
        yield Serving(proc, SlackRequests(f"http://127.0.0.1:{port}", secret=ws.SIGNING_SECRET), log, port,
                      probe_port)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
