"""Nodes and NodePools as targets, through the CLI against the simulated cluster."""
from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("target,code", [
    ("node/ip-10-0-5-89.ap-northeast-2.compute.internal", "gpu.unhealthy_device"),
    ("nodepool/gpu-training", "karpenter.disruption"),
    ("nodepool/gpu-training-32", "karpenter.nodepool_limit_reached"),
])
def test_node_and_nodepool_targets(target, code, sim_env, cli):
    result = cli("diagnose", target, "--json")
    assert result.code == 0, result.err
    diagnosis = json.loads(result.out)
    assert diagnosis["findings"][0]["code"] == code
    assert diagnosis["target"]["namespace"] is None


def test_nodepool_consolidation_is_offered_as_a_remediation(sim_env, cli):
    diagnosis = json.loads(cli("diagnose", "nodepool/gpu-training", "--json").out)
    remediations = diagnosis["findings"][0]["remediations"]
    assert remediations == [{"kind": "nodepool-consolidation", "target": "nodepool/gpu-training",
                             "params": {"nodepool": "gpu-training", "consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m"}}]


def test_a_joining_node_is_only_info(sim_env, cli):
    diagnosis = json.loads(cli("diagnose", "node/ip-10-0-3-201.ap-northeast-2.compute.internal", "--json").out)
    assert [f["severity"] for f in diagnosis["findings"] if f["code"] == "node.not_ready"] == ["info"]
