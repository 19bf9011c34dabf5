"""The pending-pod analyzer on hand-built facts: each case is a way real clusters differ from the seeds,
decided as Karpenter decides it."""
from __future__ import annotations

import yaml

from bot.gateway.ec2 import InstanceTypeInfo
from playbooks.analyzers import pending
from playbooks.facts import Ec2Facts, Facts, PodFacts
from playbooks.model import Target

ZONE = "topology.kubernetes.io/zone"


def _type(name, *, vcpus, memory_gib, gpus, gpu="A10G", efa=0) -> InstanceTypeInfo:
    return InstanceTypeInfo(name=name, vcpus=vcpus, memory_mib=memory_gib * 1024, architectures=("x86_64",),
                            gpu_count=gpus, gpu_name=gpu if gpus else None, gpu_manufacturer="NVIDIA" if gpus else None,
                            gpu_memory_mib=24576 if gpus else None, efa_supported=bool(efa), max_efa_interfaces=efa)


G5 = {t.name: t for t in (_type("g5.2xlarge", vcpus=8, memory_gib=32, gpus=1),
                          _type("g5.12xlarge", vcpus=48, memory_gib=192, gpus=4),
                          _type("g5.48xlarge", vcpus=192, memory_gib=768, gpus=8, efa=1))}
P4D = {"p4d.24xlarge": _type("p4d.24xlarge", vcpus=96, memory_gib=1152, gpus=8, gpu="A100", efa=4)}


def _pod(name="trainer-0", *, requests=None, selector=None, affinity=None, tolerations=None) -> dict:
    spec = {"containers": [{"name": "trainer", "resources": {"requests": requests or {"cpu": "4", "nvidia.com/gpu": "1"}}}],
            "tolerations": tolerations if tolerations is not None else [{"key": "nvidia.com/gpu", "operator": "Exists"}]}
    if selector:
        spec["nodeSelector"] = selector
    if affinity:
        spec["affinity"] = affinity
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml", "labels": {}},
            "spec": spec, "status": {"phase": "Pending"}}


