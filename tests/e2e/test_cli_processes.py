"""The commands as a user runs them: `gpubot sim serve` in one process, `gpubot diagnose` in another."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import SIM_ENV

GPUBOT = [sys.executable, "-m", "bot.cli"]


@pytest.fixture
def served(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [*GPUBOT, "sim", "serve", "--scenario", "seed-untolerated-gpu-taint", "--scenario", "seed-pod-affinity-deadlock",
         "--kubeconfig-out", str(kubeconfig)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    while not kubeconfig.exists():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "sim serve did not write its kubeconfig"
        time.sleep(0.1)
    yield kubeconfig
    proc.terminate()
    assert proc.wait(timeout=20) == 0


def _env(kubeconfig: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "GPUBOT_"))}
    return {**env, "KUBECONFIG": str(kubeconfig), **SIM_ENV}


def test_diagnose_against_sim_serve(served):
    out = subprocess.run([*GPUBOT, "diagnose", "pod/gpu-pod", "-n", "automode-taint", "--json"],
                         env=_env(served), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    diagnosis = json.loads(out.stdout)
    assert diagnosis["findings"][0]["code"] == "scheduling.untolerated_taint"
    assert diagnosis["target"] == {"kind": "pod", "name": "gpu-pod", "namespace": "automode-taint", "cluster": "gpubot-sim"}


def test_without_aws_credentials_the_diagnosis_says_what_it_could_not_check(served, tmp_path):
    env = {k: v for k, v in _env(served).items() if not k.startswith("AWS_")}
    env["AWS_SHARED_CREDENTIALS_FILE"] = str(tmp_path / "none")
    env["AWS_CONFIG_FILE"] = str(tmp_path / "none")
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    out = subprocess.run([*GPUBOT, "diagnose", "pytorchjob/pytorch-dist-job", "-n", "t5-fsdp", "--json"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    diagnosis = json.loads(out.stdout)
    assert diagnosis["findings"][0]["code"] == "karpenter.provisioning"
    assert any("EC2" in gap and "no AWS credentials" in gap for gap in diagnosis["gaps"])


def test_sim_list_json():
    out = subprocess.run([*GPUBOT, "sim", "list", "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    on_disk = {f.stem for f in (Path(__file__).parents[2] / "sim" / "scenarios").glob("*.yaml") if not f.stem.startswith("_")}
    assert {r["name"] for r in rows} == on_disk and len(rows) == len(on_disk) >= 15
    seed = next(r for r in rows if r["name"] == "seed-pod-affinity-deadlock")
    assert (seed["target"], seed["namespace"], seed["base"]) == ("pytorchjob/pytorch-dist-job", "t5-fsdp", "_base")
    assert all({"name", "target", "namespace", "base"} <= set(r) for r in rows)
