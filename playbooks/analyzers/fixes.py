"""Where a pod-level fix belongs: the PyTorchJob or Job that owns the pod, or the pod itself.

``owner_patch`` wraps a pod-spec fragment into a partial manifest of the owner (a JSON merge patch),
so a fix snippet is something people can apply or merge, and tests can validate against the schema.
"""
from __future__ import annotations

from typing import Any

from playbooks.facts import PodFacts

KUBEFLOW_JOB = "training.kubeflow.org/job-name"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
BATCH_JOB = ("batch.kubernetes.io/job-name", "job-name")
REPLICA_NAMES = {"master": "Master", "worker": "Worker"}


def owner_of(pod: PodFacts) -> tuple[str, str, str]:
    """(apiVersion, kind, name) of the object whose pod template should change."""
    labels = pod.labels
    if labels.get(KUBEFLOW_JOB):
        return "kubeflow.org/v1", "PyTorchJob", labels[KUBEFLOW_JOB]
    for key in BATCH_JOB:
        if labels.get(key):
            return "batch/v1", "Job", labels[key]
    return "v1", "Pod", pod.name


def owner_patch(pod: PodFacts, spec: dict[str, Any] | None = None, *, metadata: dict[str, Any] | None = None,
                replica_types: list[str] | None = None) -> dict[str, Any]:
    """Template context: the partial manifest plus how to apply it."""
    api_version, kind, name = owner_of(pod)
    template: dict[str, Any] = {}
    if metadata:
        template["metadata"] = metadata
    if spec:
        template["spec"] = spec
    if kind == "PyTorchJob":
        types = replica_types or [REPLICA_NAMES.get(pod.labels.get(REPLICA_TYPE, "").lower(), "Worker")]
        body = {"pytorchReplicaSpecs": {t: {"template": template} for t in types}}
    elif kind == "Job":
        body = {"template": template}
    else:
        body = dict(spec or {})
    patch: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": pod.namespace}}
    if kind == "Pod" and metadata:
        patch["metadata"].update(metadata)
    if body:
        patch["spec"] = body
    return {"patch": patch, "kind": kind, "name": name, "namespace": pod.namespace, "apply": _apply(kind, name, pod.namespace)}


def _apply(kind: str, name: str, namespace: str) -> str:
    if kind == "PyTorchJob":
        return (f"kubectl patch pytorchjob {name} -n {namespace} --type merge --patch-file fix.yaml "
                f"&& kubectl delete pod -n {namespace} -l {KUBEFLOW_JOB}={name} --field-selector status.phase=Pending")
    if kind == "Job":
        return f"Job pod templates are immutable: merge this into the Job manifest, then kubectl delete job {name} -n {namespace} && kubectl apply -f job.yaml"
    return f"Pod specs are immutable: merge this into the pod manifest, then kubectl delete pod {name} -n {namespace} && kubectl apply -f pod.yaml"
