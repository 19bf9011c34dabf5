"""Field incidents (tests/scenarios/), each replayed through the simulator exactly as a user would
(`gpubot sim serve --scenario-dir tests/scenarios`) and diagnosed with `gpubot diagnose --json`.

Every file names the public incident or the upstream source it reproduces and the finding that
upstream semantics and the cluster's own messages call for. The checks below hold the diagnosis to
those words: the expected code first, never "No known problem" on a real problem, and the Karpenter /
kube-scheduler Warning the cluster wrote quoted in the evidence.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from playbooks.codes import CODES
from tests.conftest import REPO, SIM_ENV

SCENARIO_DIR = REPO / "tests" / "scenarios"
GPUBOT = REPO / ".venv" / "bin" / "gpubot"

# Codes whose finding is informational by design: the pod is on its way, not stuck.
INFO_CODES = frozenset({"karpenter.provisioning"})
# Who writes a pod's scheduling verdicts: kube-scheduler, open-source Karpenter, EKS Auto Mode's Karpenter.
SCHEDULER = "default-scheduler"
KARPENTER = ("karpenter", "eks-auto-mode/compute")


@dataclass(frozen=True)
class FieldScenario:
    name: str
    target: str
    namespace: str
    first_finding: str
    source: str
    base: str
    karpenter_warnings: tuple[str, ...]
    scheduler_warnings: tuple[str, ...]
    healthy: bool = False  # expect: {healthy: true}: nothing is wrong; no finding above info may be reported


def _event_parts(obj: dict) -> tuple[str, str, str, str]:
    """(reporter, type, message, regarding kind) of an event in either served shape."""
    if obj["apiVersion"] == "events.k8s.io/v1":
        return obj.get("reportingController", ""), obj.get("type", ""), obj.get("note", ""), obj["regarding"]["kind"]
    reporter = (obj.get("source") or {}).get("component") or obj.get("reportingComponent", "")
    return reporter, obj.get("type", ""), obj.get("message", ""), obj["involvedObject"]["kind"]


def _read(path: Path) -> FieldScenario:
    doc = yaml.safe_load(path.read_text())
    karpenter, scheduler = [], []
    for obj in doc.get("objects") or []:
        if obj.get("kind") != "Event":
            continue
        reporter, type_, message, kind = _event_parts(obj)
        if type_ != "Warning" or kind != "Pod":
            continue
        if reporter in KARPENTER:
            karpenter.append(message)
        elif reporter == SCHEDULER:
            scheduler.append(message)
    return FieldScenario(
        name=doc["name"], target=doc["target"], namespace=doc["namespace"],
        first_finding=doc["expect"].get("first_finding", ""), source=doc.get("source", ""), base=doc.get("base", ""),
        karpenter_warnings=tuple(karpenter), scheduler_warnings=tuple(scheduler),
        healthy=bool(doc["expect"].get("healthy")),
    )


FILES = sorted(p for p in SCENARIO_DIR.glob("*.yaml") if not p.name.startswith("_"))
SCENARIOS = [_read(p) for p in FILES]


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _quotes(evidence_text: str, message: str) -> bool:
    """The evidence carries the message: whole, its decisive head, or a verbatim slice of it."""
    evidence, message = _squash(evidence_text), _squash(message)
    core = message.removeprefix("Failed to schedule pod, ")
    if core[:60] in evidence:
        return True
    return len(evidence) >= 30 and evidence in message


def _quoted(diagnosis: dict, messages: tuple[str, ...]) -> bool:
    texts = [e["text"] for f in diagnosis["findings"] for e in f.get("evidence") or []]
    return any(_quotes(t, m) for t in texts for m in messages)


@pytest.fixture
def field_env(monkeypatch):
    """Point the in-process CLI at a simulator started for one scenario, with moto's dummy credentials."""
    def use(kubeconfig: Path) -> None:
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
        for key, value in SIM_ENV.items():
            monkeypatch.setenv(key, value)
        for key in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EC2", "GPUBOT_NAMESPACE",
                    "GPUBOT_CONTEXT", "AWS_PROFILE"):
            monkeypatch.delenv(key, raising=False)
    return use


