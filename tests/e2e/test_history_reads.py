"""Evidence on objects already deleted, read over HTTP from the simulated API server: the job's evicted
pod, its node and its NodeClaim are gone and only their events and the controller log remain.

The reads that find them are one page each (the namespace's recent Pod events, the recent Node and
NodeClaim events in ``default``), so a diagnosis costs the same on a small cluster and a large one; a
page that cuts is a gap, and a refused read is a gap that leaves the rest of the diagnosis standing.
"""
from __future__ import annotations


import pytest
import yaml

from bot.service import DiagnosisService
from bot.settings import load_settings
from sim.serve import start_sim
from tests.conftest import REPO, SIM_ENV

FIELD = REPO / "tests" / "scenarios"
SPOT = "field-spot-interruption-g6e-lost-rank"


def _diagnose(sim, target: str, namespace: str):
    service = DiagnosisService(load_settings({"KUBECONFIG": str(sim.kubeconfig), **SIM_ENV}))
    try:
        sim.reset_requests()
        diagnosis = service.diagnose(target, namespace=namespace)
        return diagnosis, sim.request_count()
    finally:
        service.close()


def _copy(tmp_path, name: str, change) -> None:
    doc = yaml.safe_load((FIELD / f"{name}.yaml").read_text())
    change(doc)
    (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))


@pytest.fixture
def env(monkeypatch):
    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EC2", "GPUBOT_NAMESPACE",
                "GPUBOT_CONTEXT", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)


def test_the_deleted_rank_is_found_and_named(env):
    with start_sim(directory=FIELD, scenarios=[SPOT]) as sim:
        diagnosis, _ = _diagnose(sim, "job/qwen25-14b-sft", "qwen-sft")
    first = diagnosis.findings[0]
    assert first.code == "karpenter.interruption" and first.severity == "critical"
    assert "qwen25-14b-sft-0-m4q8z" in first.detail and "no longer exists" in first.detail
    sources = " ".join(e.source for e in first.evidence)
    assert "nodeclaim/g6e-spot-8hq2w" in sources and "node/ip-10-42-33-58" in sources
    assert "Evicted pod: Forceful Termination" in [e.text for e in first.evidence]
    timeout = next(f for f in diagnosis.findings if f.code == "nccl.timeout")
    assert timeout.severity == "info" and timeout.consequence_of == "karpenter.interruption"


@pytest.mark.slow
def test_requests_do_not_grow_with_the_cluster(env):
    with start_sim(directory=FIELD, scenarios=[SPOT]) as small:
        _, few = _diagnose(small, "job/qwen25-14b-sft", "qwen-sft")
    with start_sim(directory=FIELD, scenarios=[SPOT], scale=(1000, 20000)) as big:
        diagnosis, many = _diagnose(big, "job/qwen25-14b-sft", "qwen-sft")
    assert few == many, (few, many)
    assert diagnosis.findings[0].code == "karpenter.interruption"


def test_a_page_that_cuts_is_a_gap(env, tmp_path):
    def crowd(doc):  # 520 events about other pods, whose names sort before the job's
        for i in range(520):
            doc["objects"].append({
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": f"aaa-batch-{i:04d}.{i:016x}", "namespace": "qwen-sft", "creationTimestamp": "-30m"},
                "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": f"aaa-batch-{i:04d}", "namespace": "qwen-sft"},
                "reason": "Scheduled", "message": f"Successfully assigned qwen-sft/aaa-batch-{i:04d} to elsewhere",
                "source": {"component": "default-scheduler"}, "firstTimestamp": "-30m", "lastTimestamp": "-30m",
                "count": 1, "type": "Normal", "eventTime": None, "reportingComponent": "default-scheduler",
                "reportingInstance": ""})
    _copy(tmp_path, SPOT, crowd)
    with start_sim(directory=tmp_path, scenarios=[SPOT]) as sim:
        diagnosis, _ = _diagnose(sim, "job/qwen25-14b-sft", "qwen-sft")
    gaps = [g for g in diagnosis.gaps if g.startswith("Recent pod events in qwen-sft: read 500 of at least")]
    assert gaps and "deleted earlier may be missing" in gaps[0], diagnosis.gaps


def test_a_refused_history_read_is_a_gap_and_the_rest_stands(env, tmp_path):
    _copy(tmp_path, SPOT, lambda doc: doc.update(api={"forbidden": ["namespaces/default/events"]}))
    with start_sim(directory=tmp_path, scenarios=[SPOT]) as sim:
        diagnosis, _ = _diagnose(sim, "job/qwen25-14b-sft", "qwen-sft")
    assert any(g.startswith("Not checked: events (forbidden") for g in diagnosis.gaps), diagnosis.gaps
    first = diagnosis.findings[0]
    # the controller log and the evicted pod's own events still tie the interruption to the job
    assert first.code == "karpenter.interruption", [(f.code, f.severity) for f in diagnosis.findings]
    assert any("initiating delete from interruption message" in e.text for e in first.evidence)
