"""History: pods, nodes and NodeClaims of a job that no longer exist, read from their events, and the
method of a disruption read from what Karpenter said (kubernetes-sigs/karpenter disruption/types.go,
drift.go, nodeclaim/expiration; aws/karpenter-provider-aws pkg/controllers/interruption)."""
from __future__ import annotations

import pytest

from playbooks.analyzers import disruption, interruption
from playbooks.consequences import consequences, follow_causes
from playbooks.engine import order
from playbooks.facts import Facts, PodFacts
from playbooks.history_names import claims_named, nodes_named, pod_name_pattern
from playbooks.model import Evidence, Finding, Target

NS = "ml"
GONE = "ip-10-1-2-3.ec2.internal"
CLAIM = "gpu-x7k2p"


@pytest.mark.parametrize(("key", "name", "types", "yes", "no"), [
    ("pytorchjob", "llama", ("Master", "Worker"), ["llama-worker-3", "llama-master-0"],
     ["llama-worker-3-abcde", "llamax-worker-1", "llama-launcher-0"]),
    ("mpijob", "nemo", (), ["nemo-launcher-0", "nemo-worker-12"], ["nemo-worker"]),
    ("job", "sft", (), ["sft-abcde", "sft-2-k9x1p"], ["sft-abc", "sft-2-k9x1p-zz", "other-abcde"]),
    ("jobset", "sd3", (), ["sd3-workers-0-1-hc7vd", "sd3-node-0-0-ab12c"], ["sd3-workers-0-1", "sd3x-workers-0-1-hc7vd"]),
    ("trainjob", "tj", (), ["tj-node-0-3-q2w3e"], ["tj-abcde"]),
])
def test_pod_names_follow_the_owners_naming(key, name, types, yes, no):
    pattern = pod_name_pattern(key, name, replica_types=types)
    assert [n for n in yes if pattern.match(n)] == yes
    assert [n for n in no if pattern.match(n)] == []


def test_a_lone_pod_has_no_naming_to_follow():
    assert pod_name_pattern("pod", "x") is None


def test_nodes_and_claims_come_from_the_pods_own_events_in_both_shapes():
    events = [
        {"reason": "Scheduled", "message": f"Successfully assigned {NS}/sft-0-abcde to {GONE}"},
        {"reason": "Nominated", "note": f"Pod should schedule on: nodeclaim/{CLAIM}, node/ip-10-9-9-9.ec2.internal"},
        {"reason": "Killing", "message": "Stopping container trainer"},
    ]
    assert nodes_named(events) == {GONE, "ip-10-9-9-9.ec2.internal"}
    assert claims_named(events) == {CLAIM}


def _event(kind: str, name: str, reason: str, message: str, component: str = "karpenter") -> dict:
    # events about cluster-scoped objects are recorded in "default"; only there do they speak for the node
    namespace = NS if kind == "Pod" else "default"
    return {"metadata": {"name": f"{name}.1", "namespace": namespace},
            "involvedObject": {"kind": kind, "name": name}, "reason": reason, "message": message,
            "source": {"component": component}, "type": "Normal", "count": 1,
            "firstTimestamp": "2026-01-01T10:00:00Z", "lastTimestamp": "2026-01-01T10:00:00Z"}


def _facts(*, node_said: str, pod_said: str, nodepool: dict | None = None, annotations: dict | None = None) -> Facts:
    """A job whose rank 0 is gone with its node (events only) and whose rank 1 still runs."""
    facts = Facts(target=Target(kind="job", name="sft", namespace=NS), cluster="c")
    running = {"metadata": {"name": "sft-1-r9xkt", "namespace": NS, "labels": {"batch.kubernetes.io/job-name": "sft"},
                            "annotations": annotations or {},
                            "ownerReferences": [{"kind": "Job", "name": "sft", "apiVersion": "batch/v1"}]},
               "spec": {"nodeName": "ip-10-1-9-9.ec2.internal", "nodeSelector": {"karpenter.sh/nodepool": "gpu"}},
               "status": {"phase": "Running"}}
    facts.pods.append(PodFacts(pod=running))
    facts.lost_pods["sft-0-abcde"] = [
        _event("Pod", "sft-0-abcde", "Scheduled", f"Successfully assigned {NS}/sft-0-abcde to {GONE}", "default-scheduler"),
        _event("Pod", "sft-0-abcde", "Evicted", pod_said)]
    facts.node_events[GONE] = [_event("Node", GONE, "Note", node_said)]
    facts.past.add(GONE)
    if nodepool:
        facts.nodepools["gpu"] = nodepool
    return facts


