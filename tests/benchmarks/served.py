"""The processes a benchmark measures, as deployed: the simulated cluster (`gpubot sim serve`) and the
bot (`gpubot serve`, HTTP mode) talking to a fake Slack Web API in this process."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from tests.fakes import workspace as ws
from tests.fakes.ports import free_port
from tests.fakes.slack_api import FakeSlack


@dataclass
class Served:
    port: int
    probe_port: int
    pid: int  # of `gpubot serve`
    slack: FakeSlack


def wait_for(check, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.1)


def ready(probe_port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{probe_port}/readyz", timeout=1):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def served_bot(*, enforce_limits: bool = False, env: dict[str, str] | None = None) -> Iterator[Served]:
    """``enforce_limits``: the fake Slack answers 429 past Slack's published limits."""
    gpubot = [sys.executable, "-m", "bot.cli"]
    creds = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    with tempfile.TemporaryDirectory() as tmp, FakeSlack(enforce_limits=enforce_limits) as slack:
        kubeconfig = Path(tmp) / "kubeconfig"
        sim = subprocess.Popen([*gpubot, "sim", "serve", "--kubeconfig-out", str(kubeconfig)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        bot = None
        try:
            wait_for(kubeconfig.exists, "the simulated cluster")
            port, probe_port = free_port(), free_port()
            env = {**os.environ, **creds, "KUBECONFIG": str(kubeconfig), "SLACK_BOT_TOKEN": ws.BOT_TOKEN,
                   "SLACK_SIGNING_SECRET": ws.SIGNING_SECRET, "SLACK_API_URL": slack.url,
                   "GPUBOT_SLACK_MODE": "http", "GPUBOT_HTTP_PORT": str(port),
                   "GPUBOT_PROBE_PORT": str(probe_port),
                   # Slack sends from many addresses; here every sender shares loopback's one.
                   "GPUBOT_HTTP_MAX_CONNECTIONS_PER_CLIENT": "1024",
                   "GPUBOT_DATABASE_URL": f"sqlite:///{tmp}/incidents.db", **(env or {})}
            subprocess.run([*gpubot, "db", "upgrade"], env=env, check=True, stdout=subprocess.DEVNULL)
            log = Path(tmp) / "serve.log"
            with log.open("w") as log_file:  # a file, not a pipe: an unread pipe would stall the bot
                bot = subprocess.Popen([*gpubot, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=log_file)
            wait_for(lambda: ready(probe_port) or bot.poll() is not None, "gpubot serve")
            if bot.poll() is not None:
                raise SystemExit(f"gpubot serve exited: {log.read_text().strip()[-500:]}")
            yield Served(port=port, probe_port=probe_port, pid=bot.pid, slack=slack)
        finally:
            for proc in (bot, sim):
                if proc is not None:
                    proc.terminate()
                    proc.wait(timeout=30)
