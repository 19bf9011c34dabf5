"""Well-known, normalised and restricted labels (kubernetes-sigs/karpenter pkg/apis/v1/labels.go,
aws/karpenter-provider-aws pkg/apis/v1/labels.go), and fix hints that name only labels that exist."""
from __future__ import annotations

from playbooks.karpenter import labels as lbl


def test_well_known_sets_follow_upstream():
    oss = lbl.well_known(auto_mode=False)
    assert {"topology.k8s.aws/zone-id", "karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-local-nvme",
            "karpenter.sh/capacity-type", "node.kubernetes.io/instance-type", "kubernetes.io/os"} <= oss
    assert "kubernetes.io/hostname" not in oss  # restricted, not well known
    auto = lbl.well_known(auto_mode=True)
    assert "eks.amazonaws.com/instance-gpu-name" in auto and "karpenter.k8s.aws/instance-gpu-name" not in auto


def test_restricted_domains_with_exceptions():
    assert lbl.is_restricted("kubernetes.io/hostname")
    assert lbl.is_restricted("example.kubernetes.io/team")
    assert lbl.is_restricted("karpenter.sh/custom")
    assert not lbl.is_restricted("node.kubernetes.io/role")  # LabelDomainExceptions
    assert not lbl.is_restricted("kops.k8s.io/instancegroup")
    assert not lbl.is_restricted("karpenter.sh/capacity-type")  # well known
    assert not lbl.is_restricted("example.com/team")


def test_normalised_aliases():
    assert lbl.normalize("beta.kubernetes.io/os") == "kubernetes.io/os"
    assert lbl.normalize("failure-domain.beta.kubernetes.io/region") == "topology.kubernetes.io/region"
    assert lbl.normalize("example.com/x") == "example.com/x"


def test_prefix_hint_only_where_the_suffix_exists_on_the_other_side():
    hint = lbl.hint_for("karpenter.k8s.aws/instance-gpu-name", auto_mode=True, nodepool="gpu")
    assert hint.replacement == "eks.amazonaws.com/instance-gpu-name"
    # Auto Mode has no capacity-reservation label: no invented key
    hint = lbl.hint_for("karpenter.k8s.aws/capacity-reservation-id", auto_mode=True, nodepool="gpu")
    assert hint.replacement is None and "eks.amazonaws.com/capacity-reservation-id" not in hint.text
    hint = lbl.hint_for("eks.amazonaws.com/instance-family", auto_mode=False, nodepool="gpu")
    assert hint.replacement == "karpenter.k8s.aws/instance-family"
    hint = lbl.hint_for("eks.amazonaws.com/compute-type", auto_mode=False, nodepool="gpu")
    assert hint.replacement is None and "Auto Mode" in hint.text


def test_managed_node_group_labels_are_explained_as_such():
    hint = lbl.hint_for("eks.amazonaws.com/nodegroup", auto_mode=False, nodepool="gpu")
    assert "managed node group" in hint.text and hint.replacement == "karpenter.sh/nodepool"
    hint = lbl.hint_for("eks.amazonaws.com/capacityType", auto_mode=True, nodepool="gpu")
    assert hint.replacement == "karpenter.sh/capacity-type" and hint.value_map["SPOT"] == "spot"
    hint = lbl.hint_for("eks.amazonaws.com/nodegroup-image", auto_mode=False, nodepool="gpu")
    assert hint.replacement is None


def test_template_labels_carry_the_nodepool_name():
    np = {"metadata": {"name": "gpu"}, "spec": {"template": {"metadata": {"labels": {"team": "ml"}}}}}
    assert lbl.template_labels(np) == {"team": "ml", "karpenter.sh/nodepool": "gpu"}
