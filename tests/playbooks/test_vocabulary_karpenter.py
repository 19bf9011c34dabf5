"""The karpenter and ec2 vocabulary tables: reproduced byte for byte from their snapshots, every pattern
matching its own sample, well-known entries found, and every finding code one of docs/findings.md."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from playbooks import linear, vocabulary

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "playbooks" / "vocabulary" / "data"
TABLES = ("karpenter", "ec2")


def _table(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


@pytest.mark.parametrize("name", TABLES)
def test_table_reproduces_from_snapshot(name, tmp_path):
    date = _table(name)["generated"]
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_cluster_tables.py"), "--only", name,
                    "--out", str(tmp_path), "--date", date], check=True, capture_output=True)
    assert (tmp_path / f"{name}.json").read_bytes() == (DATA / f"{name}.json").read_bytes()


@pytest.mark.parametrize("name", TABLES)
def test_every_sample_matches_its_pattern(name):
    for e in _table(name)["entries"]:
        assert linear.compile(e["pattern"]).search(e["sample"]), (e["reason"], e["message"])
        assert e["where"], e["message"]


@pytest.mark.parametrize("name", TABLES)
def test_codes_are_finding_codes(name):
    documented = set(re.findall(r"^\| `([a-z_]+\.[a-z_]+)` \|", (ROOT / "docs" / "findings.md").read_text(), re.M))
    for e in _table(name)["entries"]:
        assert e["code"] is None or e["code"] in documented, e["code"]
        assert e["level"] != "normal" or e["owner"] == "benign", e["message"]


def test_ec2_codes():
    ice = vocabulary.code_entry("InsufficientInstanceCapacity")
    assert ice.table == "ec2" and ice.code == "karpenter.insufficient_capacity" and ice.owner == "capacity"
    unauthorized = vocabulary.code_entry("UnauthorizedOperation", component="karpenter")
    assert unauthorized.component == "ec2" and unauthorized.owner == "platform" and unauthorized.level == "error"
    assert vocabulary.code_entry("VcpuLimitExceeded").code == "karpenter.quota_exceeded"
    assert vocabulary.code_entry("MaxSpotInstanceCountExceeded").code == "karpenter.quota_exceeded"
    assert vocabulary.code_entry("InsufficientFreeAddressesInSubnet").code == "karpenter.subnet_problem"
    assert vocabulary.code_entry("ReservationCapacityExceeded").code == "karpenter.insufficient_capacity"
    assert vocabulary.code_entry("RequestLimitExceeded").owner == "transient"
    assert vocabulary.code_entry("NoSuchCodeAnywhere") is None


def test_karpenter_events_by_reason():
    failed = vocabulary.by_reason("FailedScheduling", "Failed to schedule pod, no instance type has enough "
                                  "resources", component="karpenter")
    assert failed.table == "karpenter" and failed.level == "error"
    nominated = vocabulary.by_reason("Nominated", "Pod should schedule on: nodeclaim/gpu-abc12", component="karpenter")
    assert nominated.level == "normal" and nominated.code == "karpenter.provisioning"
    ice = vocabulary.by_reason("InsufficientCapacityError", "NodeClaim gpu-x event: creating instance, "
                               "insufficient capacity, with fleet error(s)", component="karpenter")
    assert ice.code == "karpenter.insufficient_capacity"
    blocked = vocabulary.by_reason("DisruptionBlocked", "No allowed disruptions due to blocking budget",
                                   component="karpenter")
    assert blocked.level == "normal" and blocked.message == "No allowed disruptions due to blocking budget"
    spot = vocabulary.by_reason("SpotInterrupted", "Spot interruption warning was triggered", component="karpenter")
    assert spot.code == "karpenter.interruption"
    assert vocabulary.by_reason("Unconsolidatable", "Can't replace with a cheaper node").level == "normal"
    assert vocabulary.by_reason("NodeRepairBlocked", "more than 20% nodes are unhealthy in the nodepool").level == "warning"


def test_karpenter_conditions_by_reason():
    gpu = vocabulary.by_reason("ResourceNotRegistered", 'Resource "nvidia.com/gpu" was requested but not registered',
                               component="karpenter")
    assert gpu.kind == "condition" and gpu.code == "karpenter.resource_not_registered"
    assert vocabulary.by_reason("NodeNotFound", "Node not registered with cluster",
                                component="karpenter").code == "karpenter.node_registration_failed"
    assert vocabulary.by_reason("VCPULimitExceeded", component="karpenter").code == "karpenter.quota_exceeded"
    assert vocabulary.by_reason("SubnetsNotFound", component="karpenter").code == "karpenter.nodeclass_not_ready"
    assert vocabulary.by_reason("AcceleratedHardwareReady", component="karpenter").owner == "hardware"


def test_karpenter_messages():
    limits = vocabulary.by_message('all available instance types exceed limits for nodepool "gpu"', component="karpenter")
    assert limits.code == "karpenter.nodepool_limit_reached"
    subnets = vocabulary.by_message("no subnets matched selector [{tags: map[karpenter.sh/discovery:c]}]",
                                    component="karpenter")
    assert subnets.code == "karpenter.subnet_problem"
    taint = vocabulary.by_message("did not tolerate taint (taint=nvidia.com/gpu:NoSchedule)", component="karpenter")
    assert taint.code == "scheduling.untolerated_taint"
    assert vocabulary.by_message("launched nodeclaim", component="karpenter").level == "normal"
    interrupted = vocabulary.by_message("initiating delete from interruption message", component="karpenter")
    assert interrupted.code == "karpenter.interruption"
