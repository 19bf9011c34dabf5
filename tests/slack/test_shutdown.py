"""`gpubot serve` stopped by SIGTERM (a rolling update) lets acknowledged diagnoses post their answers
first, up to GPUBOT_SHUTDOWN_GRACE, so nobody is left with a "Diagnosing ..." that never ends."""
from __future__ import annotations

import json
import re
import signal
import socket
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fakes import payloads
from tests.fakes.slack_api import FakeSlack
from tests.slack.serve_process import serving
COMMAND = "diagnose pod/gpu-pod -n automode-taint"


def _fault(sim, delay: float) -> None:
    body = json.dumps({"status": 200, "times": 1, "delay_seconds": delay, "path_contains": "/events"}).encode()
    urllib.request.urlopen(urllib.request.Request(f"{sim.url}/sim/faults", data=body, method="POST",
                                                  headers={"Content-Type": "application/json"})).read()


def _clear_faults(sim) -> None:
    urllib.request.urlopen(urllib.request.Request(f"{sim.url}/sim/faults", method="DELETE")).read()


@contextmanager
def _serving(sim, slack: FakeSlack, tmp_path: Path, grace: float, mode: str = "http", **extra_env: str):
    with serving(sim, slack, tmp_path, grace=grace, mode=mode, **extra_env) as served:
        yield served.proc, served.send, served.log


def _probe(port: int, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def _refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return False
    except ConnectionRefusedError:
        return True


def _diagnosing(slack: FakeSlack, send: SlackRequests) -> None:
    assert send.slash_command(COMMAND, response_url=slack.response_url()).status == 200
    # generous: on a machine loaded by the whole suite the first post can wait on a worker's start-up
    slack.wait_for("chat.postMessage", timeout=90, predicate=lambda c: c.args["text"].startswith("Diagnosing"))


def _answered(slack: FakeSlack) -> list:
    return [c for c in slack.calls("chat.update") if "scheduling.untolerated_taint" in json.dumps(c.args)]


def test_sigterm_lets_the_diagnosis_in_progress_answer(seed_sim, tmp_path):
    with FakeSlack() as slack, serving(seed_sim, slack, tmp_path, grace=60) as served:
        proc, send, log = served.proc, served.send, served.log
        # The diagnosis is still reading events when the signal comes, and for long enough that a loaded
        # machine (the suite runs two workers per core) has time to answer the probes below.
        _fault(seed_sim, delay=8)
        try:
            _diagnosing(slack, send)
            assert _probe(served.probe_port, "/readyz") == 200
            proc.send_signal(signal.SIGTERM)
            # While the diagnosis finishes the pod is not ready (no new requests) but alive (no restart),
            # and the Slack port takes nothing more.
            deadline = time.monotonic() + 6
            while _probe(served.probe_port, "/readyz") != 503:
                assert time.monotonic() < deadline, "/readyz still answered 200 after SIGTERM"
                time.sleep(0.05)
            while not _refused(served.port):
                assert time.monotonic() < deadline, "the Slack port still took connections after SIGTERM"
                time.sleep(0.05)
            assert _probe(served.probe_port, "/healthz") == 200
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
            # generous, as in _diagnosing: a loaded machine can hold the first post behind a worker's start-up
            slack.wait_for("chat.postMessage", timeout=90, predicate=lambda c: c.args["text"].startswith("Diagnosing"))
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
