"""Allocatable as the EC2NodeClass and the controller shape it (aws/karpenter-provider-aws
pkg/providers/instancetype/types.go v1.14.1: Resolve, computeCapacity, memory, ephemeralStorage, pods,
kubeReservedResources, evictionThreshold) and NodePool limits against capacity after the VM overhead
(kubernetes-sigs/karpenter scheduler.go filterByRemainingResources)."""
from __future__ import annotations

import math

import pytest

from bot.gateway.ec2 import InstanceTypeInfo
from playbooks.karpenter import limits as lim
from playbooks.karpenter import resources as res
from playbooks.karpenter.nodeconfig import NodeConfig, ami_family, node_config, version_tuple

MIB, GI = 2**20, 2**30


def g6e_xl(**extra) -> InstanceTypeInfo:
    # g6e.xlarge: 4 vCPU, 32 GiB, 1x L40S, 4 ENIs x 15 IPv4 on its one card (ENI-limited pods 58), 250 GB NVMe
    return InstanceTypeInfo(name="g6e.xlarge", vcpus=4, memory_mib=32768, architectures=("x86_64",), gpu_count=1,
                            gpu_name="L40S", gpu_manufacturer="NVIDIA", gpu_memory_mib=46068, efa_supported=False,
                            max_efa_interfaces=0, default_card_network_interfaces=4, ipv4_per_interface=15, **extra)


def nodeclass(**spec) -> dict:
    return {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "gpu"}, "spec": spec}


def test_defaults_match_the_old_estimate_and_add_ephemeral_storage():
    got = res.allocatable(g6e_xl())
    mem = 32768 - math.ceil(32768 * 0.075)
    assert got["memory"] == (mem - (11 * 58 + 255) - 100) * MIB
    assert got["pods"] == 58
    # AL2 default: 20Gi on /dev/xvda, less 1Gi kube-reserved and 10% eviction (rounded up)
    assert got["ephemeral-storage"] == 20 * GI - GI - math.ceil(20 * GI / 10)


