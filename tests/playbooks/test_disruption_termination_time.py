"""The pod event "Deleting the pod to accommodate the terminationTime ... This bypasses the PDB of the pod and the
do-not-disrupt annotation." (kubernetes-sigs/karpenter v1.14.0 pkg/controllers/node/termination/terminator/events/
events.go DisruptPodDelete) comes from three writers of karpenter.sh/nodeclaim-termination-timestamp: the NodeClaim's
terminationGracePeriod (nodeclaim/lifecycle/controller.go), node repair (node/health/controller.go) and, from aws v1.13,
an EC2 instance/system status check (aws/karpenter-provider-aws v1.14.1 pkg/controllers/interruption/utils.go
ForcefulTermination). Only the first is the NodePool's to change; do-not-disrupt and WhenEmpty help against none."""
from __future__ import annotations

from playbooks.analyzers import disruption, interruption
from playbooks.explain import explain_text
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.model import Target

NS = "ml"
GONE = "ip-10-1-2-3.ec2.internal"
DISRUPTED = ("Deleting the pod to accommodate the terminationTime 2026-01-01 10:00:00 +0000 UTC of the node. The pod was "
             "granted 30 seconds of grace-period of its 3600 terminationGracePeriodSeconds. This bypasses the PDB of the "
             "pod and the do-not-disrupt annotation.")


def _event(kind: str, name: str, reason: str, message: str) -> dict:
    return {"metadata": {"name": f"{name}.{reason}", "namespace": NS if kind == "Pod" else "default"},
            "involvedObject": {"kind": kind, "name": name}, "reason": reason, "message": message,
            "source": {"component": "karpenter"}, "type": "Normal", "count": 1,
            "firstTimestamp": "2026-01-01T10:00:00Z", "lastTimestamp": "2026-01-01T10:00:00Z"}


def job(node_said: list[tuple[str, str]], *, log: list[str] | None = None, grace: str | None = None) -> Facts:
    """Rank 0 gone with its node (events only), rank 1 running elsewhere; the rank carried do-not-disrupt."""
    facts = Facts(target=Target(kind="job", name="sft", namespace=NS), cluster="c")
    running = {"metadata": {"name": "sft-1-r9xkt", "namespace": NS, "labels": {"batch.kubernetes.io/job-name": "sft"},
                            "annotations": {"karpenter.sh/do-not-disrupt": "true"},
                            "ownerReferences": [{"kind": "Job", "name": "sft", "apiVersion": "batch/v1"}]},
               "spec": {"nodeName": "ip-10-1-9-9.ec2.internal", "nodeSelector": {"karpenter.sh/nodepool": "gpu"}},
               "status": {"phase": "Running"}}
    facts.pods.append(PodFacts(pod=running))
    facts.lost_pods["sft-0-abcde"] = [
        {**_event("Pod", "sft-0-abcde", "Scheduled", f"Successfully assigned {NS}/sft-0-abcde to {GONE}"),
         "source": {"component": "default-scheduler"}},
        _event("Pod", "sft-0-abcde", "Disrupted", DISRUPTED)]
    facts.node_events[GONE] = [_event("Node", GONE, reason, message) for reason, message in node_said]
    facts.past.add(GONE)
    template = {"terminationGracePeriod": grace} if grace else {}
    facts.nodepools["gpu"] = {"metadata": {"name": "gpu"}, "spec": {
        "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized"}, "template": {"spec": template}}}
    facts.karpenter_log = log or []
    return facts


def _voluntary(finding) -> bool:
    snippet = finding.fix.snippet if finding.fix else ""
    return bool([r for r in finding.remediations if r.kind in ("annotate-do-not-disrupt", "nodepool-consolidation")]) \
        or 'karpenter.sh/do-not-disrupt: "true"' in snippet or "consolidationPolicy: WhenEmpty" in snippet


def test_the_line_names_the_bypass_and_all_three_writers():
    (finding,) = explain_text(DISRUPTED).findings
    assert finding.code == "karpenter.disruption"
    assert "node repair" in finding.detail and "status check" in finding.detail and "terminationGracePeriod" in finding.detail
    assert not _voluntary(finding)


def test_after_drift_the_grace_period_is_the_nodepools():
    facts = job([("DisruptionTerminating", "Disrupting Node: Drifted"),
                 ("TerminationGracePeriodExpiring", "All pods will be deleted by 2026-01-01T10:00:00Z")], grace="2h")
    (finding,) = disruption.analyze(facts)
    assert "Drifted" in finding.detail and "terminationGracePeriod" in finding.detail


def test_after_node_repair_it_is_repairs_and_no_lifetime_or_annotation_is_offered():
    log = ['{"level":"INFO","message":"deleting unhealthy node","controller":"node.health","Node":{"name":"' + GONE
           + '"},"NodeClaim":{"name":"gpu-x7k2p"}}']
    facts = job([("TerminationGracePeriodExpiring", "All pods will be deleted by 2026-01-01T10:00:00Z")], log=log, grace="2h")
    (finding,) = disruption.analyze(facts)
    assert "node repair" in finding.title and "TerminationGracePeriod" not in finding.title
    assert not _voluntary(finding) and "expireAfter" not in finding.fix.snippet
    assert finding.severity in ("critical", "error")  # the condition behind it is not known here: it leads


def test_after_a_failed_status_check_it_is_ec2s():
    facts = job([("InstanceUnhealthy", "An unhealthy warning was triggered for the instance"),
                 ("TerminationGracePeriodExpiring", "All pods will be deleted by 2026-01-01T10:00:00Z")], grace="2h")
    (found,) = interruption.analyze(facts)
    assert found.code == "karpenter.interruption" and "status check" in found.detail
    assert list(disruption.analyze(facts)) == []


def test_the_generic_fix_offers_the_annotation_only_for_voluntary_methods():
    for reason in ("Eviction", "ForcefulTermination", "TerminationGracePeriod", "Unhealthy", "RepairBlocked"):
        fix = render_fix("generic/karpenter.disruption.yaml.j2", reason=reason)
        assert 'do-not-disrupt: "true"' not in fix.snippet and "WhenEmpty" not in fix.snippet, reason
    assert 'do-not-disrupt: "true"' in render_fix("generic/karpenter.disruption.yaml.j2", reason="Underutilized").snippet
    drift = render_fix("generic/karpenter.disruption.yaml.j2", reason="Drifted").snippet
    assert "reasons: [Drifted]" in drift and "consolidationPolicy: WhenEmpty" not in drift
