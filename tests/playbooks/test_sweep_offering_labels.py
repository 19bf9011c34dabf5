"""A failed launch's offering as structured fields (Problem.labels): instance type and zone from EC2's
message, capacity type from the NodeClaim's single-valued requirement; none when the NodeClaims of one
NodePool failed on different offerings, or when a part is unknown (prose is never parsed later)."""
from __future__ import annotations

from playbooks.sweep.nodeclaims import nodeclaim_problems

from tests.playbooks.sweep_objects import NOW, nodeclaim


def ice(zone: str) -> str:
    return ("creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently "
            f"do not have sufficient p5e.48xlarge capacity in the Availability Zone you requested ({zone}).")


def claim(name: str, zone: str, *, capacity: list[str] | None = ("spot",)) -> dict:
    found = nodeclaim(name, pool="p5e", conditions=[
        {"type": "Launched", "status": "False", "reason": "LaunchFailed", "message": ice(zone)}])
    if capacity is not None:
        found["spec"] = {"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(capacity)}]}
    return found


def labels(*claims) -> dict[str, str]:
    [problem] = nodeclaim_problems(list(claims), cluster="prod", now=NOW)
    assert problem.code == "karpenter.insufficient_capacity"
    return problem.labels


def test_one_offering_is_named_in_fields():
    assert labels(claim("p5e-0", "us-west-2b"), claim("p5e-1", "us-west-2b")) == {
        "instance_type": "p5e.48xlarge", "zone": "us-west-2b", "capacity_type": "spot"}


def test_two_offerings_or_an_unknown_capacity_type_name_none():
    assert labels(claim("p5e-0", "us-west-2b"), claim("p5e-1", "us-west-2c")) == {}
    assert labels(claim("p5e-0", "us-west-2b", capacity=["spot", "on-demand"])) == {}
    assert labels(claim("p5e-0", "us-west-2b", capacity=None)) == {}
