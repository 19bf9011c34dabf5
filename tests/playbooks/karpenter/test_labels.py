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


def test_restricted_domains_before_v1_9_with_exceptions():
    old = "1.8.3"
    assert lbl.is_restricted("kubernetes.io/hostname", karpenter_version=old)
    assert lbl.is_restricted("example.kubernetes.io/team", karpenter_version=old)
    assert lbl.is_restricted("node-role.kubernetes.io/gpu", karpenter_version=old)
    assert lbl.is_restricted("karpenter.sh/custom", karpenter_version=old)
    assert not lbl.is_restricted("node.kubernetes.io/role", karpenter_version=old)  # LabelDomainExceptions
    assert not lbl.is_restricted("kops.k8s.io/instancegroup", karpenter_version=old)
    assert not lbl.is_restricted("karpenter.sh/capacity-type", karpenter_version=old)  # well known
    assert not lbl.is_restricted("example.com/team", karpenter_version=old)


def test_from_v1_9_only_the_karpenter_domains_and_hostname_are_restricted():
    for version in ("1.9.0", "v1.10.1", "1.14.1", None):  # unknown: the current release
        assert not lbl.is_restricted("node-role.kubernetes.io/gpu", karpenter_version=version)
        assert not lbl.is_restricted("example.k8s.io/team", karpenter_version=version)
        assert lbl.is_restricted("karpenter.sh/custom", karpenter_version=version)
        assert lbl.is_restricted("team.karpenter.sh/x", karpenter_version=version)
        assert lbl.is_restricted("karpenter.k8s.aws/custom", karpenter_version=version)  # the provider's group
        assert lbl.is_restricted("kubernetes.io/hostname", karpenter_version=version)
        assert not lbl.is_restricted("notkarpenter.sh/x", karpenter_version=version)  # a domain, not a suffix


def test_hint_follows_the_version_for_a_reserved_domain():
    assert "reserves on Karpenter 1.8.0" in lbl.hint_for("node-role.kubernetes.io/gpu", auto_mode=False, nodepool="gpu",
                                                         karpenter_version="1.8.0").text
    hint = lbl.hint_for("node-role.kubernetes.io/gpu", auto_mode=False, nodepool="gpu", karpenter_version="1.10.0")
    assert "reserves" not in hint.text and "spec.template.metadata.labels" in hint.text


def test_nodeclass_label_is_a_template_label_from_v1_1():
    np = {"metadata": {"name": "gpu"}, "spec": {"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu-al2023"}}}}}
    assert lbl.template_labels(np, karpenter_version="1.1.0")["karpenter.k8s.aws/ec2nodeclass"] == "gpu-al2023"
    assert "karpenter.k8s.aws/ec2nodeclass" not in lbl.template_labels(np, karpenter_version="1.0.8")
    auto = {"metadata": {"name": "gpu"}, "spec": {"template": {"spec": {
        "nodeClassRef": {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"}}}}}
    assert lbl.template_labels(auto)["eks.amazonaws.com/nodeclass"] == "default"
    assert "Karpenter 1.0.8 does not label" in lbl.hint_for("karpenter.k8s.aws/ec2nodeclass", auto_mode=False,
                                                            nodepool="gpu", karpenter_version="1.0.8").text


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
