"""GPU NodePool detector: at or above 90 % of any limit, NodeRegistrationHealthy / Ready false."""
from __future__ import annotations

from playbooks.sweep.nodepools import nodepool_problems

from tests.playbooks.sweep_objects import nodepool


def problems(*pools):
    return nodepool_problems(list(pools), cluster="prod-use1")


def test_below_ninety_percent_and_cpu_pools_give_nothing():
    assert problems(nodepool("h100", limits={"nvidia.com/gpu": "64"}, used={"nvidia.com/gpu": "56"}),
                    nodepool("cpu", limits={"cpu": "100"}, used={"cpu": "100"}, instance_types=("m7i.8xlarge",))) == []


def test_near_a_gpu_limit_is_a_warning():
    [p] = problems(nodepool("h100", limits={"nvidia.com/gpu": "64"}, used={"nvidia.com/gpu": "58"}))
    assert p.code == "karpenter.nodepool_limit_reached" and p.severity == "warning"
    assert p.target.kind == "nodepool" and p.nodepool == "h100" and p.group == "nodepool/h100"
    assert "nvidia.com/gpu 58/64 (91%)" in p.title


def test_cpu_or_memory_limit_of_a_gpu_pool_counts_too():
    # kubernetes-sigs/karpenter: any resource in spec.limits blocks launches, not only GPUs
    [p] = problems(nodepool("g6e-vllm", limits={"cpu": "1000", "memory": "4000Gi", "nvidia.com/gpu": "80"},
                            used={"cpu": "1008", "memory": "1800Gi", "nvidia.com/gpu": "40"},
                            instance_types=("g6e.48xlarge",)))
    assert p.severity == "error" and "cpu 1008/1000" in p.title and "memory" not in p.title


def test_zero_limit_is_a_pool_switched_off_not_a_problem():
    assert problems(nodepool("p4d-off", limits={"nvidia.com/gpu": "0"}, used={})) == []


def test_registration_unhealthy_and_not_ready():
    cond = [{"type": "NodeRegistrationHealthy", "status": "False", "reason": "RegistrationFailed",
             "message": "Failed to register node"}, {"type": "Ready", "status": "False", "reason": "NodeClassNotReady",
                                                       "message": "NodeClass not ready"}]
    [p] = problems(nodepool("g6-train", conditions=cond, instance_types=("g6.48xlarge",)))
    assert p.code == "karpenter.node_registration_failed" and p.severity == "error"
    assert {e.source for e in p.evidence} == {"nodepool/g6-train status.conditions[NodeRegistrationHealthy]",
                                              "nodepool/g6-train status.conditions[Ready]"}