def test_the_field_set_is_broad():
    assert len(SCENARIOS) >= 25
    assert len({s.name for s in SCENARIOS}) == len(SCENARIOS)
    assert {s.base for s in SCENARIOS} == {"karpenter", "auto-mode"}
    assert len({s.first_finding for s in SCENARIOS if not s.healthy}) >= 12


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_each_file_names_its_source_and_a_documented_code(path):
    scenario = _read(path)
    assert scenario.name == path.stem
    assert scenario.source.startswith("https://github.com/"), "cite the public incident or the upstream file"
    assert scenario.healthy != bool(scenario.first_finding), "expect either first_finding or healthy: true"
    assert scenario.healthy or scenario.first_finding in CODES
    readme = (SCENARIO_DIR / "README.md").read_text()
    assert f"| {scenario.name} |" in readme, "list the scenario in tests/scenarios/README.md"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_first_finding(scenario, field_env, cli):
    from sim.serve import start_sim

    with start_sim(directory=SCENARIO_DIR, scenarios=[scenario.name]) as sim:
        field_env(sim.kubeconfig)
        result = cli("diagnose", scenario.target, "-n", scenario.namespace, "--json")
    assert result.code == 0, result.err
    diagnosis = json.loads(result.out)
    findings = diagnosis["findings"]
    codes = [f["code"] for f in findings]
    if scenario.healthy:
        assert not [f for f in findings if f["severity"] != "info"], (codes, diagnosis["summary"])
        return
    assert codes and codes[0] == scenario.first_finding, (codes, diagnosis["summary"])
    assert diagnosis["target"]["namespace"] == scenario.namespace
    if scenario.first_finding not in INFO_CODES:
        assert not diagnosis["summary"].startswith("No known problem"), diagnosis["summary"]
        assert findings[0]["severity"] != "info", findings[0]
        assert findings[0]["evidence"], "a finding must quote the evidence it rests on"
        assert all(e["text"] and e["source"] for e in findings[0]["evidence"])
    if scenario.karpenter_warnings:
        assert _quoted(diagnosis, scenario.karpenter_warnings), (
            "Karpenter's own message is evidence of record", scenario.karpenter_warnings[0], findings)
    elif scenario.scheduler_warnings:
        assert _quoted(diagnosis, scenario.scheduler_warnings), (
            "kube-scheduler's own message is evidence of record", scenario.scheduler_warnings[0], findings)


def test_quoting_is_checked_against_the_message_itself():
    message = ("Failed to schedule pod, all available instance types exceed limits for nodepool "
               "(NodePool=g6e-serving)")
    assert _quotes("FailedScheduling: " + message, message)
    assert _quotes("all available instance types exceed limits for nodepool (NodePool=g6e-serving)", message)
    assert not _quotes("NodePool g6e-serving has room for 4 more GPUs", message)
    assert not _quotes("limits", message)


def _wait_for(path: Path, proc: subprocess.Popen, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "sim serve did not write its kubeconfig"
        time.sleep(0.1)


def test_sim_serve_process_with_the_field_directory(tmp_path):
    """The real commands, two processes: `gpubot sim serve --scenario-dir ...`, then `gpubot diagnose`."""
    scenario = next(s for s in SCENARIOS if s.name == "field-cpu-limit-g6e-vllm")
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [str(GPUBOT), "sim", "serve", "--scenario-dir", str(SCENARIO_DIR), "--scenario", scenario.name,
         "--kubeconfig-out", str(kubeconfig)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        _wait_for(kubeconfig, proc, timeout=60)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "GPUBOT_"))}
        env.update(SIM_ENV, KUBECONFIG=str(kubeconfig))
        out = subprocess.run([str(GPUBOT), "diagnose", scenario.target, "-n", scenario.namespace, "--json"],
                             env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        diagnosis = json.loads(out.stdout)
        assert diagnosis["findings"][0]["code"] == scenario.first_finding, diagnosis["summary"]
        assert _quoted(diagnosis, scenario.karpenter_warnings)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert code == 0, proc.stderr.read()
