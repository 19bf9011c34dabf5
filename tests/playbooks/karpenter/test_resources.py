"""Pod requests as kube-scheduler computes them and allocatable as Karpenter estimates it
(kubernetes/kubernetes pkg/api/v1/resource/helpers.go; aws/karpenter-provider-aws
pkg/providers/instancetype/types.go)."""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from bot.gateway.ec2 import InstanceTypeInfo
from playbooks.karpenter import resources as res

MIB = 2**20


def p4d() -> InstanceTypeInfo:
    return InstanceTypeInfo(name="p4d.24xlarge", vcpus=96, memory_mib=1179648, architectures=("x86_64",), gpu_count=8,
                            gpu_name="A100", gpu_manufacturer="NVIDIA", gpu_memory_mib=40960, efa_supported=True,
                            max_efa_interfaces=4)


def container(name, **requests):
    return {"name": name, "resources": {"requests": {k.replace("_", "."): v for k, v in requests.items()}}}


@pytest.mark.parametrize("text, value", [("500m", 0.5), ("2", 2), ("64Gi", 64 * 2**30), ("1.5", 1.5), ("1e3", 1000),
                                         ("128974848", 128974848), ("129M", 129e6)])
def test_quantity(text, value):
    assert res.quantity(text) == pytest.approx(value)


def test_pod_requests_sum_containers_max_init_and_add_sidecars_and_overhead():
    pod = {"spec": {
        "containers": [{"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
                       {"name": "b", "resources": {"requests": {"cpu": "500m"}}}],
        "initContainers": [
            {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}}},
            {"name": "big-init", "resources": {"requests": {"cpu": "4", "memory": "512Mi"}}},
        ],
        "overhead": {"cpu": "100m"},
    }}
    got = res.pod_requests(pod)
    # containers 1.5 + sidecar 0.25 = 1.75 < init step 4 + 0.25 = 4.25; plus 0.1 overhead
    assert got["cpu"] == pytest.approx(4.35)
    # memory: containers 1Gi + sidecar 128Mi = 1152Mi > init step 512 + 128 = 640Mi
    assert got["memory"] == pytest.approx(1152 * MIB)
    assert got["pods"] == 1


def test_limits_stand_in_for_missing_requests():
    pod = {"spec": {"containers": [{"name": "t", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}
    assert res.pod_requests(pod)["nvidia.com/gpu"] == 8


def test_allocatable_subtracts_vm_overhead_kube_reserved_and_eviction():
    info = p4d()
    pods = res.max_pods(info)
    got = res.allocatable(info)
    mem = 1179648 - math.ceil(1179648 * 0.075)
    assert got["memory"] == (mem - (11 * pods + 255) - 100) * MIB
    # kube-reserved cpu: 60m + 10m + 10m + 0.25% of the other 92 cores (230m)
    assert got["cpu"] == pytest.approx(96 - 0.310)
    assert got["nvidia.com/gpu"] == 8 and got["vpc.amazonaws.com/efa"] == 4 and got["pods"] == pods


def test_max_pods_from_the_eni_formula_when_present_else_110():
    assert res.max_pods(SimpleNamespace(max_pods=737)) == 737
    assert res.max_pods(SimpleNamespace(max_pods=0)) == 110
    assert res.max_pods(SimpleNamespace()) == 110


def test_small_instance_kube_reserved_cpu():
    # 2 vCPU: 60m + 10m = 70m (types.go kubeReservedResources)
    assert res._kube_reserved_cpu(2) == pytest.approx(0.07)


def test_daemonset_overhead_counts_only_daemonsets_that_would_run_there():
    nodepool = {"metadata": {"name": "gpu"}, "spec": {"template": {"spec": {
        "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
        "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}}}}

    def ds(name, *, tolerations=(), selector=None, cpu="100m"):
        spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], "tolerations": list(tolerations)}
        if selector:
            spec["nodeSelector"] = selector
        return {"metadata": {"name": name}, "spec": {"template": {"spec": spec}}}

    everywhere = ds("node-exporter", tolerations=[{"operator": "Exists"}])
    gpu_plugin = ds("nvidia-device-plugin", tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}], cpu="50m")
    untolerating = ds("log-agent")
    arm_only = ds("arm-agent", tolerations=[{"operator": "Exists"}], selector={"kubernetes.io/arch": "arm64"})
    custom = ds("needs-label", tolerations=[{"operator": "Exists"}], selector={"example.com/storage": "true"})
    total, names = res.daemonset_overhead([everywhere, gpu_plugin, untolerating, arm_only, custom], nodepool, auto_mode=False)
    assert names == ["node-exporter", "nvidia-device-plugin"]
    assert total["cpu"] == pytest.approx(0.15) and total["pods"] == 2


def test_fit_names_what_does_not_fit():
    info = p4d()
    fit = res.fit({"cpu": 90, "memory": 1100 * 2**30, "nvidia.com/gpu": 8}, {}, {"p4d.24xlarge": info})
    assert not fit.fitting and fit.missing["p4d.24xlarge"] == ["memory"]
    fit = res.fit({"cpu": 90, "memory": 1000 * 2**30, "nvidia.com/gpu": 8}, {"cpu": 6}, {"p4d.24xlarge": info})
    assert fit.missing["p4d.24xlarge"] == ["cpu"]
    assert res.fit({"cpu": 90, "nvidia.com/gpu": 8}, {}, {"p4d.24xlarge": info}).fitting


def test_accelerators_by_manufacturer():
    gaudi = InstanceTypeInfo(name="dl1.24xlarge", vcpus=96, memory_mib=786432, architectures=("x86_64",), gpu_count=8,
                             gpu_name="Gaudi HL-205", gpu_manufacturer="Habana", gpu_memory_mib=32768,
                             efa_supported=True, max_efa_interfaces=4)
    got = res.allocatable(gaudi)
    assert got["habana.ai/gaudi"] == 8 and "nvidia.com/gpu" not in got
    assert res.capacity(gaudi)["habana.ai/gaudi"] == 8 and res.capacity(gaudi)["nodes"] == 1
