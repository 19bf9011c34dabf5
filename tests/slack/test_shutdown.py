"""`gpubot serve` stopped by SIGTERM (a rolling update) lets acknowledged diagnoses post their answers
first, up to GPUBOT_SHUTDOWN_GRACE, so nobody is left with a "Diagnosing ..." that never ends."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import SIM_ENV
from tests.fakes import payloads
from tests.fakes import workspace as ws
from tests.fakes.ports import free_port
from tests.fakes.signing import SlackRequests
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import migrated_sqlite

ROOT = Path(__file__).resolve().parents[2]
COMMAND = "diagnose pod/gpu-pod -n automode-taint"


def _fault(sim, delay: float) -> None:
    body = json.dumps({"status": 200, "times": 1, "delay_seconds": delay, "path_contains": "/events"}).encode()
    urllib.request.urlopen(urllib.request.Request(f"{sim.url}/sim/faults", data=body, method="POST",
                                                  headers={"Content-Type": "application/json"})).read()


def _clear_faults(sim) -> None:
    urllib.request.urlopen(urllib.request.Request(f"{sim.url}/sim/faults", method="DELETE")).read()


@contextmanager
def _serving(sim, slack: FakeSlack, tmp_path: Path, grace: float, mode: str = "http", **extra_env: str):
    port = free_port()
    env = {**os.environ, **SIM_ENV, "KUBECONFIG": str(sim.kubeconfig), "SLACK_BOT_TOKEN": ws.BOT_TOKEN,
           "SLACK_API_URL": slack.url, "GPUBOT_SLACK_MODE": mode, "GPUBOT_SHUTDOWN_GRACE": str(grace),
           "PYTHONPATH": str(ROOT), "GPUBOT_DATABASE_URL": migrated_sqlite(tmp_path / "gpubot.db"), **extra_env}
    env["GPUBOT_HTTP_PORT"] = str(port)  # Socket Mode serves /alertmanager and /healthz on it too
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
        yield proc, SlackRequests(f"http://127.0.0.1:{port}", secret=ws.SIGNING_SECRET), log
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def _diagnosing(slack: FakeSlack, send: SlackRequests) -> None:
    assert send.slash_command(COMMAND, response_url=slack.response_url()).status == 200
    slack.wait_for("chat.postMessage", timeout=30, predicate=lambda c: c.args["text"].startswith("Diagnosing"))


def _answered(slack: FakeSlack) -> list:
    return [c for c in slack.calls("chat.update") if "scheduling.untolerated_taint" in json.dumps(c.args)]


def test_sigterm_lets_the_diagnosis_in_progress_answer(seed_sim, tmp_path):
    with FakeSlack() as slack, _serving(seed_sim, slack, tmp_path, grace=60) as (proc, send, log):
        _fault(seed_sim, delay=3)  # the diagnosis is still reading events when the signal comes
        try:
            _diagnosing(slack, send)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0, log.read_text()
        finally:
            _clear_faults(seed_sim)
        assert _answered(slack), [c.args.get("text") for c in slack.calls("chat.update")]
        assert "letting 1 diagnoses in progress finish" in log.read_text()
        assert "stopped after the diagnoses in progress finished" in log.read_text()


def test_work_past_the_grace_period_is_abandoned_with_a_log_line(seed_sim, tmp_path):
    with FakeSlack() as slack, _serving(seed_sim, slack, tmp_path, grace=0.5) as (proc, send, log):
        _fault(seed_sim, delay=20)
        try:
            _diagnosing(slack, send)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=15) == 0, log.read_text()  # not the 20 s the diagnosis would need
        finally:
            _clear_faults(seed_sim)
        assert "1 diagnoses still running after 0.5 s were abandoned" in log.read_text()
        assert not _answered(slack)
        # The worker holding the abandoned diagnosis goes with the serving process (it ignores SIGTERM,
        # so it is killed): nothing posts after the rolling update replaced this replica.
        workers = [int(pid) for pid in re.findall(r"worker \d+ \(pid (\d+)\) ready", log.read_text())]
        assert workers
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_alive(pid) for pid in workers), workers


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_socket_mode_sigterm_also_lets_the_diagnosis_answer(seed_sim, tmp_path):
    with FakeSlack(socket_mode=True) as slack, \
            _serving(seed_sim, slack, tmp_path, grace=60, mode="socket") as (proc, _, log):
        _fault(seed_sim, delay=3)
        try:
            command = payloads.fixture("socket_mode_slash_commands.json")["payload"]
            command.update(text=COMMAND, channel_id="C0TRAIN", user_id="U0ALICE")
            envelope = slack.socket_mode.deliver("slash_commands", command)
            slack.socket_mode.wait_for_ack(envelope, timeout=10)
            slack.wait_for("chat.postMessage", timeout=30, predicate=lambda c: c.args["text"].startswith("Diagnosing"))
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0, log.read_text()
        finally:
            _clear_faults(seed_sim)
        assert _answered(slack)
        assert "stopped after the diagnoses in progress finished" in log.read_text()


@pytest.mark.parametrize("value", ["0", "soon"])
def test_bad_grace_setting_is_one_line(value):
    from bot.settings import SettingsError, load_settings

    with pytest.raises(SettingsError) as err:
        load_settings({"GPUBOT_SHUTDOWN_GRACE": value})
    assert "GPUBOT_SHUTDOWN_GRACE" in str(err.value)
