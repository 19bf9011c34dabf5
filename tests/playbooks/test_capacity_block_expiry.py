"""Capacity Block expiry read against aws/karpenter-provider-aws v1.14.1: pkg/controllers/capacityreservation/
expiration/controller.go deletes the NodeClaims of a capacity-block reservation once it is ``expiring`` (40 minutes
before its end, pkg/apis/v1/ec2nodeclass_status.go CapacityReservationFromEC2) and logs "initiating delete for
capacity block expiration"; no event. An EC2-side reclaim: karpenter.interruption, never a voluntary-disruption fix."""
from __future__ import annotations

from playbooks.analyzers import disruption, interruption
from playbooks.engine import analyze
from playbooks.explain import explain_text
from playbooks.facts import Facts, PodFacts
from playbooks.model import Target
from playbooks.registry import default_registry
from playbooks.signatures import scan_line

NS = "neuron-cb"
NODE = "ip-10-77-14-66.ap-southeast-4.compute.internal"
CLAIM = "trn2-cb-5rj8x"
CR = "cr-01c2e6897ac9c06d3"
# expiration/controller.go: log.WithValues("NodeClaim", ..., "capacity-reservation-id", ...).Info(...)
LOG = ('{"level":"INFO","time":"2026-11-28T10:50:00.000Z","logger":"controller","caller":"expiration/controller.go:114",'
       '"message":"initiating delete for capacity block expiration","commit":"9f1a0c2","controller":'
       '"capacityreservation.expiration","NodeClaim":{"name":"' + CLAIM + '"},"capacity-reservation-id":"' + CR + '"}')


def test_the_expiration_log_line_is_an_interruption():
    (sig,) = [s for s in scan_line(LOG, source="log") if s.code == "karpenter.interruption"]
    assert sig.fields["interruption"] == "CapacityBlockExpiring" and sig.fields["nodeclaim"] == CLAIM
    assert sig.severity == "warning"


def job(*, state: str = "expiring", log: bool = False) -> Facts:
    facts = Facts(target=Target(kind="job", name="llama4-cpt", namespace=NS), cluster="prod")
    pod = {"metadata": {"name": "llama4-cpt-0-h7d2s", "namespace": NS, "labels": {"batch.kubernetes.io/job-name": "llama4-cpt"},
                        "ownerReferences": [{"kind": "Job", "name": "llama4-cpt", "apiVersion": "batch/v1"}]},
           "spec": {"nodeName": NODE, "containers": [{"name": "cpt"}]},
           "status": {"phase": "Running", "containerStatuses": [{"name": "cpt", "state": {"running": {}}}]}}
    evicted = {"metadata": {"name": "e1", "namespace": NS}, "involvedObject": {"kind": "Pod", "name": "llama4-cpt-0-h7d2s"},
               "reason": "Evicted", "message": "Evicted pod", "source": {"component": "karpenter"}, "type": "Normal",
               "count": 1, "firstTimestamp": "2026-11-28T10:50:01Z", "lastTimestamp": "2026-11-28T10:50:01Z"}
    facts.pods.append(PodFacts(pod=pod, events=[evicted]))
    labels = {"karpenter.sh/nodepool": "trn2-cb", "karpenter.sh/capacity-type": "reserved",
              "karpenter.k8s.aws/capacity-reservation-id": CR, "karpenter.k8s.aws/capacity-reservation-type": "capacity-block"}
    facts.nodes[NODE] = {"metadata": {"name": NODE, "labels": labels, "ownerReferences": [{"kind": "NodeClaim", "name": CLAIM}]},
                         "status": {}}
    facts.nodeclaims[CLAIM] = {"metadata": {"name": CLAIM, "labels": labels, "deletionTimestamp": "2026-11-28T10:50:00Z"},
                               "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "trn2-cb"}},
                               "status": {"nodeName": NODE}}
    facts.nodeclasses["karpenter.k8s.aws/trn2-cb"] = {"metadata": {"name": "trn2-cb"}, "status": {"capacityReservations": [
        {"id": CR, "instanceType": "trn2.48xlarge", "reservationType": "capacity-block", "state": state,
         "endTime": "2026-11-28T11:30:00Z", "availabilityZone": "ap-southeast-4b"}]}}
    facts.nodepools["trn2-cb"] = {"metadata": {"name": "trn2-cb"}, "spec": {"disruption": {
        "consolidationPolicy": "WhenEmptyOrUnderutilized"}, "template": {"spec": {}}}}
    facts.karpenter_log = [LOG] if log else []
    return facts


def test_an_expiring_block_is_ec2_taking_the_node_from_the_nodeclass_status_alone():
    (found,) = interruption.analyze(job())
    assert found.code == "karpenter.interruption" and found.severity == "critical"
    assert "CapacityBlockExpiring" in found.title and "40 minutes" in found.detail and "2026-11-28T11:30:00Z" in found.detail
    assert any(e.source == "ec2nodeclass/trn2-cb status.capacityReservations" for e in found.evidence)
    assert "describe-capacity-block-extension-offerings --capacity-reservation-id " + CR in found.fix.snippet
    assert found.remediations == []


def test_the_log_line_alone_names_the_nodeclaim():
    facts = job(state="active", log=True)
    (found,) = interruption.analyze(facts)
    assert "CapacityBlockExpiring" in found.title and any("capacity block expiration" in e.text for e in found.evidence)


def test_an_active_block_takes_nothing():
    assert list(interruption.analyze(job(state="active"))) == []


def test_the_diagnosis_leads_with_the_reclaim_and_offers_no_voluntary_disruption_fix():
    findings = analyze(job(log=True), registry=default_registry()).findings
    assert findings[0].code == "karpenter.interruption"
    assert list(disruption.analyze(job(log=True))) == []
    for f in findings:
        assert not [r for r in f.remediations if r.kind in ("annotate-do-not-disrupt", "nodepool-consolidation")]
        assert 'karpenter.sh/do-not-disrupt: "true"' not in (f.fix.snippet if f.fix else "")


def test_pasted_lines_say_the_eviction_is_the_reclaims_drain():
    findings = {f.code: f for f in explain_text(LOG + "\nNormal  Evicted  40s  karpenter  Evicted pod").findings}
    assert "Capacity Block" in findings["karpenter.interruption"].detail
    drain = findings["karpenter.disruption"]
    assert "its drain" in drain.detail and 'do-not-disrupt: "true"' not in drain.fix.snippet
