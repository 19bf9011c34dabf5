"""Requirement semantics against upstream: kubernetes-sigs/karpenter pkg/scheduling/requirement.go and
requirements.go (cases mirror requirement_test.go / requirements_test.go)."""
from __future__ import annotations

import pytest

from playbooks.karpenter import labels as lbl
from playbooks.karpenter.requirements import (
    Requirement, Requirements, instance_requirements, min_values_unmet, nodepool_requirements, pod_terms,
)
from tests.playbooks.karpenter.topology_builders import G5_12XL, G5_48XL

R = Requirement.of
ANY = frozenset()
ZONE = "topology.kubernetes.io/zone"
CT = "karpenter.sh/capacity-type"


def reqs(*items: Requirement) -> Requirements:
    return Requirements.of(items)


@pytest.mark.parametrize("a, b, meet", [
    (R("k", "In", ["a", "b"]), R("k", "In", ["b", "c"]), True),
    (R("k", "In", ["a"]), R("k", "In", ["b"]), False),
    (R("k", "In", ["a"]), R("k", "NotIn", ["a"]), False),
    (R("k", "In", ["a", "b"]), R("k", "NotIn", ["a"]), True),
    (R("k", "NotIn", ["a"]), R("k", "NotIn", ["b"]), True),
    (R("k", "Exists"), R("k", "In", ["a"]), True),
    (R("k", "Exists"), R("k", "Exists"), True),
    (R("k", "DoesNotExist"), R("k", "In", ["a"]), False),
    (R("k", "DoesNotExist"), R("k", "Exists"), False),
    # open-ended bounds: two complements always meet unless the bounds cross
    (R("k", "Gt", ["0"]), R("k", "Gt", ["0"]), True),
    (R("k", "Gt", ["5"]), R("k", "Lt", ["3"]), False),
    (R("k", "Gt", ["5"]), R("k", "Lt", ["6"]), False),  # Gt 5 is >= 6, Lt 6 is <= 5
    (R("k", "Gt", ["5"]), R("k", "Lt", ["7"]), True),
    (R("k", "Gte", ["5"]), R("k", "Lte", ["5"]), True),
    (R("k", "Gte", ["6"]), R("k", "Lte", ["5"]), False),
    (R("k", "Gt", ["4"]), R("k", "In", ["8"]), True),
    (R("k", "Gt", ["8"]), R("k", "In", ["8"]), False),
    (R("k", "Lt", ["8"]), R("k", "In", ["a100"]), False),  # bounds reject non-integers
    (R("k", "Gt", ["0"]), R("k", "DoesNotExist"), False),
])
def test_has_intersection(a, b, meet):
    assert a.has_intersection(b) is meet
    assert b.has_intersection(a) is meet


def test_intersection_keeps_upstream_representation():
    both = R("k", "Gt", ["2"]).intersection(R("k", "Lt", ["10"]))
    assert (both.complement, both.gte, both.lte, both.operator) == (True, 3, 9, "Exists")
    crossed = R("k", "Gt", ["5"]).intersection(R("k", "Lt", ["3"]))
    assert crossed.operator == "DoesNotExist"
    concrete = R("k", "In", ["2", "4", "x"]).intersection(R("k", "Gt", ["3"]))
    assert concrete.values == {"4"} and concrete.gte is None  # bounds dropped for concrete sets
    assert R("k", "NotIn", ["a"]).intersection(R("k", "NotIn", ["b"])).values == {"a", "b"}


def test_has_treats_a_missing_label_as_kubernetes_does():
    assert R("k", "NotIn", ["a"]).has(None) and R("k", "DoesNotExist").has(None)
    assert not R("k", "In", ["a"]).has(None) and not R("k", "Exists").has(None) and not R("k", "Gt", ["1"]).has(None)


def test_compatible_allows_negative_requirements_on_undefined_labels():
    nodepool = reqs(R("team", "In", ["ml"]))
    well_known = lbl.well_known(auto_mode=False)
    assert nodepool.compatible(reqs(R("example.com/spot-only", "NotIn", ["true"])), allow_undefined=well_known) is None
    assert nodepool.compatible(reqs(R("example.com/gpu-debug", "DoesNotExist")), allow_undefined=well_known) is None
    bad = nodepool.compatible(reqs(R("example.com/accelerator", "In", ["a100"])), allow_undefined=well_known)
    assert bad and bad.undefined and bad.message == 'label "example.com/accelerator" does not have known values'
    assert nodepool.compatible(reqs(R("example.com/x", "Exists")), allow_undefined=well_known).undefined


def test_compatible_allows_undefined_well_known_labels_but_intersects_defined_ones():
    nodepool = reqs(R(lbl.CAPACITY_TYPE, "In", ["on-demand"]))
    well_known = lbl.well_known(auto_mode=False)
    assert nodepool.compatible(reqs(R(lbl.ZONE_ID, "In", ["use1-az1"])), allow_undefined=well_known) is None
    assert nodepool.compatible(reqs(R("karpenter.k8s.aws/instance-gpu-count", "Gt", ["0"])),
                               allow_undefined=well_known) is None
    bad = nodepool.compatible(reqs(R(lbl.CAPACITY_TYPE, "In", ["spot"])), allow_undefined=well_known)
    assert bad and not bad.undefined and bad.key == lbl.CAPACITY_TYPE


