"""A registered node's memory replaces the VM overhead estimate for its instance type, for fit and NodePool
limits (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/instancetype.go discoveredCapacityCache).
Numbers from upstream's pkg/controllers/providers/instancetype/capacity/suite_test.go: a type EC2 sizes at
8192 MiB, a node reporting 3840Mi; without it 8192 - ceil(8192 x 0.075) = 7577 MiB."""
from __future__ import annotations

from bot.gateway.catalogue import InstanceTypeInfo
from playbooks.karpenter import limits, resources
from playbooks.karpenter.evaluate import evaluate
from playbooks.karpenter.nodeconfig import NodeConfig, discovered_memory
from tests.playbooks.karpenter.topology_builders import facts, nodepool, pod

MIB = 2**20
T3_LARGE = InstanceTypeInfo(name="t3.large", vcpus=2, memory_mib=8192, architectures=("x86_64",), gpu_count=0,
                            gpu_name=None, gpu_manufacturer=None, gpu_memory_mib=None, efa_supported=False,
                            max_efa_interfaces=0, default_card_network_interfaces=3, ipv4_per_interface=12)
CLASS = {"metadata": {"name": "default"}, "status": {"amis": [{"id": "ami-current", "name": "al2023"}]}}


def _node(name: str = "n-1", *, memory: str = "3840Mi", registered: bool = True, nodeclass: str = "default") -> dict:
    labels = {"node.kubernetes.io/instance-type": "t3.large", "karpenter.sh/nodepool": "general",
              "karpenter.k8s.aws/ec2nodeclass": nodeclass}
    if registered:
        labels["karpenter.sh/registered"] = "true"
    return {"metadata": {"name": name, "labels": labels}, "status": {"capacity": {"memory": memory}}}


def _claim(node: str, image: str) -> dict:
    return {"metadata": {"name": f"claim-{node}"}, "spec": {"nodeClassRef": {"name": "default"}},
            "status": {"nodeName": node, "imageID": image}}


def test_a_registered_nodes_memory_replaces_the_estimate():
    found = discovered_memory([_node()], nodeclass_name="default", nodeclass=CLASS, nodeclaims={})
    assert found == {"t3.large": 3840 * MIB}
    assert resources.capacity(T3_LARGE, NodeConfig(discovered_memory=found))["memory"] == 3840 * MIB
    assert resources.capacity(T3_LARGE)["memory"] == 7577 * MIB  # the estimate, as before


def test_the_lowest_figure_of_several_nodes_is_kept():
    nodes = [_node("n-1", memory="3932160Ki"), _node("n-2", memory="3840Mi")]
    assert discovered_memory(nodes, nodeclass_name="default", nodeclass=CLASS, nodeclaims={}) == {"t3.large": 3840 * MIB}


def test_nodes_not_registered_of_another_nodeclass_or_an_old_ami_do_not_count():
    assert discovered_memory([_node(registered=False)], nodeclass_name="default", nodeclass=CLASS, nodeclaims={}) == {}
    assert discovered_memory([_node(nodeclass="other")], nodeclass_name="default", nodeclass=CLASS, nodeclaims={}) == {}
    # "should use VM_MEMORY_OVERHEAD_PERCENT calculation after AMI update"
    stale = {"c": _claim("n-1", "ami-previous")}
    assert discovered_memory([_node()], nodeclass_name="default", nodeclass=CLASS, nodeclaims=stale) == {}
    current = {"c": _claim("n-1", "ami-current")}
    assert discovered_memory([_node()], nodeclass_name="default", nodeclass=CLASS, nodeclaims=current) == {
        "t3.large": 3840 * MIB}
    # v1.0 had no discovered capacity
    assert discovered_memory([_node()], nodeclass_name="default", nodeclass=CLASS, nodeclaims={},
                             controller_version="1.0.8") == {}


def _facts(*, request: str, limit: str | None = None, with_node: bool = True):
    spec = {"containers": [{"name": "app", "resources": {"requests": {"cpu": "500m", "memory": request}}}],
            "nodeSelector": {}}
    pending = pod("app-0", **spec)
    pool = nodepool("general", requirements=[{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                              "values": ["t3.large"]}])
    if limit:
        pool["spec"]["limits"] = {"memory": limit}
        pool["status"] = {"resources": {"memory": "0"}}
    f = facts([pending], nodes=[_node()] if with_node else [], nodepools=[pool], types=[T3_LARGE])
    f.nodeclasses = {"karpenter.k8s.aws/default": CLASS}
    return pending, pool, f


def test_fit_uses_the_registered_nodes_memory():
    # 5Gi fits in the estimate (7577 MiB less kube-reserved 11 x 35 + 255 MiB and 100Mi eviction) but not in
    # what a t3.large node of this NodeClass really reports (3840Mi)
    pending, pool, f = _facts(request="5Gi", with_node=False)
    assert evaluate(pending, pool, f).ok
    pending, pool, f = _facts(request="5Gi")
    verdict = evaluate(pending, pool, f)
    assert [b.kind for b in verdict.blockers] == ["resources"]
    assert verdict.blockers[0].data["allocatable"]["t3.large"]["memory"] == (3840 - 640 - 100) * MIB


def test_nodepool_limits_use_the_registered_nodes_memory():
    # a 4000Mi memory limit: the estimate (7577 MiB) exceeds it, the discovered capacity (3840Mi) does not
    pending, pool, f = _facts(request="1Gi", limit="4000Mi", with_node=False)
    assert [b.kind for b in evaluate(pending, pool, f).blockers] == ["limit"]
    assert limits.blocking(pool, {"t3.large": T3_LARGE}) is not None
    pending, pool, f = _facts(request="1Gi", limit="4000Mi")
    assert evaluate(pending, pool, f).ok
    found = discovered_memory([_node()], nodeclass_name="default", nodeclass=CLASS, nodeclaims={})
    assert limits.blocking(pool, {"t3.large": T3_LARGE}, NodeConfig(discovered_memory=found)) is None
