"""GPU node detector: NotReady, GPUs gone from allocatable, node monitoring agent conditions and events.
Cases after public reports; healthy nodes and benign warnings give nothing."""
from __future__ import annotations

from playbooks.sweep.nodes import node_problems

from tests.playbooks.sweep_objects import NOW, ago, gpu_node, node_event


def problems(nodes, events=()):
    return node_problems(list(nodes), list(events), cluster="prod-use1", now=NOW)


def test_healthy_gpu_nodes_give_nothing():
    nodes = [gpu_node("ip-10-1-0-1", conditions=[{"type": "AcceleratedHardwareReady", "status": "True",
                                                     "reason": "NvidiaAcceleratedHardwareIsReady"}]),
             gpu_node("ip-10-1-0-2", itype="g6e.12xlarge", gpus=4)]
    events = [node_event("ip-10-1-0-1", "RegisteredNode", "Registered Node", kind="Normal")]
    assert problems(nodes, events) == []


def test_allocatable_below_capacity_is_an_unhealthy_gpu_with_a_cordon():
    # NVIDIA/k8s-device-plugin#58: capacity 16, allocatable 0 after the plugin marked every GPU unhealthy
    [p] = problems([gpu_node("ocio-gpu01", itype="p3dn.24xlarge", gpus=16, allocatable=0)])
    assert p.code == "gpu.unhealthy_device" and p.severity == "error"
    assert "16 of 16 GPUs unhealthy" in p.title
    assert p.group == "node/ocio-gpu01" and p.target.kind == "node"
    assert [(r.kind, r.target) for r in p.remediations] == [("cordon-gpu-node", "node/ocio-gpu01")]


def test_monitoring_agent_xid_condition_and_lost_gpu_on_one_node_share_its_group():
    # NVIDIA/k8s-device-plugin#2038: a GPU fallen off the bus (Xid 79) on an 8-GPU node
    cond = {"type": "AcceleratedHardwareReady", "status": "False", "reason": "NvidiaXID79Error",
            "message": "NVRM: Xid (PCI:0000:97:00): 79, GPU has fallen off the bus.", "lastTransitionTime": ago(minutes=5)}
    found = problems([gpu_node("ip-10-2-7-7", itype="p4de.24xlarge", allocatable=7, conditions=[cond])])
    assert {p.code for p in found} == {"gpu.xid_error", "gpu.unhealthy_device"}
    assert {p.group for p in found} == {"node/ip-10-2-7-7"}
    xid = next(p for p in found if p.code == "gpu.xid_error")
    assert xid.severity == "critical" and "Xid 79" in xid.title
    assert "NvidiaXID79Error" in xid.evidence[0].text


def test_dcgm_health_condition_is_an_unhealthy_gpu():
    cond = {"type": "AcceleratedHardwareReady", "status": "False", "reason": "DCGMHealthCode101", "message": "NVLink down"}
    [p] = problems([gpu_node("ip-10-3-1-1", conditions=[cond])])
    assert p.code == "gpu.unhealthy_device" and "DCGMHealthCode101" in p.title


def test_networking_condition_false_is_a_node_problem():
    cond = {"type": "NetworkingReady", "status": "False", "reason": "IPAMDNotReady", "message": "IPAMD fails to connect"}
    [p] = problems([gpu_node("ip-10-3-1-2", conditions=[cond])])
    assert p.code == "node.not_ready" and "NetworkingReady=False (IPAMDNotReady)" in p.title


def test_not_ready_after_the_grace_period_only():
    stale = gpu_node("ip-10-4-0-1", ready="False", ready_since=ago(minutes=10))
    fresh = gpu_node("ip-10-4-0-2", ready="False", ready_since=ago(seconds=30))
    [p] = problems([stale, fresh])
    assert p.code == "node.not_ready" and p.target.name == "ip-10-4-0-1"


def test_node_being_disrupted_by_karpenter_is_not_a_problem_but_a_node_stuck_joining_is():
    leaving = gpu_node("ip-10-4-1-1", ready="Unknown", ready_since=ago(minutes=20),
                       taints=[{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}])
    joining = gpu_node("ip-10-4-1-2", ready="False", created=ago(minutes=3),
                       taints=[{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}])
    stuck = gpu_node("ip-10-4-1-3", ready="False", created=ago(minutes=14),
                     taints=[{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}])
    [p] = problems([leaving, joining, stuck])
    assert p.target.name == "ip-10-4-1-3" and "joining" in p.title


def test_cpu_nodes_are_not_swept():
    cpu = gpu_node("ip-10-9-0-1", itype="m7i.2xlarge", gpus=0, ready="False", ready_since=ago(hours=1))
    cpu["metadata"]["labels"].pop("karpenter.k8s.aws/instance-gpu-count")
    assert problems([cpu]) == []


def test_gpu_node_without_device_plugin_after_ten_minutes():
    node = gpu_node("ip-10-5-0-1", itype="g6.xlarge", gpus=1, created=ago(minutes=30))
    for which in ("capacity", "allocatable"):
        node["status"][which].pop("nvidia.com/gpu")
    young = gpu_node("ip-10-5-0-2", itype="g6.xlarge", gpus=1, created=ago(minutes=2))
    for which in ("capacity", "allocatable"):
        young["status"][which].pop("nvidia.com/gpu")
    [p] = problems([node, young])
    assert p.code == "gpu.device_plugin_missing" and p.target.name == "ip-10-5-0-1"


def test_xid_warning_events_counted_application_xids_ignored():
    # aws/eks-node-monitoring-agent#272: Xid 43 on a g4dn.4xlarge is an application error (event only)
    node = gpu_node("ip-10-6-0-1", itype="g4dn.4xlarge", gpus=1)
    app = node_event("ip-10-6-0-1", "NvidiaXID43Warning", "NVRM: Xid (PCI:0000:00:1e): 43, pid=1, Ch 00000008", count=9)
    assert problems([node], [app]) == []
    ecc = node_event("ip-10-6-0-1", "NvidiaXID94Warning", "NVRM: Xid (PCI:0000:00:1e): 94, Contained ECC error.", count=3)
    [p] = problems([node], [app, ecc])
    assert p.code == "gpu.xid_error" and p.severity == "warning" and "Xid 94 reported 3 times" in p.title
    assert not p.remediations


def test_xid_in_another_agents_warning_message_and_old_events():
    node = gpu_node("ip-10-6-1-1")
    npd = node_event("ip-10-6-1-1", "GPUXidError", "kernel: NVRM: Xid (PCI:0000:53:00): 48, pid=77, DBE (double bit error)")
    old = node_event("ip-10-6-1-1", "NvidiaXID79Error", "NVRM: Xid 79", last=ago(hours=3))
    [p] = problems([node], [npd, old])
    # one reporter alone, the node's status silent: an error without a cordon, never critical
    assert p.code == "gpu.xid_error" and "Xid 48" in p.title and p.severity == "error" and not p.remediations
    assert p.title.endswith("alone")


def test_gpu_health_warning_events():
    node = gpu_node("ip-10-6-2-1")
    [p] = problems([node], [node_event("ip-10-6-2-1", "NvidiaPageRetirement", "page retired on GPU 3")])
    assert p.code == "gpu.unhealthy_device" and p.severity == "warning"