def test_two_negative_requirements_never_conflict():
    # requirements.go Intersects: NotIn / DoesNotExist on both sides is allowed even without a shared value
    assert reqs(R("k", "DoesNotExist")).intersects(reqs(R("k", "DoesNotExist"))) is None
    assert reqs(R("k", "NotIn", ["a"])).intersects(reqs(R("k", "DoesNotExist"))) is None
    assert reqs(R("k", "In", ["a"])).intersects(reqs(R("k", "DoesNotExist"))) is not None


def test_beta_aliases_are_normalised():
    assert R("beta.kubernetes.io/arch", "In", ["amd64"]).key == "kubernetes.io/arch"
    assert R("failure-domain.beta.kubernetes.io/zone", "In", ["a"]).key == lbl.ZONE
    assert R("beta.kubernetes.io/instance-type", "In", ["p5.48xlarge"]).key == lbl.INSTANCE_TYPE


def test_pod_terms_one_per_node_selector_term_with_the_node_selector_and_no_preferences():
    pod = {"spec": {
        "nodeSelector": {"team": "ml"},
        "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": lbl.INSTANCE_TYPE, "operator": "In", "values": ["p5.48xlarge"]}]},
                {"matchExpressions": [{"key": lbl.INSTANCE_TYPE, "operator": "In", "values": ["p4d.24xlarge"]}]},
            ]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "preference": {"matchExpressions": [{"key": "x", "operator": "In", "values": ["y"]}]}}],
        }},
    }}
    terms = pod_terms(pod)
    assert [t.get(lbl.INSTANCE_TYPE).values for t in terms] == [{"p5.48xlarge"}, {"p4d.24xlarge"}]
    assert all("team" in t and "x" not in t for t in terms)


def test_nodepool_requirements_include_labels_name_and_min_values():
    nodepool = {"metadata": {"name": "gpu"}, "spec": {"template": {
        "metadata": {"labels": {"team": "ml"}},
        "spec": {"requirements": [
            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p4d", "p5"], "minValues": 2}]}}}}
    got = nodepool_requirements(nodepool)
    assert got.get("team").values == {"ml"} and got.get(lbl.NODEPOOL).values == {"gpu"}
    assert got.get("karpenter.k8s.aws/instance-family").min_values == 2


def test_nodepool_requirements_carry_the_nodeclass_label_from_v1_1():
    np = {"metadata": {"name": "gpu"}, "spec": {"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "al2023-gpu"}}}}}
    pod = {"spec": {"nodeSelector": {"karpenter.k8s.aws/ec2nodeclass": "al2023-gpu"}}}
    allow = lbl.well_known(auto_mode=False)
    assert nodepool_requirements(np).compatible(pod_terms(pod)[0], allow_undefined=allow) is None
    other = {"spec": {"nodeSelector": {"karpenter.k8s.aws/ec2nodeclass": "bottlerocket"}}}
    bad = nodepool_requirements(np).compatible(pod_terms(other)[0], allow_undefined=allow)
    assert bad is not None and not bad.undefined  # a real mismatch of values, not an unknown label
    old = nodepool_requirements(np, karpenter_version="1.0.8").compatible(pod_terms(pod)[0], allow_undefined=allow)
    assert old is not None and old.undefined  # v1.0 did not set the label


def test_min_values_counts_zone_and_capacity_type_from_offerings():
    types = {"g5.12xlarge": G5_12XL, "g5.48xlarge": G5_48XL}
    want = reqs(Requirement.of(ZONE, "Exists", min_values=3), Requirement.of(CT, "Exists", min_values=2))
    offered = {"g5.12xlarge": {ZONE: {"us-east-1a", "us-east-1b"}, CT: {"on-demand"}},
               "g5.48xlarge": {ZONE: {"us-east-1b", "us-east-1c"}, CT: {"on-demand"}}}
    assert min_values_unmet(want, types, prefix="karpenter.k8s.aws/", offered=offered) == {CT: (1, 2)}
    # a type without offering data leaves those keys undecided: never reported
    assert min_values_unmet(want, types, prefix="karpenter.k8s.aws/", offered={"g5.12xlarge": offered["g5.12xlarge"]}) == {}


def test_instance_requirements_take_zone_ids_from_the_subnets():
    pinned = reqs(Requirement.of("topology.k8s.aws/zone-id", "In", ["usw2-az4"]))
    known = instance_requirements(G5_12XL, prefix="karpenter.k8s.aws/", zone_ids=frozenset({"usw2-az1", "usw2-az2"}))
    assert known.intersects(pinned) is not None
    assert instance_requirements(G5_12XL, prefix="karpenter.k8s.aws/").intersects(pinned) is None  # unknown: kept
