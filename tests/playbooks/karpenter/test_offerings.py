"""Offerings: capacity type and zone from the pod, the NodePool and the EC2NodeClass's subnets; the
NodeClass Ready condition. Missing data never removes an instance type."""
from __future__ import annotations

from bot.gateway.ec2 import InstanceTypeInfo
from playbooks.facts import Ec2Facts
from playbooks.karpenter import offerings as off
from playbooks.karpenter.requirements import Requirement, Requirements

P5 = InstanceTypeInfo(name="p5.48xlarge", vcpus=192, memory_mib=2097152, architectures=("x86_64",), gpu_count=8,
                      gpu_name="H100", gpu_manufacturer="NVIDIA", gpu_memory_mib=81920, efa_supported=True,
                      max_efa_interfaces=32)
TYPES = {"p5.48xlarge": P5}


def test_spot_only_without_spot_offering_in_the_allowed_zones():
    ec2 = Ec2Facts(offerings={"p5.48xlarge": {"us-east-1a": frozenset({"on-demand"}),
                                              "us-east-1b": frozenset({"on-demand", "spot"})}})
    got = off.check(Requirements.of([Requirement.of("karpenter.sh/capacity-type", "In", ["spot"]),
                                     Requirement.of("topology.kubernetes.io/zone", "In", ["us-east-1a"])]),
                    TYPES, ec2=ec2, nodeclass=None)
    assert not got.offered and got.capacity_types == {"spot"} and got.zones == {"us-east-1a"}
    got = off.check(Requirements.of([Requirement.of("karpenter.sh/capacity-type", "In", ["spot"])]), TYPES, ec2=ec2,
                    nodeclass=None)
    assert got.offered  # spot in us-east-1b


def test_subnet_zones_narrow_the_allowed_zones():
    nodeclass = {"status": {"subnets": [{"id": "subnet-1", "zone": "us-east-1a"}]}}
    ec2 = Ec2Facts(zones={"p5.48xlarge": frozenset({"us-east-1b"})})
    got = off.check(Requirements(), TYPES, ec2=ec2, nodeclass=nodeclass)
    assert not got.offered and got.zones == {"us-east-1a"} and not got.capacity_checked


def test_missing_offering_data_never_removes_a_type():
    got = off.check(Requirements.of([Requirement.of("topology.kubernetes.io/zone", "In", ["us-east-1a"])]), TYPES,
                    ec2=Ec2Facts(), nodeclass=None)
    assert got.offered == TYPES


def test_reserved_offerings_come_from_the_nodeclass_capacity_reservations():
    nodeclass = {"status": {"capacityReservations": [
        {"id": "cr-1", "instanceType": "p5.48xlarge", "availabilityZone": "us-east-1b", "state": "active"}]}}
    # EC2 says the account holds a reservation with instances left in us-east-1b
    ec2 = Ec2Facts(offerings={"p5.48xlarge": {"us-east-1b": frozenset({"on-demand", "reserved"})}})
    wanted = Requirements.of([Requirement.of("karpenter.sh/capacity-type", "In", ["reserved"])])
    assert off.check(wanted, TYPES, ec2=ec2, nodeclass=nodeclass).offered
    # a NodeClass that selects no reservation has no reserved offering, whatever the account holds
    assert not off.check(wanted, TYPES, ec2=ec2, nodeclass={"status": {}}).offered


def test_nodeclass_not_ready_names_the_failing_condition():
    nodeclass = {"status": {"conditions": [
        {"type": "SubnetsReady", "status": "False", "reason": "SubnetsNotFound", "message": "SubnetSelector did not match any Subnets"},
        {"type": "Ready", "status": "False", "reason": "UnhealthyDependents", "message": "SubnetsReady=False"}]}}
    got = off.not_ready(nodeclass)
    assert (got.condition, got.message) == ("SubnetsReady", "SubnetSelector did not match any Subnets")
    assert off.not_ready({"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}}) is None
    assert off.not_ready(None) is None


def test_reserved_is_in_play_only_where_asked_for_or_reservations_are_selected():
    from playbooks.facts import Facts
    from playbooks.gather_ec2 import _capacity_types_in_play
    from playbooks.model import Target

    def nodepool(name, requirements=(), nodeclass="default"):
        return {"metadata": {"name": name}, "spec": {"template": {"spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": nodeclass},
            "requirements": list(requirements)}}}}

    facts = Facts(target=Target(kind="pod", name="p", namespace="ml"), cluster="test")
    facts.nodepools = {"any": nodepool("any"),
                       "od": nodepool("od", [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]),
                       "cb": nodepool("cb", nodeclass="blocks")}
    facts.nodeclasses = {"karpenter.k8s.aws/blocks": {"spec": {"capacityReservationSelectorTerms": [{"id": "cr-1"}]}}}
    assert _capacity_types_in_play(facts, ["any"]) == {"on-demand", "spot"}
    assert _capacity_types_in_play(facts, ["od"]) == {"on-demand"}
    assert _capacity_types_in_play(facts, ["cb"]) == {"on-demand", "spot", "reserved"}


NODECLASS_IDS = {"status": {"subnets": [{"id": "subnet-1", "zone": "us-east-1a", "zoneID": "use1-az4"},
                                        {"id": "subnet-2", "zone": "us-east-1b", "zoneID": "use1-az6"},
                                        {"id": "subnet-3", "zone": "us-east-1c", "zoneID": "use1-az1"}]}}


def test_zone_ids_are_those_of_subnets_where_the_type_is_offered():
    # aws/karpenter-provider-aws pkg/providers/instancetype/types.go computeRequirements
    ec2 = Ec2Facts(zones={"p5.48xlarge": frozenset({"us-east-1a", "us-east-1c", "us-east-1d"})})
    assert off.type_zone_ids("p5.48xlarge", ec2=ec2, nodeclass=NODECLASS_IDS) == {"use1-az4", "use1-az1"}
    # EC2 said nothing about the type: every subnet's zone id stays possible
    assert off.type_zone_ids("p5.48xlarge", ec2=Ec2Facts(), nodeclass=NODECLASS_IDS) == {"use1-az4", "use1-az6", "use1-az1"}
    # subnets without zoneID: upstream sets no zone-id requirement
    assert off.type_zone_ids("p5.48xlarge", ec2=ec2, nodeclass={"status": {"subnets": [{"zone": "us-east-1a"}]}}) is None


def test_offering_values_give_zone_capacity_type_and_zone_id_per_type():
    ec2 = Ec2Facts(offerings={"p5.48xlarge": {"us-east-1a": frozenset({"on-demand"}), "us-east-1b": frozenset({"spot"}),
                                              "us-east-1d": frozenset({"spot"})}})
    got = off.offering_values(TYPES, ec2=ec2, nodeclass=NODECLASS_IDS)["p5.48xlarge"]
    assert got == {"topology.kubernetes.io/zone": {"us-east-1a", "us-east-1b"},
                   "karpenter.sh/capacity-type": {"on-demand", "spot"},
                   "topology.k8s.aws/zone-id": {"use1-az4", "use1-az6"}}
    # zones known without capacity types: the capacity type is left out, not guessed
    only_zones = off.offering_values(TYPES, ec2=Ec2Facts(zones={"p5.48xlarge": frozenset({"us-east-1a"})}), nodeclass=None)
    assert only_zones == {"p5.48xlarge": {"topology.kubernetes.io/zone": {"us-east-1a"}}}
    assert off.offering_values(TYPES, ec2=Ec2Facts(), nodeclass=None) == {}
