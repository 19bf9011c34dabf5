r"""Instance category, generation and GPU name as aws/karpenter-provider-aws derives them
(pkg/providers/instancetype/types.go: instanceTypeScheme `(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.` and
lowerKabobCase), and the node labels the embedded catalogue synthesises from them."""
from __future__ import annotations

import pytest

from bot.gateway.catalogue import embedded_catalogue
from playbooks.karpenter.labels import instance_category, instance_generation, kebab_value


@pytest.mark.parametrize("itype,category,generation", [
    ("trn1.32xlarge", "trn", "1"), ("trn2.48xlarge", "trn", "2"), ("inf2.xlarge", "inf", "2"),
    ("p5.48xlarge", "p", "5"), ("p4d.24xlarge", "p", "4"), ("g6e.12xlarge", "g", "6"),
    ("dl1.24xlarge", "dl", "1"), ("u-6tb1.metal", "u", "1"), ("x2iedn.xlarge", "x", "2"),
])
def test_category_and_generation(itype, category, generation):
    assert (instance_category(itype), instance_generation(itype)) == (category, generation)


def test_a_name_without_the_pattern_gets_no_category():
    assert instance_category("p5") is None and instance_generation("weird") is None


@pytest.mark.parametrize("ec2,label", [("A100", "a100"), ("H100", "h100"), ("L40S", "l40s"), ("A10G", "a10g"),
                                       ("Radeon Pro V520", "radeon-pro-v520")])
def test_gpu_names_are_lower_kebab_case(ec2, label):
    assert kebab_value(ec2) == label


def test_catalogue_labels_match_what_karpenter_puts_on_nodes():
    types = embedded_catalogue().types
    trn = types["trn1.32xlarge"].karpenter_labels()
    assert trn["karpenter.k8s.aws/instance-category"] == "trn"
    assert trn["karpenter.k8s.aws/instance-generation"] == "1"
    assert trn["karpenter.k8s.aws/instance-accelerator-name"] == "trainium"
    p5 = types["p5.48xlarge"].karpenter_labels("eks.amazonaws.com")
    assert p5["eks.amazonaws.com/instance-category"] == "p" and p5["eks.amazonaws.com/instance-gpu-name"] == "h100"
    assert types["g6e.12xlarge"].karpenter_labels()["karpenter.k8s.aws/instance-gpu-name"] == "l40s"
