"""Karpenter node repair read against upstream: kubernetes-sigs/karpenter v1.14.0 pkg/controllers/node/health
(controller.go: the repair policies' tolerations, "deleting unhealthy node", the 20% NodeRepairBlocked events of
events.go), aws/karpenter-provider-aws v1.14.1 pkg/cloudprovider/cloudprovider.go RepairPolicies, and the EKS node
monitoring agent's GPU reasons (aws/eks-node-monitoring-agent v1.7.0). A node repaired for a GPU condition is a GPU
fault first; the repair is what followed and is never answered with do-not-disrupt or WhenEmpty."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from playbooks.analyzers import disruption
from playbooks.engine import analyze
from playbooks.facts import Facts, PodFacts
from playbooks.model import Target
from playbooks.registry import default_registry
from playbooks.signatures import scan_line

NS = "moe"
JOB = "moe-pretrain"
NODE = "ip-10-140-9-212.ap-south-2.compute.internal"
CLAIM = "b300-moe-w4n7t"
NOW = datetime.now(timezone.utc).replace(microsecond=0)


def at(minutes: float) -> str:
    return (NOW + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


# health/controller.go deleteNodeClaim: log.FromContext(ctx).Info("deleting unhealthy node"), NodeClaim in the context
REPAIR_LOG = ('{"level":"INFO","time":"2026-11-28T10:15:00.412Z","logger":"controller","caller":"health/controller.go:173",'
              '"message":"deleting unhealthy node","commit":"5b7e1c3","controller":"node.health","Node":{"name":"'
              + NODE + '"},"NodeClaim":{"name":"' + CLAIM + '"}}')


def signals(line: str):
    return [(s.code, s.severity, dict(s.fields)) for s in scan_line(line, source="test")]


@pytest.mark.parametrize(("line", "fields"), [
    (REPAIR_LOG, {"reason": "Unhealthy", "nodeclaim": CLAIM, "node": NODE}),
    # events.go NodeRepairBlocked, message fmt.Sprintf("more than %s nodes are unhealthy in the nodepool", "20%")
    ("Warning  NodeRepairBlocked  2m  karpenter  more than 20% nodes are unhealthy in the nodepool",
     {"reason": "RepairBlocked", "threshold": "20%", "scope": "nodepool"}),
    # v1.1-v1.2 spelling, and the standalone NodeClaim's in every version
    ("more then 20% nodes are unhealthy in the nodepool", {"reason": "RepairBlocked", "scope": "nodepool"}),
    ("more then 20% nodes are unhealthy in the cluster", {"reason": "RepairBlocked", "scope": "cluster"}),
])
def test_node_health_lines(line, fields):
    found = [f for code, _, f in signals(line) if code == "karpenter.disruption"]
    assert found and all(found[0].get(k) == v for k, v in fields.items()), signals(line)


def test_the_agents_nvlink_message_is_its_nvlink_reason_and_ncclls_topology_error_is_not():
    # eks-node-monitoring-agent v1.7.0 monitors/nvidia/dcgm/dcgm_policies.go handleNvlinkFinding
    (code, severity, fields), = signals("detected 12 NVLink errors on fieldId 409")
    assert (code, severity, fields["reason"], fields["count"]) == ("gpu.unhealthy_device", "error", "NvidiaNVLinkError", "12")
    # NVIDIA/nccl src/graph/topo.cc: a topology lookup, not a link fault
    assert not [c for c, _, _ in signals("NCCL WARN Add NVLink error : could not find DEV for GPU 0000:10:00.0")
                if c.startswith("gpu.")]


def test_repair_policies_follow_the_aws_provider():
    assert disruption.REPAIR_POLICIES["AcceleratedHardwareReady"] == (("False",), timedelta(minutes=10))
    assert disruption.REPAIR_POLICIES["Ready"] == (("False", "Unknown"), timedelta(minutes=30))
    for kind in ("StorageReady", "NetworkingReady", "KernelReady", "ContainerRuntimeReady"):
        assert disruption.REPAIR_POLICIES[kind] == (("False",), timedelta(minutes=30))


def _event(kind: str, name: str, reason: str, message: str, component: str, *, namespace: str = "default",
           type_: str = "Normal", when: float = -3) -> dict:
    return {"metadata": {"name": f"{name}.{reason}", "namespace": namespace}, "involvedObject": {"kind": kind, "name": name},
            "reason": reason, "message": message, "source": {"component": component}, "type": type_, "count": 1,
            "firstTimestamp": at(when), "lastTimestamp": at(when)}


def job(*, reason: str = "NvidiaNVLinkError", message: str = "detected 12 NVLink errors on fieldId 409",
        since: float = -13, deleted: float | None = -3, log: bool = True, blocked: bool = False) -> Facts:
    facts = Facts(target=Target(kind="pytorchjob", name=JOB, namespace=NS), cluster="prod")
    pod = {"metadata": {"name": f"{JOB}-worker-0", "namespace": NS, "labels": {"training.kubeflow.org/job-name": JOB},
                        "ownerReferences": [{"kind": "PyTorchJob", "name": JOB, "apiVersion": "kubeflow.org/v1"}]},
           "spec": {"nodeName": NODE, "containers": [{"name": "pytorch"}]},
           "status": {"phase": "Running", "containerStatuses": [{"name": "pytorch", "state": {"running": {}}}]}}
    events = [_event("Pod", pod["metadata"]["name"], "Evicted", "Evicted pod", "karpenter", namespace=NS)] if deleted else []
    facts.pods.append(PodFacts(pod=pod, events=events))
    taints = [{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}] if deleted is not None else []
    facts.nodes[NODE] = {
        "metadata": {"name": NODE, "labels": {"karpenter.sh/nodepool": "b300"},
                     "ownerReferences": [{"kind": "NodeClaim", "name": CLAIM}]},
        "spec": {"taints": taints},
        "status": {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "8"}, "conditions": [
            {"type": "Ready", "status": "True", "reason": "KubeletReady", "lastTransitionTime": at(-500)},
            {"type": "AcceleratedHardwareReady", "status": "False", "reason": reason, "message": message,
             "lastTransitionTime": at(since)}]},
    }
    meta = {"name": CLAIM, "labels": {"karpenter.sh/nodepool": "b300"}}
    if deleted is not None:
        meta["deletionTimestamp"] = at(deleted)
        meta["annotations"] = {"karpenter.sh/nodeclaim-termination-timestamp": at(deleted)}
    facts.nodeclaims[CLAIM] = {"metadata": meta, "status": {"nodeName": NODE}}
    facts.nodepools["b300"] = {"metadata": {"name": "b300"}, "spec": {"disruption": {"consolidationPolicy": "WhenEmpty"},
                                                                    "template": {"spec": {}}}}
    facts.karpenter_log = [REPAIR_LOG] if log and deleted is not None else []
    if blocked:
        facts.node_events[NODE] = [_event("Node", NODE, "NodeRepairBlocked", "more than 20% nodes are unhealthy in the nodepool",
                                          "karpenter", namespace="default", type_="Warning")]
    return facts


def diagnose(facts: Facts):
    return analyze(facts, registry=default_registry()).findings


def _no_voluntary_fix(finding) -> None:
    assert not [r for r in finding.remediations if r.kind in ("annotate-do-not-disrupt", "nodepool-consolidation")]
    snippet = finding.fix.snippet if finding.fix else ""
    assert 'karpenter.sh/do-not-disrupt: "true"' not in snippet and "consolidationPolicy: WhenEmpty" not in snippet


def test_a_gpu_repair_leads_with_the_gpu_fault_and_the_repair_follows():
    findings = diagnose(job())
    first = findings[0]
    assert first.code == "gpu.unhealthy_device" and first.severity == "critical"
    assert "NvidiaNVLinkError" in first.title and "node repair" in first.detail
    assert any("deleting unhealthy node" in e.text for e in first.evidence)
    assert first.remediations == []  # the node is already going: nothing to cordon
    repair = next(f for f in findings if f.code == "karpenter.disruption")
    assert repair.severity == "warning" and "node repair" in repair.title
    _no_voluntary_fix(repair)
    assert "nodeRepair: false" in repair.fix.snippet


def test_an_xid_the_agent_names_leads_as_an_xid():
    findings = diagnose(job(reason="NvidiaXID79Error", message="detected XID-79 on the instance, review kernel logs"))
    assert findings[0].code == "gpu.xid_error" and "Xid 79" in findings[0].title
    assert "repair" in findings[0].fix.summary.lower() or "repair" in findings[0].fix.snippet


def test_a_dcgm_health_code_is_a_gpu_fault_too():
    findings = diagnose(job(reason="DCGMHealthCode3", message="DCGM detected issues in health check system with error code 3"))
    assert findings[0].code == "gpu.unhealthy_device"


def test_repair_is_read_from_the_nodeclaim_when_the_log_is_not_there():
    facts = job(log=False)
    assert disruption.repairs(facts)[NODE].inferred
    findings = diagnose(job(log=False))
    assert findings[0].code == "gpu.unhealthy_device"
    _no_voluntary_fix(next(f for f in findings if f.code == "karpenter.disruption"))


def test_a_termination_stamp_a_grace_period_later_is_not_repairs():
    facts = job(log=False)
    facts.nodeclaims[CLAIM]["metadata"]["annotations"]["karpenter.sh/nodeclaim-termination-timestamp"] = at(60)
    assert not disruption.repairs(facts)[NODE].deleted


def test_repair_blocked_keeps_the_node_and_offers_the_cordon():
    findings = diagnose(job(deleted=None, blocked=True))
    first = findings[0]
    assert first.code == "gpu.unhealthy_device" and "node repair is blocked" in first.title
    assert "more than 20% of the nodepool's nodes are unhealthy" in first.detail
    assert [r.kind for r in first.remediations] == ["cordon-gpu-node"]
    for f in findings:
        if f.code == "karpenter.disruption":
            _no_voluntary_fix(f)


def test_a_fault_younger_than_the_toleration_names_when_repair_acts():
    findings = diagnose(job(since=-4, deleted=None))
    first = findings[0]
    assert first.code == "gpu.unhealthy_device" and "replaced at" in first.detail
    assert [r.kind for r in first.remediations] == ["cordon-gpu-node"]
    assert not [f for f in findings if f.code == "karpenter.disruption" and f.severity != "info"]
