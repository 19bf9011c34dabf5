"""DaemonSet overhead per instance type from Karpenter v1.14 (kubernetes-sigs/karpenter
pkg/controllers/provisioning/scheduling/scheduler.go buildDaemonOverheadGroups, #2975), on every type
before (v1.0-v1.13 getDaemonOverhead), as the pending-pod evaluation applies it."""
from __future__ import annotations

import pytest

from bot.gateway.ec2 import InstanceTypeInfo
from playbooks.facts import Ec2Facts, Facts, KarpenterInfo, PodFacts
from playbooks.karpenter import resources as res
from playbooks.karpenter.evaluate import evaluate
from playbooks.model import Target


def info(name, *, vcpus, memory_gib, gpus, gpu_name) -> InstanceTypeInfo:
    return InstanceTypeInfo(name=name, vcpus=vcpus, memory_mib=memory_gib * 1024, architectures=("x86_64",),
                            gpu_count=gpus, gpu_name=gpu_name, gpu_manufacturer="NVIDIA", gpu_memory_mib=24576,
                            efa_supported=False, max_efa_interfaces=0, default_card_network_interfaces=4,
                            ipv4_per_interface=15)


TYPES = {"g4dn.2xlarge": info("g4dn.2xlarge", vcpus=8, memory_gib=32, gpus=1, gpu_name="T4"),
         "g5.2xlarge": info("g5.2xlarge", vcpus=8, memory_gib=32, gpus=1, gpu_name="A10G")}
NODEPOOL = {"metadata": {"name": "inference"}, "spec": {"template": {"spec": {
    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
    "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g4dn", "g5"]}]}}}}
# a profiler pinned to A10G nodes, asking for 3 of the 8 cores
PROFILER = {"metadata": {"name": "a10g-profiler", "namespace": "monitoring"}, "spec": {"template": {"spec": {
    "nodeSelector": {"karpenter.k8s.aws/instance-gpu-name": "a10g"},
    "containers": [{"name": "p", "resources": {"requests": {"cpu": "3"}}}]}}}}


def pod(cpu: str) -> PodFacts:
    return PodFacts(pod={"metadata": {"name": "embed-0", "namespace": "ml"}, "spec": {"containers": [
        {"name": "m", "resources": {"requests": {"cpu": cpu, "nvidia.com/gpu": "1"}}}]}})


def facts(version: str) -> Facts:
    found = Facts(target=Target("pod", "embed-0", "ml"), cluster="test", daemonsets=[PROFILER],
                  ec2=Ec2Facts(candidates={"inference": TYPES}, zones={}, source="ec2"),
                  karpenter=KarpenterInfo(version=version))
    return found


def test_a_daemonset_pinned_to_a_gpu_counts_only_on_that_type():
    prefix = "karpenter.k8s.aws/"
    on_g5, names = res.daemonset_overhead([PROFILER], NODEPOOL, auto_mode=False, info=TYPES["g5.2xlarge"], prefix=prefix)
    assert names == ["a10g-profiler"] and on_g5["cpu"] == 3
    on_g4dn, names = res.daemonset_overhead([PROFILER], NODEPOOL, auto_mode=False, info=TYPES["g4dn.2xlarge"], prefix=prefix)
    assert names == [] and on_g4dn == {}
    everywhere, names = res.daemonset_overhead([PROFILER], NODEPOOL, auto_mode=False)
    assert names == ["a10g-profiler"]


@pytest.mark.parametrize("version, fits", [("1.14.0", True), ("v1.14.1", True), ("1.13.0", False), ("1.5.2", False)])
def test_a_pod_that_fits_only_without_the_pinned_daemonset(version, fits):
    # 6 cores: g4dn.2xlarge has 7.9 allocatable, less the profiler's 3 before v1.14 (4.9); g5 always 4.9
    verdict = evaluate(pod("6"), NODEPOOL, facts(version))
    assert verdict.ok is fits
    if not fits:
        blocker = verdict.blockers[0]
        assert blocker.kind == "resources" and blocker.data["daemonsets"] == ["a10g-profiler"]
