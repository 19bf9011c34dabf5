"""Pending GPU pods: which count, grouped by job, and the diagnosis' first finding as the problem."""
from __future__ import annotations

from playbooks.model import Diagnosis, Evidence, Finding, Target
from playbooks.remediations import nodepool_consolidation
from playbooks.sweep.pods import pending_groups, pending_problem

from tests.playbooks.sweep_objects import NOW, ago, pod


def groups(pods):
    return pending_groups(pods, now=NOW, pending_after=600)


def test_gpu_pods_pending_past_the_threshold_grouped_by_job_oldest_first():
    job = ("PyTorchJob", "deepseek-moe")
    pods = [pod(f"deepseek-moe-worker-{i}", phase="Pending", owner=job, created=ago(minutes=30 + i)) for i in range(64)]
    pods += [pod("lone", namespace="adhoc", phase="Pending", created=ago(hours=2),
                 node_selector={"karpenter.sh/nodepool": "g6e"})]
    found = groups(pods)
    assert [(g.kind, g.name) for g in found] == [("pod", "lone"), ("pytorchjob", "deepseek-moe")]
    moe = found[1]
    assert len(moe.pods) == 64 and moe.pods[0] == "deepseek-moe-worker-63" and moe.pending_for == 93 * 60
    assert moe.diagnose_target == "pytorchjob/deepseek-moe" and moe.group == "pytorchjob/train/deepseek-moe"
    assert found[0].nodepool == "g6e"


def test_young_running_cpu_and_deleting_pods_do_not_count():
    deleting = pod("d", phase="Pending", created=ago(hours=1))
    deleting["metadata"]["deletionTimestamp"] = ago(minutes=1)
    pods = [pod("young", phase="Pending", created=ago(minutes=5)), pod("running", created=ago(hours=1)),
            pod("cpu", phase="Pending", gpus=0, created=ago(hours=1)), deleting]
    assert groups(pods) == []


def test_neuron_pods_and_jobsets_count():
    trn = pod("llama-trn-0", phase="Pending", gpus=0, created=ago(hours=1),
              labels={"jobset.sigs.k8s.io/jobset-name": "llama-trn"})
    trn["spec"]["containers"][0]["resources"]["limits"] = {"aws.amazon.com/neuron": "16"}
    [g] = groups([trn])
    assert (g.kind, g.name) == ("jobset", "llama-trn") and g.diagnose_target == "pod/llama-trn-0"


def test_first_finding_becomes_the_problem_with_counts():
    job = ("Job", "sd-xl")
    [g] = groups([pod(f"sd-xl-{i}", phase="Pending", owner=job, created=ago(minutes=25)) for i in range(3)])
    remediation = nodepool_consolidation(nodepool="g6")
    diagnosis = Diagnosis(target=Target("job", "sd-xl", "train"), summary="", findings=[
        Finding(code="karpenter.nodepool_limit_reached", severity="error", confidence="high",
                title="NodePool g6 is at its nvidia.com/gpu limit", detail="d",
                evidence=[Evidence("event pod/train/sd-xl-0 FailedScheduling", "exceed limits")],
                remediations=[remediation]),
        Finding(code="scheduling.insufficient_gpu", severity="warning", confidence="low", title="t", detail="d")])
    p = pending_problem(g, diagnosis, cluster="prod-use1")
    assert p.code == "karpenter.nodepool_limit_reached" and p.severity == "error"
    assert p.title.startswith("job train/sd-xl (3 accelerator pods) Pending for 25m: NodePool g6")
    assert p.nodepool == "g6" and p.group == "job/train/sd-xl" and p.cluster == "prod-use1"


def test_a_node_on_its_way_for_too_long_is_a_warning_and_nothing_found_is_none():
    [g] = groups([pod("x", phase="Pending", created=ago(minutes=11))])
    late = Diagnosis(target=Target("pod", "x", "train"), summary="", findings=[
        Finding(code="karpenter.provisioning", severity="info", confidence="high", title="a node is on its way", detail="")])
    assert pending_problem(g, late, cluster="c").severity == "warning"
    assert pending_problem(g, Diagnosis(target=Target("pod", "x", "train"), summary=""), cluster="c") is None