def test_root_volume_of_the_nodeclass_is_the_ephemeral_storage():
    config = node_config(nodepool=None, nodeclass=nodeclass(
        amiSelectorTerms=[{"alias": "al2023@latest"}],
        blockDeviceMappings=[{"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "500Gi"}}]))
    assert config.ami_family == "AL2023"
    assert res.ephemeral_storage(g6e_xl(), config) == 500 * GI
    fits = res.fit({"cpu": 1, "ephemeral-storage": 200 * GI, "nvidia.com/gpu": 1, "pods": 1}, {}, {"g6e.xlarge": g6e_xl()},
                   config=config)
    assert fits.fitting and not fits.missing
    too_big = res.fit({"ephemeral-storage": 460 * GI, "pods": 1}, {}, {"g6e.xlarge": g6e_xl()}, config=config)
    assert too_big.missing == {"g6e.xlarge": ["ephemeral-storage"]}  # 500 - 1 - 50 = 449Gi allocatable


def test_bottlerocket_uses_its_data_volume_and_custom_its_last_mapping():
    bottlerocket = node_config(nodepool=None, nodeclass=nodeclass(amiFamily="Bottlerocket", blockDeviceMappings=[
        {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "4Gi"}}, {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "300Gi"}}]))
    assert res.ephemeral_storage(g6e_xl(), bottlerocket) == 300 * GI
    custom = node_config(nodepool=None, nodeclass=nodeclass(amiSelectorTerms=[{"id": "ami-0123456789abcdef0"}], blockDeviceMappings=[
        {"deviceName": "/dev/sda1", "ebs": {"volumeSize": "100Gi"}}, {"deviceName": "/dev/sdb", "ebs": {"volumeSize": "1Ti"}}]))
    assert custom.ami_family == "Custom" and res.ephemeral_storage(g6e_xl(), custom) == 2**40
    windows = NodeConfig(ami_family="Windows2022")
    assert res.ephemeral_storage(g6e_xl(), windows) == 50 * GI


def test_raid0_instance_store_replaces_the_root_volume_when_its_size_is_known():
    config = node_config(nodepool=None, nodeclass=nodeclass(amiFamily="AL2023", instanceStorePolicy="RAID0"))
    assert res.ephemeral_storage(g6e_xl(instance_storage_gb=250), config) == 250e9
    # a type EC2 states no instance store for (no InstanceStorageInfo) falls back to the root volume
    # (aws v1.14.1 types.go ephemeralStorage): 20Gi on AL2023 without a blockDeviceMapping
    assert res.ephemeral_storage(g6e_xl(), config) == 20 * GI
    assert not res.fit({"ephemeral-storage": 900 * GI, "pods": 1}, {}, {"g6e.xlarge": g6e_xl()}, config=config).fitting


def test_kubelet_settings_change_allocatable():
    config = node_config(nodepool=None, nodeclass=nodeclass(amiFamily="AL2023", kubelet={
        "maxPods": 20, "kubeReserved": {"memory": "2Gi", "cpu": "500m"}, "systemReserved": {"memory": "1Gi"},
        "evictionHard": {"memory.available": "5%", "nodefs.available": "15%"}}))
    got = res.allocatable(g6e_xl(), config)
    cap_mem = (32768 - math.ceil(32768 * 0.075)) * MIB
    assert got["pods"] == 20
    assert got["cpu"] == pytest.approx(3.5)
    assert got["memory"] == cap_mem - 2 * GI - GI - math.ceil(cap_mem / 100 * 5)
    assert got["ephemeral-storage"] == 20 * GI - GI - math.ceil(20 * GI / 100 * 15)


def test_kube_reserved_memory_counts_eni_pods_on_al2023_but_max_pods_on_bottlerocket():
    al2023 = res.allocatable(g6e_xl(), NodeConfig(ami_family="AL2023", max_pods=234))
    bottlerocket = res.allocatable(g6e_xl(), NodeConfig(ami_family="Bottlerocket", max_pods=234))
    # types.go: UsesENILimitedMemoryOverhead (AL2, AL2023, Custom) reserves 11Mi x ENI pods (58), Bottlerocket x maxPods
    assert al2023["memory"] - bottlerocket["memory"] == 11 * (234 - 58) * MIB
    assert al2023["pods"] == bottlerocket["pods"] == 234


def test_pods_per_core_caps_pods_except_on_bottlerocket():
    assert res.max_pods(g6e_xl(), NodeConfig(ami_family="AL2023", pods_per_core=4)) == 16
    assert res.max_pods(g6e_xl(), NodeConfig(ami_family="Bottlerocket", pods_per_core=4)) == 58
    assert res.max_pods(g6e_xl(), NodeConfig(ami_family="Windows2022")) == 110


def test_eviction_soft_counted_before_v1_9_only():
    soft = {"memory.available": "2Gi"}
    old = res.allocatable(g6e_xl(), NodeConfig(eviction_soft=soft, version=(1, 8)))
    new = res.allocatable(g6e_xl(), NodeConfig(eviction_soft=soft, version=(1, 9)))
    assert new["memory"] - old["memory"] == 2 * GI - 100 * MIB


def test_controller_vm_overhead_setting():
    config = node_config(nodepool=None, nodeclass=None, vm_overhead="0.05")
    assert res.capacity(g6e_xl(), config)["memory"] == (32768 - math.ceil(32768 * 0.05)) * MIB
    assert node_config(nodepool=None, nodeclass=None, vm_overhead="lots").vm_overhead == 0.075


def test_v1beta1_kubelet_on_the_nodepool_template_is_read():
    nodepool = {"spec": {"template": {"spec": {"kubelet": {"maxPods": 8}}}}}
    assert node_config(nodepool=nodepool, nodeclass=nodeclass(amiFamily="AL2")).max_pods == 8


def test_names_of_families_and_versions():
    assert ami_family(nodeclass(amiSelectorTerms=[{"alias": "bottlerocket@v1.30.0"}])) == "Bottlerocket"
    assert ami_family(None) == "AL2"
    assert version_tuple("v1.14.1") == (1, 14) and version_tuple("1.8.3") == (1, 8) and version_tuple("latest") is None


def test_nodepool_memory_limit_counts_capacity_after_vm_overhead():
    types = {"g6e.xlarge": g6e_xl()}
    # raw memory 32Gi would not fit in the 31Gi left; after 7.5 % (30310Mi) it does
    nodepool = {"metadata": {"name": "gpu"}, "spec": {"limits": {"memory": "100Gi"}}, "status": {"resources": {"memory": "69Gi"}}}
    assert lim.blocking(nodepool, types) is None
    tighter = {**nodepool, "status": {"resources": {"memory": "71Gi"}}}
    block = lim.blocking(tighter, types)
    assert block.resource == "memory" and block.needed == (32768 - math.ceil(32768 * 0.075)) * MIB
    # a controller run with VM_MEMORY_OVERHEAD_PERCENT=0 counts the raw memory
    assert lim.blocking(nodepool, types, NodeConfig(vm_overhead=0.0)).needed == 32 * GI
