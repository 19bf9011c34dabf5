"""One pending pod against its NodePools where the model follows upstream past the obvious: minValues
under the controller's --min-values-policy, zone ids from the EC2NodeClass subnets, the NodeClass label
Karpenter sets on every node, and node-role labels in a NodePool template from v1.9."""
from __future__ import annotations

from playbooks.facts import Ec2Facts
from tests.playbooks.test_pending import G5, _facts, _nodepool, _pod, _run

FAMILY_MIN_2 = [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5", "g6"], "minValues": 2}]
NODECLASS = {"karpenter.k8s.aws/default": {"status": {"subnets": [
    {"id": "subnet-1", "zone": "us-west-2a", "zoneID": "usw2-az1"},
    {"id": "subnet-2", "zone": "us-west-2b", "zoneID": "usw2-az2"}]}}}


def test_min_values_blocks_under_strict_and_relaxes_under_best_effort():
    strict = _facts(_pod(), _nodepool(requirements=FAMILY_MIN_2), types=G5)
    strict.karpenter.version = "1.10.0"
    found = _run(strict)
    assert [f.code for f in found] == ["karpenter.no_instance_type"]
    assert "MIN_VALUES_POLICY" in found[0].detail and "spec.template.spec minValuesPolicy" not in found[0].detail
    relaxed = _facts(_pod(), _nodepool(requirements=FAMILY_MIN_2), types=G5)
    relaxed.karpenter.version, relaxed.karpenter.min_values_policy = "1.10.0", "BestEffort"
    assert not [f for f in _run(relaxed) if f.severity in ("error", "warning")]


def test_min_values_on_zones_counts_offerings_not_instance_labels():
    zones = [{"key": "topology.kubernetes.io/zone", "operator": "Exists", "minValues": 2}]
    ec2 = Ec2Facts(offerings={t: {"us-west-2a": frozenset({"on-demand"}), "us-west-2b": frozenset({"on-demand"})}
                              for t in G5})
    assert not _run(_facts(_pod(), _nodepool(requirements=zones), types=G5, ec2=ec2))  # two zones: met
    zones[0]["minValues"] = 3
    found = _run(_facts(_pod(), _nodepool(requirements=zones), types=G5,
                        ec2=Ec2Facts(offerings=dict(ec2.offerings))))
    assert [f.code for f in found] == ["karpenter.no_instance_type"]
    assert "topology.kubernetes.io/zone needs 3 distinct values, the remaining types give 2" in found[0].detail


def test_zone_id_no_subnet_has_is_a_requirement_no_instance_type_meets():
    pod = _pod(selector={"topology.k8s.aws/zone-id": "usw2-az4"})
    found = _run(_facts(pod, _nodepool(), types=G5, nodeclasses=NODECLASS))
    assert [f.code for f in found] == ["scheduling.node_selector_mismatch"]
    assert "us-west-2a=usw2-az1, us-west-2b=usw2-az2" in found[0].detail
    assert not _run(_facts(_pod(selector={"topology.k8s.aws/zone-id": "usw2-az2"}), _nodepool(), types=G5,
                           nodeclasses=NODECLASS))


def test_selecting_the_ec2nodeclass_label_is_legal_from_v1_1():
    pod = _pod(selector={"karpenter.k8s.aws/ec2nodeclass": "default"})
    assert not _run(_facts(pod, _nodepool(), types=G5))
    old = _facts(pod, _nodepool(), types=G5)
    old.karpenter.version = "1.0.6"
    found = _run(old)
    assert [f.code for f in found] == ["scheduling.node_selector_mismatch"] and "from v1.1" in found[0].detail
    other = _run(_facts(_pod(selector={"karpenter.k8s.aws/ec2nodeclass": "bottlerocket"}), _nodepool(), types=G5))
    assert [f.code for f in other] == ["scheduling.node_selector_mismatch"]
    assert "does not have known values" not in other[0].detail


def test_node_role_template_label_is_selectable():
    pod = _pod(selector={"node-role.kubernetes.io/gpu": ""})
    assert not _run(_facts(pod, _nodepool(labels={"node-role.kubernetes.io/gpu": ""}), types=G5))
    found = _run(_facts(pod, _nodepool(), types=G5))
    assert [f.code for f in found] == ["scheduling.node_selector_mismatch"]
    assert "reserves" not in found[0].detail and "spec.template.metadata.labels" in found[0].detail
