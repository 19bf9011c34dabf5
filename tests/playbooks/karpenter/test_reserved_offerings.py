"""Reserved offerings as aws/karpenter-provider-aws v1.14.1 builds them (pkg/providers/instancetype/offering/
reserved_capacity_resolver.go: available only for a selected reservation with instances left and not expiring)
and as kubernetes-sigs/karpenter v1.14.0 schedules them (scheduler.go addToNewNodeClaim: no fallback to a
lower-weight NodePool from one with reserved offerings available)."""
from __future__ import annotations

import datetime as dt

from playbooks.analyzers import pending
from playbooks.facts import Ec2Facts
from playbooks.karpenter import offerings as off
from playbooks.karpenter.requirements import Requirement, Requirements
from tests.playbooks.karpenter.topology_builders import P4D, facts, nodepool, pod

RESERVED = Requirements.of([Requirement.of("karpenter.sh/capacity-type", "In", ["reserved"])])
TYPES = {"p4d.24xlarge": P4D}
NOW = dt.datetime(2026, 8, 1, 12, 0, tzinfo=dt.timezone.utc)


def _nodeclass(**reservation) -> dict:
    cr = {"id": "cr-0123456789abcdef0", "instanceType": "p4d.24xlarge", "availabilityZone": "us-east-1a",
          "instanceMatchCriteria": "targeted", "ownerID": "012345678901", "reservationType": "default",
          "state": "active", **reservation}
    return {"metadata": {"name": "default"}, "spec": {"capacityReservationSelectorTerms": [{"id": cr["id"]}]},
            "status": {"capacityReservations": [cr]}}


def _ec2(*, instances_left: bool) -> Ec2Facts:
    # EC2 states "reserved" where an active reservation has AvailableInstanceCount > 0
    cts = {"on-demand", "reserved"} if instances_left else {"on-demand"}
    return Ec2Facts(offerings={"p4d.24xlarge": {"us-east-1a": frozenset(cts), "us-east-1b": frozenset({"on-demand"})}})


def test_a_reservation_with_no_instances_left_offers_nothing():
    # reservationCapacity != 0 is part of Available; before, any reservation in the NodeClass status counted
    nodeclass = _nodeclass()
    assert off.check(RESERVED, TYPES, ec2=_ec2(instances_left=True), nodeclass=nodeclass).offered
    assert not off.check(RESERVED, TYPES, ec2=_ec2(instances_left=False), nodeclass=nodeclass).offered


def test_reservations_the_nodeclass_does_not_select_offer_nothing():
    # one offering per nodeClass.CapacityReservations() entry: the account's other reservations do not count
    other_zone = _nodeclass(availabilityZone="us-east-1b")
    assert not off.check(RESERVED, TYPES, ec2=_ec2(instances_left=True), nodeclass=other_zone).offered


def test_an_expiring_capacity_block_offers_nothing():
    block = {"reservationType": "capacity-block"}
    assert off.reserved_offerings(_nodeclass(**block, state="expiring"), now=NOW) == {}
    # ec2nodeclass_status.go: expiring from 40 minutes before endTime, even if the status still says active
    soon = (NOW + dt.timedelta(minutes=39)).isoformat().replace("+00:00", "Z")
    later = (NOW + dt.timedelta(minutes=41)).isoformat().replace("+00:00", "Z")
    assert off.reserved_offerings(_nodeclass(**block, endTime=soon), now=NOW) == {}
    assert off.reserved_offerings(_nodeclass(**block, endTime=later), now=NOW) == {"p4d.24xlarge": {"us-east-1a"}}
    # an ODCR (reservationType default) never expires this way
    assert off.reserved_offerings(_nodeclass(endTime=soon), now=NOW) == {"p4d.24xlarge": {"us-east-1a"}}


def _two_nodepools(*, instances_left: bool):
    reserved = nodepool("reserved", requirements=[
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p4d.24xlarge"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["reserved", "on-demand"]}])
    reserved["spec"]["weight"] = 50
    reserved["spec"]["template"]["spec"]["nodeClassRef"]["name"] = "reserved"
    fallback = nodepool("on-demand", requirements=[
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p4d.24xlarge"]}])
    fallback["spec"]["weight"] = 10
    trainer = pod("trainer-0", gpus=8, nodeSelector={})
    f = facts([trainer], nodepools=[fallback, reserved], types=[P4D])
    f.ec2.offerings = dict(_ec2(instances_left=instances_left).offerings)
    f.nodeclasses = {"karpenter.k8s.aws/reserved": _nodeclass(), "karpenter.k8s.aws/default": {"metadata": {}}}
    return trainer, f


def test_a_nodepool_with_reserved_offerings_stops_the_fallback_to_lower_weights():
    trainer, f = _two_nodepools(instances_left=True)
    assert list(pending.analyze(f)) == []
    # before: both NodePools were taken to serve the pod; Karpenter never falls back from the reserved one
    assert f.cache["pending_ok_nodepools"][trainer.name] == ["reserved"]
    assert f.cache["closest_nodepools"] and list(f.cache["closest_nodepools"].values())[0] == ["reserved"]


def test_without_reserved_instances_left_the_lower_weight_nodepool_serves_too():
    trainer, f = _two_nodepools(instances_left=False)
    assert list(pending.analyze(f)) == []
    assert f.cache["pending_ok_nodepools"][trainer.name] == ["reserved", "on-demand"]


def test_nodepools_are_tried_by_weight_then_name_in_reverse():
    f = facts([], nodepools=[nodepool("a"), nodepool("b"), nodepool("c")])
    f.nodepools["a"]["spec"]["weight"] = 10
    assert pending.by_weight(["a", "b", "c"], f) == ["a", "c", "b"]
