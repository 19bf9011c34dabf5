"""Small builders for the sweep detector tests: objects in their REST shape, times relative to NOW."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

NOW = datetime(2026, 9, 14, 12, 0, tzinfo=timezone.utc)


def ago(**delta) -> str:
    return (NOW - timedelta(**delta)).isoformat().replace("+00:00", "Z")


def gpu_node(name: str, *, itype: str = "p5.48xlarge", pool: str | None = "gpu", gpus: int = 8, allocatable: int | None = None,
             ready: str = "True", ready_since: str | None = None, conditions: list[dict] | None = None,
             taints: list[dict] | None = None, labels: dict | None = None, created: str | None = None) -> dict:
    node_labels = {"node.kubernetes.io/instance-type": itype, "karpenter.k8s.aws/instance-gpu-count": str(gpus)}
    if pool:
        node_labels["karpenter.sh/nodepool"] = pool
    node_labels.update(labels or {})
    resources = {"cpu": "96", "nvidia.com/gpu": str(gpus)} if gpus else {"cpu": "96"}
    alloc = dict(resources)
    if allocatable is not None:
        alloc["nvidia.com/gpu"] = str(allocatable)
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": node_labels, "creationTimestamp": created or ago(days=3)},
        "spec": {"taints": taints or []},
        "status": {"capacity": resources, "allocatable": alloc,
                   "conditions": [{"type": "Ready", "status": ready, "reason": "KubeletReady" if ready == "True" else "KubeletNotReady",
                                   "message": "", "lastTransitionTime": ready_since or ago(days=3)}] + (conditions or [])},
    }


def node_event(node: str, reason: str, message: str, *, count: int = 1, last: str | None = None, kind: str = "Warning") -> dict:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{node}.{reason}", "namespace": "default"},
            "involvedObject": {"kind": "Node", "name": node}, "reason": reason, "message": message, "type": kind,
            "source": {"component": "eks-node-monitoring-agent"}, "count": count, "lastTimestamp": last or ago(minutes=2)}


def pod(name: str, *, namespace: str = "train", phase: str = "Running", gpus: int = 8, node: str | None = None,
        created: str | None = None, owner: tuple[str, str] | None = None, labels: dict | None = None,
        annotations: dict | None = None, node_selector: dict | None = None) -> dict:
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {"cpu": "2"}
    metadata: dict = {"name": name, "namespace": namespace, "creationTimestamp": created or ago(hours=1),
                      "labels": labels or {}, "annotations": annotations or {}}
    if owner:
        metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": owner[0], "name": owner[1], "controller": True}]
    spec: dict = {"containers": [{"name": "main", "resources": {"limits": limits}}]}
    if node:
        spec["nodeName"] = node
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": {"phase": phase}}


def nodepool(name: str, *, limits: dict | None = None, used: dict | None = None, policy: str | None = "WhenEmptyOrUnderutilized",
             after: str = "0s", budgets: list[dict] | None = None, conditions: list[dict] | None = None,
             instance_types: tuple[str, ...] = ("p5.48xlarge",)) -> dict:
    disruption: dict = {"consolidateAfter": after}
    if policy:
        disruption["consolidationPolicy"] = policy
    if budgets is not None:
        disruption["budgets"] = budgets
    return {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
        "spec": {"template": {"spec": {"requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                                           "values": list(instance_types)}]}},
                 "disruption": disruption, "limits": limits or {}},
        "status": {"resources": used or {}, "conditions": conditions or [{"type": "Ready", "status": "True"}]},
    }


def nodeclaim(name: str, *, pool: str, conditions: list[dict], created: str | None = None) -> dict:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": pool}, "creationTimestamp": created or ago(minutes=30)},
            "status": {"conditions": conditions}}
