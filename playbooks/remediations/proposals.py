"""The two changes gpubot may make to a cluster, as typed, validated proposals.

A proposal is data (kind, target, params) that travels through Slack buttons and the database, so
``parse`` re-validates it from a plain dict and ``merge_patch`` states exactly what would be written.
"""
from __future__ import annotations

import re
from typing import Any

from playbooks.model import Remediation

DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_DURATION = re.compile(r"^(\d+h)?(\d+m)?(\d+s)?$|^Never$")
WORKLOAD_KINDS = ("pod", "job", "pytorchjob")
POLICIES = ("WhenEmpty", "WhenEmptyOrUnderutilized")


class InvalidRemediation(ValueError):
    pass


def annotate_do_not_disrupt(*, kind: str, namespace: str, name: str) -> Remediation:
    """Annotate the workload's pod template and, when applied, its running pods (found by the job's
    label at that time, so the proposal stays small enough for a Slack button)."""
    params = {"kind": kind, "namespace": namespace, "name": name}
    return parse({"kind": "annotate-do-not-disrupt", "target": f"{kind}/{namespace}/{name}", "params": params})


def nodepool_consolidation(*, nodepool: str, consolidate_after: str = "10m", budget_nodes: str | None = None) -> Remediation:
    params: dict[str, Any] = {"nodepool": nodepool, "consolidationPolicy": "WhenEmpty", "consolidateAfter": consolidate_after}
    if budget_nodes is not None:
        params["budgetNodes"] = budget_nodes
    return parse({"kind": "nodepool-consolidation", "target": f"nodepool/{nodepool}", "params": params})


def parse(raw: dict[str, Any]) -> Remediation:
    """Validate a proposal from untrusted data (a button payload); raise InvalidRemediation."""
    if not isinstance(raw, dict):
        raise InvalidRemediation("a remediation must be an object")
    kind, target, params = raw.get("kind"), raw.get("target"), raw.get("params")
    if not isinstance(params, dict) or not isinstance(target, str):
        raise InvalidRemediation("a remediation needs a target string and a params object")
    if kind == "annotate-do-not-disrupt":
        _check_name(params.get("namespace"), "namespace")
        _check_name(params.get("name"), "name")
        if params.get("kind") not in WORKLOAD_KINDS:
            raise InvalidRemediation(f"kind must be one of {', '.join(WORKLOAD_KINDS)}")
        if set(params) - {"kind", "namespace", "name"}:
            raise InvalidRemediation(f"unexpected params {sorted(set(params) - {'kind', 'namespace', 'name'})}")
        expected = f"{params['kind']}/{params['namespace']}/{params['name']}"
    elif kind == "nodepool-consolidation":
        _check_name(params.get("nodepool"), "nodepool")
        if params.get("consolidationPolicy") not in POLICIES:
            raise InvalidRemediation(f"consolidationPolicy must be one of {', '.join(POLICIES)}")
        if not isinstance(params.get("consolidateAfter"), str) or not _DURATION.match(params["consolidateAfter"]) or not params["consolidateAfter"]:
            raise InvalidRemediation("consolidateAfter must be a duration such as 10m or Never")
        if set(params) - {"nodepool", "consolidationPolicy", "consolidateAfter", "budgetNodes"}:
            raise InvalidRemediation("unexpected params for nodepool-consolidation")
        budget = params.get("budgetNodes")
        if budget is not None and not re.match(r"^((100|[0-9]{1,2})%|[0-9]+)$", str(budget)):
            raise InvalidRemediation("budgetNodes must be a count or a percentage")
        expected = f"nodepool/{params['nodepool']}"
    else:
        raise InvalidRemediation(f"unknown remediation kind {kind!r}")
    if target != expected:
        raise InvalidRemediation(f"target {target!r} does not match params ({expected})")
    return Remediation(kind=kind, target=target, params=dict(params))


def _check_name(value: Any, what: str) -> None:
    if not isinstance(value, str) or len(value) > 253 or not _NAME.match(value):
        raise InvalidRemediation(f"{what} {value!r} is not a valid Kubernetes name")


def merge_patch(remediation: Remediation, *, replica_types: list[str] | None = None) -> dict[str, Any]:
    """The JSON merge patch the remediation writes to its owner object (pods get the metadata part)."""
    p = remediation.params
    if remediation.kind == "nodepool-consolidation":
        disruption: dict[str, Any] = {"consolidationPolicy": p["consolidationPolicy"], "consolidateAfter": p["consolidateAfter"]}
        if p.get("budgetNodes") is not None:
            disruption["budgets"] = [{"nodes": str(p["budgetNodes"])}]
        return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": p["nodepool"]},
                "spec": {"disruption": disruption}}
    annotation = {"metadata": {"annotations": {DO_NOT_DISRUPT: "true"}}}
    meta = {"name": p["name"], "namespace": p["namespace"]}
    if p["kind"] == "pytorchjob":
        types = replica_types or ["Master", "Worker"]
        return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta,
                "spec": {"pytorchReplicaSpecs": {t: {"template": annotation} for t in types}}}
    if p["kind"] == "job":
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": {"template": annotation}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {**meta, **annotation["metadata"]}}
