"""Consolidation exposure: running training pods without karpenter.sh/do-not-disrupt on a NodePool that
consolidates underutilized nodes, one problem per job with both remediations."""
from __future__ import annotations

from playbooks.remediations import parse
from playbooks.sweep.exposure import consolidation_exposure, exposure_problems

from tests.playbooks.sweep_objects import nodepool, pod

NODES = {"ip-a": "train", "ip-b": "train", "ip-c": "safe"}


def problems(pods, pools):
    return exposure_problems(pods, nodepool_of_node=NODES, nodepools={p["metadata"]["name"]: p for p in pools},
                             cluster="prod-use1")


def test_which_disruption_settings_expose_running_pods():
    assert consolidation_exposure(nodepool("a")) is not None  # the default: WhenEmptyOrUnderutilized, 10 %
    assert consolidation_exposure(nodepool("b", policy=None)) is not None
    assert consolidation_exposure(nodepool("c", policy="Balanced")) is not None
    assert consolidation_exposure(nodepool("d", policy="WhenEmpty")) is None
    assert consolidation_exposure(nodepool("e", after="Never")) is None
    assert consolidation_exposure(nodepool("f", budgets=[{"nodes": "0"}])) is None
    assert consolidation_exposure(nodepool("g", budgets=[{"nodes": "0", "reasons": ["Underutilized"]}])) is None
    assert consolidation_exposure(nodepool("h", budgets=[{"nodes": "0", "reasons": ["Drifted"]}])) is not None
    assert consolidation_exposure(nodepool("i", budgets=[{"nodes": "0", "schedule": "0 9 * * mon-fri",
                                                          "duration": "8h"}])) is not None


def test_one_problem_per_job_with_both_remediations():
    job = ("PyTorchJob", "mixtral-sft")
    pods = [pod(f"mixtral-sft-worker-{i}", node=n, owner=job) for i, n in enumerate(("ip-a", "ip-b", "ip-a"))]
    [p] = problems(pods, [nodepool("train")])
    assert p.code == "karpenter.disruption" and p.severity == "warning"
    assert (p.target.kind, p.target.namespace, p.target.name) == ("pytorchjob", "train", "mixtral-sft")
    assert p.group == "pytorchjob/train/mixtral-sft" and p.nodepool == "train" and "3 running GPU pods" in p.title
    kinds = {r.kind: r for r in p.remediations}
    assert kinds["annotate-do-not-disrupt"].target == "pytorchjob/train/mixtral-sft"
    assert kinds["nodepool-consolidation"].params == {"nodepool": "train", "consolidationPolicy": "WhenEmpty",
                                                      "consolidateAfter": "10m"}
    for r in p.remediations:  # what the approval flow accepts from a button
        assert parse({"kind": r.kind, "target": r.target, "params": r.params}) == r


def test_protected_pending_bare_cpu_daemonset_and_safe_pool_pods_are_left_out():
    pods = [
        pod("a", node="ip-a", owner=("Job", "ok"), annotations={"karpenter.sh/do-not-disrupt": "true"}),
        pod("b", node="ip-a", owner=("Job", "ok2"), annotations={"karpenter.sh/do-not-disrupt": "4h"}),
        pod("c", node="ip-a", owner=("Job", "pending"), phase="Pending"),
        pod("d", node="ip-a"),  # a bare pod: a smoke test, not a job
        pod("e", node="ip-a", owner=("Job", "cpu"), gpus=0),
        pod("f", node="ip-a", owner=("DaemonSet", "dcgm-exporter")),
        pod("g", node="ip-c", owner=("Job", "safe")),
    ]
    assert problems(pods, [nodepool("train"), nodepool("safe", policy="WhenEmpty")]) == []


def test_batch_job_by_label_and_false_annotation():
    p = pod("qwen-0", node="ip-b", labels={"batch.kubernetes.io/job-name": "qwen"},
            annotations={"karpenter.sh/do-not-disrupt": "false"})
    [found] = problems([p], [nodepool("train")])
    assert found.target.kind == "job" and found.target.name == "qwen"


def test_values_karpenter_does_not_read_as_protection_are_exposed():
    # Karpenter compares the annotation with "true" exactly, and reads a duration from the pod's start
    # (playbooks/remediations/protection.py): "True", "yes" and a duration long past protect nothing.
    pods = [pod(f"w-{i}", node="ip-a", owner=("PyTorchJob", f"job-{i}"), annotations={"karpenter.sh/do-not-disrupt": v})
            for i, v in enumerate(("True", "yes", "1s"))]
    for p in pods:
        p["status"]["startTime"] = "2026-01-01T00:00:00Z"
    assert sorted(found.target.name for found in problems(pods, [nodepool("train")])) == ["job-0", "job-1", "job-2"]
