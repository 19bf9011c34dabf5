"""NodePool limits as Karpenter applies them (kubernetes-sigs/karpenter pkg/controllers/provisioning/
scheduling/scheduler.go filterByRemainingResources: capacity of the type against limit minus usage)."""
from __future__ import annotations

from bot.gateway.ec2 import InstanceTypeInfo
from playbooks.karpenter import limits as lim


def info(name, *, vcpus, memory_gib, gpus=0) -> InstanceTypeInfo:
    return InstanceTypeInfo(name=name, vcpus=vcpus, memory_mib=memory_gib * 1024, architectures=("x86_64",),
                            gpu_count=gpus, gpu_name="A10G" if gpus else None, gpu_manufacturer="NVIDIA" if gpus else None,
                            gpu_memory_mib=24576 if gpus else None, efa_supported=False, max_efa_interfaces=0)


G5 = {"g5.2xlarge": info("g5.2xlarge", vcpus=8, memory_gib=32, gpus=1),
      "g5.12xlarge": info("g5.12xlarge", vcpus=48, memory_gib=192, gpus=4)}


def nodepool(limits, used):
    return {"metadata": {"name": "gpu"}, "spec": {"limits": limits}, "status": {"resources": used}}


def test_cpu_limit_blocks_the_smallest_fitting_type():
    block = lim.blocking(nodepool({"cpu": "100", "nvidia.com/gpu": "64"}, {"cpu": "96", "nvidia.com/gpu": "8"}), G5)
    assert block.resource == "cpu" and block.instance_type == "g5.2xlarge"
    assert (block.limit, block.used, block.needed) == (100, 96, 8)


def test_room_for_the_smallest_type_is_enough():
    assert lim.blocking(nodepool({"cpu": "100"}, {"cpu": "90"}), G5) is None  # g5.2xlarge (8) fits in 10


def test_gpu_limit_and_memory_quantities():
    block = lim.blocking(nodepool({"nvidia.com/gpu": "32"}, {"nvidia.com/gpu": "32"}), G5)
    assert block.resource == "nvidia.com/gpu" and block.needed == 1
    block = lim.blocking(nodepool({"memory": "1000Gi"}, {"memory": "990Gi"}), G5)
    assert block.resource == "memory" and block.instance_type == "g5.2xlarge"
    raised = lim.raised_limits(nodepool({"memory": "1000Gi"}, {"memory": "990Gi"}), block)
    assert raised == {"memory": "2000Gi"}


def test_nodes_limit_counts_one_per_node():
    block = lim.blocking(nodepool({"nodes": "4"}, {"nodes": "4"}), G5)
    assert block.resource == "nodes" and block.needed == 1


def test_without_instance_types_only_the_pod_request_proves_a_block():
    np = nodepool({"cpu": "100"}, {"cpu": "98"})
    assert lim.blocking_by_request(np, {"cpu": 4}).resource == "cpu"
    assert lim.blocking_by_request(np, {"cpu": 1}) is None
