"""A sweep's list requests grow with the GPU part of the cluster, not with its other pods: counted by
the simulated API server (/sim/requests) before and after adding thousands of CPU pods, nodes and
events, then after adding GPU nodes."""
from __future__ import annotations

import pytest

from bot.alerts.sweep import sweep
from bot.service import DiagnosisService
from bot.settings import load_settings
from sim.serve import start_sim
from tests.conftest import REPO, SIM_ENV

CPU_PODS = 20000
CPU_NODES = 300


def _cpu_objects() -> list[dict]:
    objects: list[dict] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web"}}]
    for i in range(CPU_NODES):
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": f"cpu-{i:04d}", "labels": {"node.kubernetes.io/instance-type": "m7i.4xlarge",
                                              "karpenter.sh/nodepool": "general"}},
            "status": {"capacity": {"cpu": "16"}, "allocatable": {"cpu": "16"},
                       "conditions": [{"type": "Ready", "status": "True"}]}})
    for i in range(CPU_PODS):
        name = f"web-{i:05d}"
        objects.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "web",
                                                                          "labels": {"job-name": f"batch-{i // 10}"}},
                        "spec": {"nodeName": f"cpu-{i % CPU_NODES:04d}",
                                 "containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}}}]},
                        "status": {"phase": "Running"}})
        if i % 4 == 0:
            objects.append({"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{name}.1", "namespace": "web"},
                            "involvedObject": {"kind": "Pod", "name": name, "namespace": "web"},
                            "reason": "Started", "message": "Started container app", "type": "Normal"})
    return objects


def _gpu_nodes(count: int) -> list[dict]:
    return [{"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": f"gpu-{i:04d}", "labels": {"node.kubernetes.io/instance-type": "g6.xlarge", "nvidia.com/gpu.present": "true",
                                          "karpenter.sh/nodepool": "g6e-batch"}},
        "status": {"capacity": {"nvidia.com/gpu": "1"}, "allocatable": {"nvidia.com/gpu": "1"},
                   "conditions": [{"type": "Ready", "status": "True"}]}} for i in range(count)]


@pytest.mark.slow
def test_sweep_requests_do_not_grow_with_non_gpu_pods(monkeypatch):
    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    with start_sim(scenarios=["sweep-sick-gpu-fleet"], directory=REPO / "sim" / "scenarios" / "sweep") as sim:
        settings = load_settings({"KUBECONFIG": str(sim.kubeconfig), **SIM_ENV})
        service = DiagnosisService(settings)
        try:
            def count() -> tuple[int, int, int]:
                sim.reset_requests()
                result = sweep(service, settings)
                return sim.request_count(), result.requests, len(result.problems)

            count()  # the gateway's API discovery (cached for minutes) is not a sweep's cost
            small = count()
            sim.cluster.add_all(_cpu_objects())
            with_cpu = count()
            sim.cluster.add_all(_gpu_nodes(settings.page_size + 10))
            with_gpu = count()
        finally:
            service.close()
    print(f"\nAPI requests per sweep (all / the sweep's own lists): small {small[:2]}, "
          f"+{CPU_PODS} CPU pods and {CPU_NODES} CPU nodes {with_cpu[:2]}, +{settings.page_size + 10} GPU nodes {with_gpu[:2]}")
    assert with_cpu == small  # same requests, same problems
    # the GPU part costs: one more page of GPU nodes
    assert with_gpu[1] == small[1] + 1 and with_gpu[0] == small[0] + 1
    assert small[1] < 15