def _pool(policy: str = "WhenEmptyOrUnderutilized", **template) -> dict:
    return {"metadata": {"name": "gpu"}, "spec": {"disruption": {"consolidationPolicy": policy, "consolidateAfter": "0s"},
                                                 "template": {"spec": dict(template)}}}


def test_consolidation_offers_the_annotation_and_when_empty():
    (finding,) = disruption.analyze(_facts(node_said="Disrupting Node: Underutilized", pod_said="Evicted pod: Underutilized",
                                           nodepool=_pool()))
    assert finding.severity == "critical" and "consolidation (Underutilized)" in finding.title
    assert sorted(r.kind for r in finding.remediations) == ["annotate-do-not-disrupt", "nodepool-consolidation"]
    assert "sft-0-abcde no longer exists" in finding.detail


def test_drift_is_not_answered_with_a_consolidation_policy():
    (finding,) = disruption.analyze(_facts(node_said="Disrupting Node: Drifted", pod_said="Evicted pod: Drifted",
                                           nodepool=_pool(terminationGracePeriod="4h")))
    assert [r.kind for r in finding.remediations] == ["annotate-do-not-disrupt"]
    assert "WhenEmpty" not in finding.fix.summary and "eventual disruption" in finding.detail and "(4h)" in finding.detail


def test_forced_expiry_offers_no_annotation_but_the_nodepools_lifetime():
    facts = _facts(node_said="All pods will be deleted by 2026-01-01T12:00:00Z", pod_said="Evicted pod: Forceful Termination",
                   nodepool=_pool("WhenEmpty", expireAfter="336h", terminationGracePeriod="2h"),
                   annotations={"karpenter.sh/do-not-disrupt": "true"})
    facts.karpenter_log = ['{"level":"DEBUG","message":"deleting expired nodeclaim","NodeClaim":{"name":"gpu-x7k2p"},'
                           f'"Node":{{"name":"{GONE}"}}}}']
    (finding,) = disruption.analyze(facts)
    assert finding.remediations == []
    assert "expireAfter: Never" in finding.fix.snippet and "Expired" in finding.detail


def test_an_interrupted_node_is_not_also_a_disruption():
    facts = _facts(node_said="Spot interruption warning was triggered", pod_said="Evicted pod: Forceful Termination")
    (found,) = interruption.analyze(facts)
    assert found.code == "karpenter.interruption" and found.severity == "critical" and "SpotInterrupted" in found.title
    assert list(disruption.analyze(facts)) == []


def test_a_rebalance_recommendation_takes_nothing():
    facts = _facts(node_said="Spot rebalance recommendation was triggered", pod_said="Evicted pod: Forceful Termination")
    assert list(interruption.analyze(facts)) == []


def test_another_jobs_interruption_is_not_ours():
    facts = _facts(node_said="Disrupting Node: Underutilized", pod_said="Evicted pod: Underutilized")
    facts.node_events["ip-10-7-7-7.ec2.internal"] = [_event("Node", "ip-10-7-7-7.ec2.internal", "SpotInterrupted",
                                                            "Spot interruption warning was triggered")]
    assert list(interruption.analyze(facts)) == []


def _finding(code: str, severity: str) -> Finding:
    return Finding(code=code, severity=severity, confidence="high", title=code, detail="d.", evidence=[Evidence("s", "t")])


def test_the_peers_errors_follow_a_cause_that_hit_the_target():
    findings = follow_causes([_finding("nccl.peer_unresponsive", "error"), _finding("karpenter.interruption", "critical"),
                              _finding("nccl.timeout", "error"), _finding("training.code_error", "error")])
    by = {f.code: f for f in findings}
    assert by["nccl.peer_unresponsive"].severity == by["nccl.timeout"].severity == "info"
    assert by["nccl.timeout"].consequence_of == by["nccl.peer_unresponsive"].consequence_of == "karpenter.interruption"
    assert by["training.code_error"].severity == "error"  # not a consequence of losing a node
    assert by["training.code_error"].consequence_of is None
    assert consequences(findings, by["karpenter.interruption"]) == [by["nccl.peer_unresponsive"], by["nccl.timeout"]]


def test_a_peers_disruption_leads_and_the_targets_own_nccl_error_follows_it():
    findings = order(follow_causes([_finding("nccl.peer_unresponsive", "error"), _finding("karpenter.disruption", "error")]))
    assert [(f.code, f.severity, f.consequence_of) for f in findings] == [
        ("karpenter.disruption", "error", None), ("nccl.peer_unresponsive", "info", "karpenter.disruption")]


def test_a_warning_disruption_is_not_a_cause_to_fold_under():
    findings = follow_causes([_finding("nccl.peer_unresponsive", "error"), _finding("karpenter.disruption", "warning")])
    assert [f.consequence_of for f in findings] == [None, None]
