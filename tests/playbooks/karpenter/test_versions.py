"""Older Karpenter API versions read into the v1 shape, as upstream's conversion webhooks do."""
from __future__ import annotations

from playbooks.karpenter import versions


def test_v1beta1_nodepool_moves_expire_after_and_renames_the_consolidation_policy():
    # kubernetes-sigs/karpenter pkg/apis/v1/nodepool_conversion.go (convertFrom)
    v1beta1 = {
        "apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool", "metadata": {"name": "gpu"},
        "spec": {
            "disruption": {"consolidationPolicy": "WhenUnderutilized", "expireAfter": "720h"},
            "limits": {"cpu": "1000", "nvidia.com/gpu": "64"},
            "weight": 10,
            "template": {
                "metadata": {"labels": {"team": "ml"}},
                "spec": {
                    "nodeClassRef": {"apiVersion": "karpenter.k8s.aws/v1beta1", "kind": "EC2NodeClass", "name": "gpu"},
                    "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                                      "values": ["p5"], "minValues": 1}],
                    "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
                },
            },
        },
    }
    v1 = versions.nodepool_from_v1beta1(v1beta1)
    assert v1["apiVersion"] == "karpenter.sh/v1"
    spec = v1["spec"]
    assert spec["disruption"] == {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s"}
    assert spec["template"]["spec"]["expireAfter"] == "720h"
    assert spec["template"]["spec"]["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"}
    assert spec["template"]["spec"]["requirements"][0]["minValues"] == 1
    assert spec["limits"] == {"cpu": "1000", "nvidia.com/gpu": "64"} and spec["weight"] == 10
    assert spec["template"]["metadata"]["labels"] == {"team": "ml"}
    assert v1beta1["spec"]["disruption"]["expireAfter"] == "720h", "the input is left as it was"


def test_v1beta1_when_empty_keeps_its_consolidate_after():
    v1 = versions.nodepool_from_v1beta1({"metadata": {"name": "x"}, "spec": {
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s"},
        "template": {"spec": {"nodeClassRef": {"name": "default"}}}}})
    assert v1["spec"]["disruption"] == {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s"}
    # No apiVersion / kind on the reference: the provider's default NodeClass.
    assert v1["spec"]["template"]["spec"]["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                                              "name": "default"}


def test_provisioner_becomes_a_nodepool_of_the_same_name():
    provisioner = {
        "apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner", "metadata": {"name": "gpu"},
        "spec": {
            "labels": {"team": "ml"},
            "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
            "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
            "limits": {"resources": {"cpu": "512", "nvidia.com/gpu": "16"}},
            "providerRef": {"name": "gpu-template"},
            "ttlSecondsAfterEmpty": 30,
            "ttlSecondsUntilExpired": 2592000,
            "weight": 5,
        },
    }
    np = versions.nodepool_from_provisioner(provisioner)
    assert np["kind"] == "NodePool" and np["metadata"]["name"] == "gpu"
    tspec = np["spec"]["template"]["spec"]
    assert np["spec"]["template"]["metadata"] == {"labels": {"team": "ml", "karpenter.sh/provisioner-name": "gpu"}}
    assert tspec["taints"] == [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    assert tspec["requirements"] == [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]
    assert tspec["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "AWSNodeTemplate", "name": "gpu-template"}
    assert tspec["expireAfter"] == "2592000s"
    assert np["spec"]["limits"] == {"cpu": "512", "nvidia.com/gpu": "16"}
    assert np["spec"]["disruption"] == {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s"}
    assert np["spec"]["weight"] == 5


def test_provisioner_with_consolidation_and_no_expiry():
    np = versions.nodepool_from_provisioner({"metadata": {"name": "p"}, "spec": {"consolidation": {"enabled": True}}})
    assert np["spec"]["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"
    assert np["spec"]["template"]["spec"]["expireAfter"] == "Never"
    assert "limits" not in np["spec"]


def test_machine_conditions_and_provisioner_label_take_their_v1_names():
    machine = {
        "apiVersion": "karpenter.sh/v1alpha5", "kind": "Machine",
        "metadata": {"name": "gpu-abc", "labels": {"karpenter.sh/provisioner-name": "gpu"}},
        "spec": {"machineTemplateRef": {"name": "gpu-template"}, "requirements": []},
        "status": {"conditions": [{"type": "MachineLaunched", "status": "True"},
                                  {"type": "MachineRegistered", "status": "False", "reason": "NodeNotFound"}]},
    }
    claim = versions.nodeclaim_from_machine(machine)
    assert claim["kind"] == "NodeClaim"
    assert claim["metadata"]["labels"]["karpenter.sh/nodepool"] == "gpu"
    assert [c["type"] for c in claim["status"]["conditions"]] == ["Launched", "Registered"]
    assert claim["spec"]["nodeClassRef"]["name"] == "gpu-template"
    assert machine["status"]["conditions"][0]["type"] == "MachineLaunched"


def test_v1beta1_nodeclaim_reference():
    claim = versions.nodeclaim_from_v1beta1({"metadata": {"name": "c"}, "spec": {
        "nodeClassRef": {"apiVersion": "karpenter.k8s.aws/v1beta1", "kind": "EC2NodeClass", "name": "gpu"}}})
    assert claim["spec"]["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"}


def test_awsnodetemplate_selectors_become_terms():
    template = {
        "apiVersion": "karpenter.k8s.aws/v1alpha1", "kind": "AWSNodeTemplate", "metadata": {"name": "gpu-template"},
        "spec": {"subnetSelector": {"karpenter.sh/discovery": "ml"},
                 "securityGroupSelector": {"aws-ids": "sg-1, sg-2"},
                 "amiFamily": "AL2"},
        "status": {"subnets": [{"id": "subnet-1", "zone": "us-west-2a"}]},
    }
    cls = versions.ec2nodeclass_from_awsnodetemplate(template)
    assert cls["kind"] == "EC2NodeClass"
    assert cls["spec"]["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "ml"}}]
    assert cls["spec"]["securityGroupSelectorTerms"] == [{"id": "sg-1"}, {"id": "sg-2"}]
    assert cls["spec"]["amiSelectorTerms"] == [{"alias": "al2@latest"}]
    assert cls["status"]["subnets"] == [{"id": "subnet-1", "zone": "us-west-2a"}]


def test_v1beta1_ec2nodeclass_family_becomes_an_alias_only_without_selector_terms():
    plain = versions.ec2nodeclass_from_v1beta1({"metadata": {"name": "a"}, "spec": {"amiFamily": "AL2023"}})
    assert plain["spec"]["amiSelectorTerms"] == [{"alias": "al2023@latest"}]
    pinned = versions.ec2nodeclass_from_v1beta1({"metadata": {"name": "b"}, "spec": {
        "amiFamily": "AL2023", "amiSelectorTerms": [{"id": "ami-1"}]}})
    assert pinned["spec"]["amiSelectorTerms"] == [{"id": "ami-1"}]


def test_pick_prefers_the_newest_version_served():
    assert versions.pick(["v1beta1", "v1"], known=versions.KARPENTER_VERSIONS) == "v1"
    assert versions.pick(["v1beta1"], known=versions.KARPENTER_VERSIONS) == "v1beta1"
    assert versions.pick(["v1alpha5"], known=versions.KARPENTER_VERSIONS) == "v1alpha5"
    assert versions.pick(["v2"], known=versions.KARPENTER_VERSIONS) is None
    assert versions.pick([], known=versions.KARPENTER_VERSIONS) is None