def _nodepool(name="gpu", *, requirements=(), labels=None, limits=None, used=None, nodeclass="default",
              group="karpenter.k8s.aws") -> dict:
    kind = "NodeClass" if group == "eks.amazonaws.com" else "EC2NodeClass"
    template = {"spec": {"nodeClassRef": {"group": group, "kind": kind, "name": nodeclass},
                         "requirements": list(requirements),
                         "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]}}
    if labels:
        template["metadata"] = {"labels": labels}
    np = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
          "spec": {"template": template}, "status": {"resources": used or {}}}
    if limits:
        np["spec"]["limits"] = limits
    return np


def _facts(pod: dict, *nodepools: dict, types=None, ec2: Ec2Facts | None = None, events=(), nodeclasses=None) -> Facts:
    facts = Facts(target=Target(kind="pod", name=pod["metadata"]["name"], namespace="ml"), cluster="test")
    facts.pods.append(PodFacts(pod=pod, events=list(events)))
    facts.nodepools = {np["metadata"]["name"]: np for np in nodepools}
    facts.ec2 = ec2 or Ec2Facts()
    if types is not None:
        for np in nodepools:
            facts.ec2.candidates[np["metadata"]["name"]] = dict(types)
    facts.nodeclasses = nodeclasses or {}
    return facts


def _run(facts: Facts):
    return list(pending.analyze(facts))


def test_cpu_limit_reached():
    pod = _pod(requests={"cpu": "6", "nvidia.com/gpu": "1"})
    np = _nodepool(limits={"cpu": "200", "nvidia.com/gpu": "100"}, used={"cpu": "196", "nvidia.com/gpu": "10"})
    found = _run(_facts(pod, np, types=G5))
    assert [f.code for f in found] == ["karpenter.nodepool_limit_reached"]
    assert "cpu limit" in found[0].title and "g5.2xlarge" in found[0].detail
    patch = yaml.safe_load(found[0].fix.snippet)
    assert patch["spec"]["limits"]["cpu"] == "400" and patch["spec"]["limits"]["nvidia.com/gpu"] == "100"


def test_memory_request_too_big_for_any_allowed_type_once_overhead_is_counted():
    # 750Gi is under g5.48xlarge's 768 GiB, but not under its allocatable (VM overhead 7.5 %, kube-reserved)
    pod = _pod(requests={"cpu": "8", "memory": "750Gi", "nvidia.com/gpu": "1"})
    found = _run(_facts(pod, _nodepool(), types=G5))
    assert [f.code for f in found] == ["karpenter.no_instance_type"]
    title = found[0].title
    assert "memory" in title and "750.0Gi" in title and "g5.48xlarge" in found[0].detail
    assert "allocatable" in title


def test_cpu_request_counts_daemonset_overhead():
    pod = _pod(requests={"cpu": "190", "nvidia.com/gpu": "1"})
    facts = _facts(pod, _nodepool(), types=G5)
    facts.daemonsets = [{"metadata": {"name": "node-agent"}, "spec": {"template": {"spec": {
        "tolerations": [{"operator": "Exists"}],
        "containers": [{"name": "a", "resources": {"requests": {"cpu": "2"}}}]}}}}]
    found = _run(facts)
    assert found and "cpu" in found[0].title and "node-agent" in found[0].detail


def test_spot_only_nodepool_whose_types_have_no_spot_offering_in_the_allowed_zones():
    np = _nodepool(requirements=[{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                                 {"key": ZONE, "operator": "In", "values": ["us-east-1a", "us-east-1b"]}])
    ec2 = Ec2Facts(offerings={"p4d.24xlarge": {"us-east-1a": frozenset({"on-demand"}),
                                               "us-east-1b": frozenset({"on-demand"}),
                                               "us-east-1c": frozenset({"on-demand", "spot"})}})
    found = _run(_facts(_pod(requests={"nvidia.com/gpu": "8"}), np, types=P4D, ec2=ec2))
    assert [f.code for f in found] == ["karpenter.offering_unavailable_in_zone"]
    assert "spot" in found[0].title and "on-demand" in found[0].detail
    patch = yaml.safe_load(found[0].fix.snippet)
    ct = [r for r in patch["spec"]["template"]["spec"]["requirements"] if r["key"] == "karpenter.sh/capacity-type"]
    assert ct == [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand", "spot"]}]


def test_zone_offering_unknown_is_never_a_finding():
    pod = _pod(requests={"nvidia.com/gpu": "8"}, selector={ZONE: "us-east-1a"})
    facts = _facts(pod, _nodepool(), types=P4D, ec2=Ec2Facts())
    assert _run(facts) == [] and facts.cache["pending_ok"] == set()  # nor a belief that it fits


def test_not_in_on_a_label_the_nodepool_does_not_define_is_fine():
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "example.com/maintenance", "operator": "NotIn", "values": ["true"]},
                              {"key": "example.com/debug", "operator": "DoesNotExist"}]}]}}}
    facts = _facts(_pod(affinity=affinity), _nodepool(), types=G5)
    assert _run(facts) == []
    assert facts.cache["pending_ok"] == {"trainer-0"} and facts.cache["pending_ok_nodepools"]["trainer-0"] == ["gpu"]


def test_in_on_an_undefined_custom_label_is_not():
    found = _run(_facts(_pod(selector={"example.com/accelerator": "a10g"}), _nodepool(), types=G5))
    assert [f.code for f in found] == ["scheduling.node_selector_mismatch"]
    assert 'label "example.com/accelerator" does not have known values' in found[0].detail


def test_gt_and_lt_intersection():
    np = _nodepool(requirements=[{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["0"]}])
    both_gt = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["0"]}]}]}}}
    assert _run(_facts(_pod(affinity=both_gt), np, types=G5)) == []
    np = _nodepool(requirements=[{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["5"]}])
    crossed = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Lt", "values": ["3"]}]}]}}}
    found = _run(_facts(_pod(affinity=crossed), np, types=G5))
    assert [f.code for f in found] == ["scheduling.node_selector_mismatch"]
    assert "incompatible requirements, key karpenter.k8s.aws/instance-gpu-count" in found[0].detail


def test_min_values_unmet():
    np = _nodepool(requirements=[{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5", "g6"],
                                  "minValues": 2}])
    found = _run(_facts(_pod(), np, types=G5))  # only g5 types exist
    assert [f.code for f in found] == ["karpenter.no_instance_type"]
    assert "minValues" in found[0].title and "needs 2 distinct values, the remaining types give 1" in found[0].detail
    patch = yaml.safe_load(found[0].fix.snippet)
    assert patch["spec"]["template"]["spec"]["requirements"][0]["minValues"] == 1


def test_second_node_selector_term_satisfiable():
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}]},
        {"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g5.12xlarge"]}]},
    ]}}}
    facts = _facts(_pod(affinity=affinity), _nodepool(), types=G5)
    assert _run(facts) == [] and "trainer-0" in facts.cache["pending_ok"]
    affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"].pop()
    found = _run(_facts(_pod(affinity=affinity), _nodepool(), types=G5))
    assert [f.code for f in found] == ["scheduling.node_selector_mismatch"]


