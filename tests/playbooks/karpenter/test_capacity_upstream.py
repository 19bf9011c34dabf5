"""Capacity the AWS provider computes for an instance type (aws/karpenter-provider-aws v1.14.1
pkg/providers/instancetype/types.go computeCapacity): ephemeral storage under RAID0 without an instance store,
aws.amazon.com/neuroncore, and the EC2NodeClass networkInterfaces overriding EFA and ENI-limited pods. Numbers
from upstream's pkg/providers/instancetype/suite_test.go where it has them."""
from __future__ import annotations

from bot.gateway.catalogue import InstanceTypeInfo, embedded_catalogue
from playbooks.analyzers.pending_findings import finding_for
from playbooks.karpenter import resources as res
from playbooks.karpenter.evaluate import evaluate
from playbooks.karpenter.nodeconfig import NodeConfig, node_config
from tests.playbooks.karpenter.topology_builders import facts, nodepool, pod

GI = 2**30
EFA = "vpc.amazonaws.com/efa"
# suite_test.go: "m6idn.32xlarge supports 8 ENIs on NC 0 and 50 IP address for an ENI"; 7600G of instance store
M6IDN = InstanceTypeInfo(name="m6idn.32xlarge", vcpus=128, memory_mib=524288, architectures=("x86_64",), gpu_count=0,
                         gpu_name=None, gpu_manufacturer=None, gpu_memory_mib=None, efa_supported=True,
                         max_efa_interfaces=2, default_card_network_interfaces=8, ipv4_per_interface=50,
                         instance_storage_gb=7600)
# dl1.24xlarge "only supports 4 EFAs"
DL1 = InstanceTypeInfo(name="dl1.24xlarge", vcpus=96, memory_mib=786432, architectures=("x86_64",), gpu_count=8,
                       gpu_name="Gaudi HL-205", gpu_manufacturer="Habana", gpu_memory_mib=32768, efa_supported=True,
                       max_efa_interfaces=4, default_card_network_interfaces=15, ipv4_per_interface=50,
                       instance_storage_gb=4000)


