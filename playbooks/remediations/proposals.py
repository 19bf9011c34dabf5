"""The three changes gpubot may make to a cluster, as typed, validated proposals.

A proposal is data (kind, target, params) that travels through Slack buttons and the database, so
``parse`` re-validates it from a plain dict. What it writes is planned from the live objects by the
kind's definition (``playbooks.remediations.registry``); ``merge_patch`` is the shape of the change,
for a preview made before anything is read.
"""
from __future__ import annotations

import re
from typing import Any

from playbooks.durations import is_karpenter_duration
from playbooks.model import Remediation

DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_BUDGET = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")
WORKLOAD_KINDS = ("pod", "job", "pytorchjob", "tfjob", "mpijob", "jobset")
POLICIES = ("WhenEmpty", "WhenEmptyOrUnderutilized")
_PARAMS = {
    "annotate-do-not-disrupt": {"kind", "namespace", "name"},
    "nodepool-consolidation": {"nodepool", "consolidationPolicy", "consolidateAfter", "budgetNodes"},
    "cordon-gpu-node": {"node"},
}


class InvalidRemediation(ValueError):
    pass


def annotate_do_not_disrupt(*, kind: str, namespace: str, name: str) -> Remediation:
    """Annotate the workload's running pods and its pod template(s) (found from the live objects
    when planned, so the proposal stays small enough for a Slack button)."""
    params = {"kind": kind, "namespace": namespace, "name": name}
    return parse({"kind": "annotate-do-not-disrupt", "target": f"{kind}/{namespace}/{name}", "params": params})


def nodepool_consolidation(*, nodepool: str, consolidate_after: str = "10m", budget_nodes: str | None = None) -> Remediation:
    params: dict[str, Any] = {"nodepool": nodepool, "consolidationPolicy": "WhenEmpty", "consolidateAfter": consolidate_after}
    if budget_nodes is not None:
        params["budgetNodes"] = budget_nodes
    return parse({"kind": "nodepool-consolidation", "target": f"nodepool/{nodepool}", "params": params})


def cordon_gpu_node(*, node: str) -> Remediation:
    """Mark a GPU node unschedulable; nothing running on it is evicted."""
    return parse({"kind": "cordon-gpu-node", "target": f"node/{node}", "params": {"node": node}})


def parse(raw: dict[str, Any]) -> Remediation:
    """Validate a proposal from untrusted data (a button payload); raise InvalidRemediation."""
    if not isinstance(raw, dict):
        raise InvalidRemediation("a remediation must be an object")
    kind, target, params = raw.get("kind"), raw.get("target"), raw.get("params")
    if not isinstance(params, dict) or not isinstance(target, str):
        raise InvalidRemediation("a remediation needs a target string and a params object")
    if kind not in _PARAMS:
        raise InvalidRemediation(f"unknown remediation kind {kind!r}: one of {', '.join(_PARAMS)}")
    unexpected = sorted(set(params) - _PARAMS[kind])
    if unexpected:
        raise InvalidRemediation(f"unexpected params {unexpected} for {kind}: it takes {', '.join(sorted(_PARAMS[kind]))}")
    if kind == "annotate-do-not-disrupt":
        _check_name(params.get("namespace"), "namespace")
        _check_name(params.get("name"), "name")
        if params.get("kind") not in WORKLOAD_KINDS:
            raise InvalidRemediation(f"kind must be one of {', '.join(WORKLOAD_KINDS)}")
        expected = f"{params['kind']}/{params['namespace']}/{params['name']}"
    elif kind == "nodepool-consolidation":
        _check_name(params.get("nodepool"), "nodepool")
        if params.get("consolidationPolicy") not in POLICIES:
            raise InvalidRemediation(f"consolidationPolicy must be one of {', '.join(POLICIES)}")
        after = params.get("consolidateAfter")
        if not is_karpenter_duration(after):  # what the NodePool CRD admits, so the patch cannot be refused
            raise InvalidRemediation("consolidateAfter must be a duration such as 10m, 1h30m or Never")
        budget = params.get("budgetNodes")
        if budget is not None and not _BUDGET.match(str(budget)):
            raise InvalidRemediation("budgetNodes must be a count or a percentage, such as 1 or 10%")
        expected = f"nodepool/{params['nodepool']}"
    else:
        _check_name(params.get("node"), "node")
        expected = f"node/{params['node']}"
    if target != expected:
        raise InvalidRemediation(f"target {target!r} does not match params ({expected})")
    return Remediation(kind=kind, target=target, params=dict(params))


def _check_name(value: Any, what: str) -> None:
    if not isinstance(value, str) or len(value) > 253 or not _NAME.match(value):
        raise InvalidRemediation(f"{what} {value!r} is not a valid Kubernetes name")


# Replica types shown when the owner has not been read; the plan uses the owner's own.
_DEFAULT_REPLICAS = {"pytorchjob": ("pytorchReplicaSpecs", ["Master", "Worker"]),
                     "tfjob": ("tfReplicaSpecs", ["Chief", "Worker"]),
                     "mpijob": ("mpiReplicaSpecs", ["Launcher", "Worker"])}
_OWNER_TYPES = {"pytorchjob": ("kubeflow.org/v1", "PyTorchJob"), "tfjob": ("kubeflow.org/v1", "TFJob"),
                "mpijob": ("kubeflow.org/v2beta1", "MPIJob"), "job": ("batch/v1", "Job"),
                "jobset": ("jobset.x-k8s.io/v1alpha2", "JobSet")}


def merge_patch(remediation: Remediation, *, replica_types: list[str] | None = None) -> dict[str, Any]:
    """The shape of the change as a partial manifest of the owner object, for a preview made without
    reading the cluster (a fix snippet, the approval request). What is written is the definition's
    plan: it reads the live objects, skips what already carries the value, and for a JobSet, whose
    pod templates sit in a list a merge patch would replace, writes a JSON patch per list item."""
    p = remediation.params
    if remediation.kind == "nodepool-consolidation":
        disruption: dict[str, Any] = {"consolidationPolicy": p["consolidationPolicy"], "consolidateAfter": p["consolidateAfter"]}
        if p.get("budgetNodes") is not None:
            disruption["budgets"] = [{"nodes": str(p["budgetNodes"])}]
        return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": p["nodepool"]},
                "spec": {"disruption": disruption}}
    if remediation.kind == "cordon-gpu-node":
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": p["node"]}, "spec": {"unschedulable": True}}
    annotation = {"metadata": {"annotations": {DO_NOT_DISRUPT: "true"}}}
    meta = {"name": p["name"], "namespace": p["namespace"]}
    kind = p["kind"]
    if kind == "pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {**meta, **annotation["metadata"]}}
    api_version, owner_kind = _OWNER_TYPES[kind]
    head = {"apiVersion": api_version, "kind": owner_kind, "metadata": meta}
    if kind in _DEFAULT_REPLICAS:
        field, default = _DEFAULT_REPLICAS[kind]
        return {**head, "spec": {field: {t: {"template": annotation} for t in (replica_types or default)}}}
    if kind == "job":
        return {**head, "spec": {"template": annotation}}
    return {**head, "spec": {"replicatedJobs": [{"name": t, "template": {"spec": {"template": annotation}}}
                                                for t in (replica_types or ["workers"])]}}