def test_beta_label_alias_is_read_as_the_ga_key():
    np = _nodepool(requirements=[{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}])
    assert _run(_facts(_pod(selector={"beta.kubernetes.io/arch": "amd64"}), np, types=G5)) == []
    found = _run(_facts(_pod(selector={"beta.kubernetes.io/arch": "arm64"}), np, types=G5))
    assert [f.code for f in found] == ["scheduling.node_selector_mismatch"]
    patch = yaml.safe_load(found[0].fix.snippet)
    assert patch["spec"]["nodeSelector"] == {"beta.kubernetes.io/arch": None, "kubernetes.io/arch": "amd64"}


def test_managed_node_group_label_is_explained_and_replaced_by_the_karpenter_label():
    pod = _pod(selector={"eks.amazonaws.com/capacityType": "SPOT"})
    found = _run(_facts(pod, _nodepool(), types=G5))
    assert [f.code for f in found] == ["scheduling.node_selector_mismatch"]
    assert "managed node group" in found[0].detail and "karpenter.sh/capacity-type" in found[0].detail
    patch = yaml.safe_load(found[0].fix.snippet)
    assert patch["spec"]["nodeSelector"] == {"eks.amazonaws.com/capacityType": None, "karpenter.sh/capacity-type": "spot"}


def test_auto_mode_prefix_suggested_only_where_the_label_exists():
    np = _nodepool(group="eks.amazonaws.com")
    found = _run(_facts(_pod(selector={"karpenter.k8s.aws/instance-gpu-name": "a10g"}), np, types=G5))
    assert "eks.amazonaws.com/instance-gpu-name" in found[0].detail
    found = _run(_facts(_pod(selector={"karpenter.k8s.aws/capacity-reservation-id": "cr-1"}), np, types=G5))
    assert "eks.amazonaws.com/capacity-reservation-id" not in found[0].detail + found[0].fix.snippet


def test_ec2nodeclass_not_ready():
    nodeclass = {"status": {"conditions": [
        {"type": "AMIsReady", "status": "False", "reason": "AMINotFound", "message": "AMISelector did not match any AMIs"},
        {"type": "Ready", "status": "False", "reason": "UnhealthyDependents", "message": "AMIsReady=False"}]}}
    facts = _facts(_pod(), _nodepool(), types=G5, nodeclasses={"karpenter.k8s.aws/default": nodeclass})
    found = _run(facts)
    assert [f.code for f in found] == ["karpenter.nodeclass_not_ready"]
    assert "AMISelector did not match any AMIs" in found[0].title and found[0].confidence == "high"
    assert facts.cache["pending_codes"]["trainer-0"] == {"karpenter.nodeclass_not_ready"}


def test_nodepool_existence_is_not_claimed_when_nodepools_were_not_read():
    facts = _facts(_pod(selector={"karpenter.sh/nodepool": "gpu"}))
    facts.unread.add("nodepools")
    assert _run(facts) == []
    facts = _facts(_pod(selector={"karpenter.sh/nodepool": "gpu"}))
    assert "does not exist" in _run(facts)[0].title


def test_without_instance_types_only_spec_facts_are_claimed():
    pod = _pod(requests={"cpu": "4", "memory": "2000Gi", "nvidia.com/gpu": "1"})
    facts = _facts(pod, _nodepool(), ec2=Ec2Facts(unavailable="no AWS credentials found"))
    assert _run(facts) == [] and facts.cache["pending_ok"] == set()  # not verified: not "ok" either


def test_capacity_type_spelled_as_managed_node_groups_spell_it():
    found = _run(_facts(_pod(selector={"karpenter.sh/capacity-type": "SPOT"}), _nodepool(), types=G5,
                        ec2=Ec2Facts(offerings={t: {"us-east-1a": frozenset({"on-demand", "spot"})} for t in G5})))
    assert [f.code for f in found] == ["karpenter.offering_unavailable_in_zone"]
    assert "lower case" in found[0].detail
    assert yaml.safe_load(found[0].fix.snippet)["spec"]["nodeSelector"] == {"karpenter.sh/capacity-type": "spot"}


