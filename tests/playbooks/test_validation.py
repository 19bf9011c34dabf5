"""playbooks.validation against the real CRD schemas and kubernetes-validate's core schemas."""
from __future__ import annotations

import copy

import pytest

from playbooks.validation import known_kinds, merge_patch, validate_object, validate_patch

NODEPOOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "gpu-training"},
    "spec": {
        "template": {
            "metadata": {"labels": {"workload": "training"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                "requirements": [
                    {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["a100", "h100"]},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                ],
                "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
                "expireAfter": "720h",
            },
        },
        "limits": {"nvidia.com/gpu": "32", "cpu": 1000},
        "disruption": {
            "consolidationPolicy": "WhenEmpty",
            "consolidateAfter": "10m",
            "budgets": [{"nodes": "1"}, {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "10h"}],
        },
        "weight": 90,
    },
}

PYTORCHJOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "llama-3-8b-fsdp", "namespace": "llm"},
    "spec": {
        "runPolicy": {"cleanPodPolicy": "Running", "suspend": False},
        "pytorchReplicaSpecs": {
            replica: {
                "replicas": replicas,
                "restartPolicy": "OnFailure",
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "pytorch",
                                "image": "public.ecr.aws/deep-learning-containers/pytorch-training:2.8.0-gpu-py312-cu129-ubuntu22.04-ec2-v1.0",
                                "resources": {"limits": {"nvidia.com/gpu": 8}, "requests": {"nvidia.com/gpu": 8}},
                            }
                        ],
                        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    }
                },
            }
            for replica, replicas in (("Master", 1), ("Worker", 3))
        },
    },
}


def test_valid_nodepool_passes():
    assert validate_object(NODEPOOL) == []
    assert validate_object(NODEPOOL, strict=True) == []


def test_bad_consolidation_policy_names_the_field():
    nodepool = copy.deepcopy(NODEPOOL)
    nodepool["spec"]["disruption"]["consolidationPolicy"] = "Sometimes"
    errors = validate_object(nodepool)
    assert len(errors) == 1
    assert "spec.disruption.consolidationPolicy" in errors[0]
    assert "Sometimes" in errors[0] and "WhenEmptyOrUnderutilized" in errors[0]
    assert errors[0].startswith("NodePool/gpu-training: ")


def test_nodepool_budget_and_duration_patterns_are_checked():
    nodepool = copy.deepcopy(NODEPOOL)
    nodepool["spec"]["disruption"]["consolidateAfter"] = "ten minutes"
    nodepool["spec"]["disruption"]["budgets"][0]["nodes"] = "150%"
    errors = validate_object(nodepool)
    assert any("spec.disruption.consolidateAfter" in e for e in errors)
    assert any("spec.disruption.budgets[0].nodes" in e for e in errors)


def test_labels_under_template_spec_are_unknown_in_strict_mode():
    nodepool = copy.deepcopy(NODEPOOL)
    nodepool["spec"]["template"]["spec"]["labels"] = {"workload": "training"}  # belongs in template.metadata
    assert validate_object(nodepool) == []  # the API server would silently prune it
    errors = validate_object(nodepool, strict=True)
    assert any("spec.template.spec" in e and "labels" in e for e in errors)


def test_pod_missing_containers_fails():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpu-pod"}, "spec": {"nodeSelector": {"a": "b"}}}
    errors = validate_object(pod)
    assert errors == ["Pod/gpu-pod: spec: 'containers' is a required property"]
    assert validate_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpu-pod"}}) != []


def test_core_kinds_validate():
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "gpu-pod", "namespace": "default", "labels": {"app": "cuda"}},
        "spec": {"containers": [{"name": "cuda", "image": "nvidia/cuda:13.0.2-runtime-ubuntu22.04",
                                 "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
        "status": {"phase": "Pending"},
    }
    assert validate_object(pod) == []
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "gpubot"},
             "spec": {"holderIdentity": "gpubot-0", "leaseDurationSeconds": 15}}
    assert validate_object(lease) == []
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "gpu-pod.188a1b2c3d4e5f60", "namespace": "default"},
             "involvedObject": {"kind": "Pod", "name": "gpu-pod", "namespace": "default"}, "reason": "FailedScheduling",
             "count": "three"}
    assert validate_object(event) == ["Event/gpu-pod.188a1b2c3d4e5f60: count: 'three' is not of type 'integer', 'null'"]