def _nodeclass(**spec) -> dict:
    return {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
            "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], **spec}}


def _config(**spec) -> NodeConfig:
    return node_config(nodepool=None, nodeclass=_nodeclass(**spec))


# -- RAID0 ---------------------------------------------------------------------------------------------

def test_raid0_sizes_ephemeral_storage_from_the_instance_store():
    # "should launch instances w/ instance storage ... when disks are mounted": capacity 7600G
    assert res.ephemeral_storage(M6IDN, _config(instanceStorePolicy="RAID0")) == 7600e9


def test_raid0_on_a_type_without_instance_store_falls_back_to_the_root_volume():
    inf2 = embedded_catalogue().types["inf2.xlarge"]  # EC2 states no InstanceStorageInfo for it
    assert res.ephemeral_storage(inf2, _config(instanceStorePolicy="RAID0")) == 20 * GI
    mapped = _config(instanceStorePolicy="RAID0", blockDeviceMappings=[
        {"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "200Gi"}}])
    assert res.ephemeral_storage(inf2, mapped) == 200 * GI
    # before, an unknown size was never held against the type: 500Gi "fitted" a 20Gi root volume
    assert not res.fit({"ephemeral-storage": 500 * GI, "pods": 1}, {}, {"inf2.xlarge": inf2},
                       config=_config(instanceStorePolicy="RAID0")).fitting


# -- Neuron cores --------------------------------------------------------------------------------------

def test_neuroncore_capacity_is_devices_times_cores():
    catalogue = embedded_catalogue().types
    assert res.capacity(catalogue["inf2.xlarge"])["aws.amazon.com/neuroncore"] == 2
    assert res.capacity(catalogue["trn1.32xlarge"])["aws.amazon.com/neuroncore"] == 32


def test_a_neuroncore_request_fits_inf2_xlarge():
    # "should launch inf2 instances for aws.amazon.com/neuroncore resource requests" (2 cores)
    inf2 = embedded_catalogue().types["inf2.xlarge"]
    spec = {"containers": [{"name": "infer", "resources": {"requests": {"aws.amazon.com/neuroncore": "2"}}}],
            "nodeSelector": {}}
    pending = pod("infer-0", **spec)
    pool = nodepool("neuron", requirements=[{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                             "values": ["inf2.xlarge"]}])
    assert evaluate(pending, pool, facts([pending], nodepools=[pool], types=[inf2])).ok


# -- networkInterfaces ---------------------------------------------------------------------------------

PRIMARY = {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}


def test_efa_only_interfaces_on_card_zero_take_enis_from_pods():
    # "should calculate max pods according when no EFA-only interfaces used on NC 0": 8 * 49 + 2 = 394
    other_card = _config(networkInterfaces=[PRIMARY, {"networkCardIndex": 1, "deviceIndex": 0,
                                                      "interfaceType": "efa-only"}])
    assert res.capacity(M6IDN, other_card)["pods"] == 394
    # "should calculate max pods according to EFA-only interfaces used": (8 - 1) * 49 + 2 = 345
    card_zero = _config(networkInterfaces=[PRIMARY, {"networkCardIndex": 0, "deviceIndex": 1,
                                                     "interfaceType": "efa-only"}])
    assert res.capacity(M6IDN, card_zero)["pods"] == 345


def test_network_interfaces_override_the_types_efa_count():
    p5 = embedded_catalogue().types["p5.48xlarge"]
    assert res.capacity(p5)[EFA] == 32
    one = _config(networkInterfaces=[PRIMARY, {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"}])
    assert res.capacity(p5, one)[EFA] == 1
    assert EFA not in res.capacity(p5, _config(networkInterfaces=[PRIMARY]))
    # the field is v1.11+: an older controller counts the type's own EFAs
    older = node_config(nodepool=None, nodeclass=_nodeclass(networkInterfaces=[PRIMARY]), controller_version="1.10.2")
    assert res.capacity(p5, older)[EFA] == 32


def _efa_pod(efas: int, pool_types: list[str], types, *, interfaces: list[dict]):
    spec = {"containers": [{"name": "trainer", "resources": {"requests": {EFA: str(efas), "cpu": "8"}}}],
            "nodeSelector": {}}
    pending = pod("trainer-0", **spec)
    pool = nodepool("efa", requirements=[{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                          "values": pool_types}])
    f = facts([pending], nodepools=[pool], types=types)
    f.nodeclasses = {"karpenter.k8s.aws/default": _nodeclass(networkInterfaces=interfaces)}
    return pending, pool, f


def test_a_pod_asking_for_more_efa_than_the_nodeclass_defines_does_not_fit():
    p5 = embedded_catalogue().types["p5.48xlarge"]
    interfaces = [PRIMARY, {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"}]
    pending, pool, f = _efa_pod(1, ["p5.48xlarge"], [p5], interfaces=interfaces)
    assert evaluate(pending, pool, f).ok
    pending, pool, f = _efa_pod(4, ["p5.48xlarge"], [p5], interfaces=interfaces)
    verdict = evaluate(pending, pool, f)
    assert [b.kind for b in verdict.blockers] == ["resources"]
    pending, pool, f = _efa_pod(1, ["p5.48xlarge"], [p5], interfaces=[PRIMARY])
    [blocker] = evaluate(pending, pool, f).blockers
    assert blocker.kind == "efa"
    finding = finding_for(pending, pool, blocker, verdict=evaluate(pending, pool, f), facts=f, quoted=[])
    assert finding.code == "efa.resource_unavailable" and "networkInterfaces" in finding.title


def test_more_efa_only_interfaces_than_the_type_supports_leave_no_offering():
    # "should mark instance type offering as unavailable when it does not support network interface configuration":
    # five efa-only interfaces, dl1.24xlarge supports 4
    interfaces = [PRIMARY] + [{"networkCardIndex": c, "deviceIndex": 1 if c == 0 else 0, "interfaceType": "efa-only"}
                              for c in range(5)]
    pending, pool, f = _efa_pod(1, ["dl1.24xlarge"], [DL1], interfaces=interfaces)
    [blocker] = evaluate(pending, pool, f).blockers
    assert blocker.kind == "offering" and blocker.data["nodeclass_incompatible"] == ["dl1.24xlarge"]
    finding = finding_for(pending, pool, blocker, verdict=evaluate(pending, pool, f), facts=f, quoted=[])
    assert finding.code == "karpenter.offering_unavailable_in_zone" and "5 EFA interfaces" in finding.title
    pending, pool, f = _efa_pod(1, ["dl1.24xlarge"], [DL1], interfaces=interfaces[:5])  # four: offered
    assert evaluate(pending, pool, f).ok