def test_embedded_catalogue_decides_only_for_accelerated_pods():
    # the catalogue holds GPU types only: a CPU pod's "nothing fits" would be a conclusion from missing data
    cpu_pod = _pod(requests={"cpu": "400"}, tolerations=[{"operator": "Exists"}])
    facts = _facts(cpu_pod, _nodepool(), types=G5, ec2=Ec2Facts(source="embedded catalogue"))
    assert _run(facts) == []
    gpu_pod = _pod(requests={"nvidia.com/gpu": "16"})
    found = _run(_facts(gpu_pod, _nodepool(), types=G5, ec2=Ec2Facts(source="embedded catalogue")))
    assert [f.code for f in found] == ["karpenter.no_instance_type"] and found[0].confidence == "high"
    p5_pod = _pod(selector={"node.kubernetes.io/instance-type": "p6-b200.48xlarge"})
    found = _run(_facts(p5_pod, _nodepool(), types=G5, ec2=Ec2Facts(source="embedded catalogue")))
    assert found and found[0].confidence == "medium"


def _schema_errors(fix, live: dict) -> list[str]:
    from playbooks.validation import validate_patch

    return [e for doc in yaml.safe_load_all(fix.snippet) if isinstance(doc, dict) for e in validate_patch(live, doc)]


def test_nodepool_fixes_validate_against_the_nodepool_crd():
    np = _nodepool(requirements=[{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
                   limits={"cpu": "200"}, used={"cpu": "196"})
    ec2 = Ec2Facts(offerings={t: {"us-east-1a": frozenset({"on-demand"})} for t in G5})
    spot = _run(_facts(_pod(), np, types=G5, ec2=ec2))
    assert spot and spot[0].code == "karpenter.offering_unavailable_in_zone"
    assert _schema_errors(spot[0].fix, np) == []
    np = _nodepool(requirements=[{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5", "g6"],
                                  "minValues": 2}])
    assert _schema_errors(_run(_facts(_pod(), np, types=G5))[0].fix, np) == []
    np = _nodepool(limits={"cpu": "200", "memory": "100Gi"}, used={"cpu": "196", "memory": "90Gi"})
    limit = _run(_facts(_pod(), np, types=G5))
    assert limit[0].code == "karpenter.nodepool_limit_reached" and _schema_errors(limit[0].fix, np) == []


def test_a_fit_without_the_daemonsets_is_not_claimed():
    facts = _facts(_pod(), _nodepool(), types=G5)
    facts.unread.add("daemonsets")
    assert _run(facts) == [] and facts.cache["pending_ok"] == set()


def test_karpenter_offering_message_with_a_zone_pin_and_no_offering_data():
    pod = _pod(requests={"nvidia.com/gpu": "8"}, selector={ZONE: "us-east-1a"})
    said = {"reason": "FailedScheduling", "type": "Warning", "source": {"component": "karpenter"},
            "message": "Failed to schedule pod, incompatible with nodepool \"gpu\", daemonset overhead={}, no instance "
                       "type which had enough resources and the required offering met the scheduling requirements"}
    facts = _facts(pod, _nodepool(), types=P4D, ec2=Ec2Facts(), events=[said])
    found = _run(facts)
    assert [f.code for f in found] == ["karpenter.offering_unavailable_in_zone"]
    assert found[0].confidence == "medium" and "could not be checked" in found[0].detail
    assert "trainer-0" not in facts.cache["pending_ok"]
    # without Karpenter's words the model says nothing it cannot check
    facts = _facts(pod, _nodepool(), types=P4D, ec2=Ec2Facts())
    assert _run(facts) == [] and "trainer-0" not in facts.cache["pending_ok"]


def test_spot_only_with_capacity_types_not_checked_is_not_believed_to_fit():
    np = _nodepool(requirements=[{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}])
    zones_only = Ec2Facts(zones={"p4d.24xlarge": frozenset({"us-east-1a"})})
    facts = _facts(_pod(requests={"nvidia.com/gpu": "8"}), np, types=P4D, ec2=zones_only)
    assert _run(facts) == [] and facts.cache["pending_ok"] == set()
    said = {"reason": "FailedScheduling", "type": "Warning", "source": {"component": "karpenter"},
            "message": "Failed to schedule pod, no instance type has the required offering, requirements=..., "
                       "resources=... (NodePool=gpu)"}
    found = _run(_facts(_pod(requests={"nvidia.com/gpu": "8"}), np, types=P4D, ec2=zones_only, events=[said]))
    assert [f.code for f in found] == ["karpenter.offering_unavailable_in_zone"] and found[0].confidence == "medium"
    assert "capacity type spot" in found[0].title and "spot" in found[0].fix.snippet