def test_unknown_top_level_fields_and_bad_labels_are_reported():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"gpu": "a b"}},
           "spec": {"containers": [{"name": "c"}]}, "nodeSelector": {"x": "y"}}
    errors = validate_object(pod)
    assert "Pod/p: unknown top-level field 'nodeSelector'" in errors
    assert any(e.startswith("Pod/p: metadata.labels.gpu:") for e in errors)


def test_auto_mode_nodeclass_gets_a_shape_check():
    nodeclass = {"apiVersion": "eks.amazonaws.com/v1", "kind": "NodeClass", "metadata": {"name": "default"},
                 "spec": {"role": "AmazonEKSAutoNodeRole"}}
    assert validate_object(nodeclass) == []
    assert validate_object({"apiVersion": "eks.amazonaws.com/v1", "kind": "NodeClass", "metadata": {}}) != []


def test_unknown_kind_and_malformed_objects_fail():
    assert validate_object({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
    assert validate_object({"kind": "Pod", "metadata": {"name": "p"}})
    assert validate_object([]) == ["object must be a mapping, got list"]


def test_merge_patch_onto_pytorchjob_validates():
    assert validate_object(PYTORCHJOB) == []
    patch = {
        "spec": {
            "pytorchReplicaSpecs": {
                "Worker": {"template": {"metadata": {"annotations": {"karpenter.sh/do-not-disrupt": "true"}}}},
            }
        }
    }
    assert validate_patch(PYTORCHJOB, patch) == []
    patched = merge_patch(PYTORCHJOB, patch)
    worker = patched["spec"]["pytorchReplicaSpecs"]["Worker"]
    assert worker["template"]["metadata"]["annotations"] == {"karpenter.sh/do-not-disrupt": "true"}
    assert worker["template"]["spec"]["containers"][0]["name"] == "pytorch"  # merged, not replaced
    assert "metadata" not in PYTORCHJOB["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]  # live untouched


def test_bad_merge_patch_is_reported():
    bad = {"spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": "three"}}}}
    errors = validate_patch(PYTORCHJOB, bad)
    assert errors and "spec.pytorchReplicaSpecs.Worker.replicas" in errors[0]
    assert validate_patch(PYTORCHJOB, {"metadata": {"name": "other"}})[0].startswith("patch changes metadata.name")
    assert validate_patch(PYTORCHJOB, ["not", "a", "mapping"])


def test_merge_patch_follows_rfc7386():
    assert merge_patch({"a": "b", "c": {"d": "e", "f": "g"}}, {"a": "z", "c": {"f": None}}) == {"a": "z", "c": {"d": "e"}}
    assert merge_patch({"a": [1, 2]}, {"a": [3]}) == {"a": [3]}
    assert merge_patch({"a": "b"}, {"a": {"x": 1}}) == {"a": {"x": 1}}
    assert merge_patch("not a mapping", {"a": 1}) == {"a": 1}


def test_nodepool_consolidation_patch():
    patch = {"spec": {"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m",
                                     "budgets": [{"nodes": "0", "reasons": ["Underutilized"]}]}}}
    assert validate_patch(NODEPOOL, patch) == []
    assert validate_patch(NODEPOOL, {"spec": {"disruption": {"consolidationPolicy": "Never"}}})


@pytest.mark.parametrize("kind", [
    ("karpenter.sh/v1", "NodePool"), ("karpenter.sh/v1", "NodeClaim"), ("karpenter.k8s.aws/v1", "EC2NodeClass"),
    ("kubeflow.org/v1", "PyTorchJob"), ("eks.amazonaws.com/v1", "NodeClass"), ("v1", "Pod"), ("v1", "Node"),
    ("v1", "Event"), ("v1", "Namespace"), ("apps/v1", "DaemonSet"), ("apps/v1", "Deployment"), ("batch/v1", "Job"),
    ("v1", "Service"), ("coordination.k8s.io/v1", "Lease"), ("v1", "ConfigMap"),
])
def test_known_kinds(kind):
    assert kind in known_kinds()
