"""Where a pod-level fix belongs: the workload that owns the pod (PyTorchJob, TFJob, MPIJob, JobSet,
TrainJob, Job), or the pod itself.

``owner_patch`` wraps a pod-spec fragment into a partial manifest of the owner at the path its API
keeps pod templates (a JSON merge patch), so a fix snippet is something people can apply or merge, and
tests can validate it against the schema. A fragment copied from the live pod loses what the cluster
injected there first (``injected.clean_pod_spec``).
"""
from __future__ import annotations

import shlex
from typing import Any

from playbooks.analyzers.evidence import event_time
from playbooks.analyzers.injected import clean_metadata, clean_pod_spec
from playbooks.analyzers.owners import KUBEFLOW_JOB, JOBSET_NAME, TRAINER_NODE, Owner, pod_owner, pod_selector
from playbooks.facts import Facts, PodFacts
from playbooks.fix_values import one_line
from playbooks.karpenter.nodeclaim import nominated_claims

# kubeflow/trainer pkg/apis/trainer/v1alpha1/trainjob_types.go (v2.1): PodTemplateSpecOverride and
# ContainerOverride, the only pod fields a TrainJob may override; resources go to spec.trainer.
TRAINJOB_SPEC_FIELDS = ("serviceAccountName", "nodeSelector", "affinity", "tolerations", "volumes",
                        "initContainers", "containers", "schedulingGates", "imagePullSecrets")
TRAINJOB_CONTAINER_FIELDS = ("env", "volumeMounts")


NODEPOOL_LABEL = "karpenter.sh/nodepool"


def known_names(facts: Facts, pod: PodFacts | None) -> dict[str, str]:
    """The objects a generic fix may name because the cluster showed them for ``pod``: its namespace, name
    and node, its NodePool (its node's karpenter.sh/nodepool label, else the NodeClaim Karpenter nominated it
    to, else the NodePool its nodeSelector names) and that NodePool's NodeClass, its only container. A name
    the cluster did not show is left out: the template then says how to look it up."""
    if pod is None:
        return {}
    known = {"namespace": pod.namespace, "pod": pod.name}
    if pod.node_name:
        known["node"] = pod.node_name
    containers = (pod.pod.get("spec") or {}).get("containers") or []
    if len(containers) == 1 and containers[0].get("name"):
        known["container"] = containers[0]["name"]
    nodepool = _nodepool_of(facts, pod)
    if nodepool:
        known["nodepool"] = nodepool
        ref = ((((facts.nodepools.get(nodepool) or {}).get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeClassRef") or {}
        if ref.get("name") and ref.get("group", "karpenter.k8s.aws") == "karpenter.k8s.aws":
            known["nodeclass"] = ref["name"]
    return known


def _nodepool_of(facts: Facts, pod: PodFacts) -> str | None:
    node = facts.node_of(pod)
    label = (((node or {}).get("metadata") or {}).get("labels") or {}).get(NODEPOOL_LABEL)
    if label:
        return label
    nominations = sorted((e for e in pod.events if e.get("reason") == "Nominated"), key=event_time, reverse=True)
    for event in nominations:  # the latest nomination first
        for claim in nominated_claims(event.get("message") or event.get("note") or ""):
            label = (((facts.nodeclaims.get(claim) or {}).get("metadata") or {}).get("labels") or {}).get(NODEPOOL_LABEL)
            if label:
                return label
    return ((pod.pod.get("spec") or {}).get("nodeSelector") or {}).get(NODEPOOL_LABEL)


def owner_of(pod: PodFacts) -> tuple[str, str, str]:
    """(apiVersion, kind, name) of the object whose pod template should change."""
    owner = pod_owner(pod)
    return owner.api_version, owner.kind, owner.name


def owner_patch(pod: PodFacts, spec: dict[str, Any] | None = None, *, metadata: dict[str, Any] | None = None,
                replica_types: list[str] | None = None) -> dict[str, Any]:
    """Template context: the partial manifest plus how to apply it."""
    owner = pod_owner(pod)
    spec = clean_pod_spec(spec) if spec else None
    metadata = clean_metadata(metadata) if metadata else None
    template: dict[str, Any] = {}
    if metadata:
        template["metadata"] = metadata
    if spec:
        template["spec"] = spec
    left_out: list[str] = []
    workload = owner.workload
    if workload.replica_specs:
        types = replica_types or [owner.replica or "Worker"]
        body: dict[str, Any] = {workload.replica_specs: {t: {"template": template} for t in types}}
    elif owner.key == "jobset":
        # A merge patch replaces lists whole: this names the replicated job to merge into by hand.
        body = {"replicatedJobs": [{"name": t, "template": {"spec": {"template": template}}}
                                   for t in (replica_types or [owner.replica or "workers"])]}
    elif owner.key == "trainjob":
        body, left_out = _trainjob_body(owner, spec or {}, metadata)
    elif owner.key == "job":
        body = {"template": template}
    else:
        body = dict(spec or {})
    patch: dict[str, Any] = {"apiVersion": owner.api_version, "kind": owner.kind,
                             "metadata": {"name": owner.name, "namespace": pod.namespace}}
    if owner.key == "pod" and metadata:
        patch["metadata"].update(metadata)
    if body:
        patch["spec"] = body
    return {"patch": patch, "kind": owner.kind, "name": owner.name, "namespace": pod.namespace,
            "apply": _apply(owner, pod.namespace, left_out)}


def _trainjob_body(owner: Owner, spec: dict[str, Any], metadata: dict[str, Any] | None) -> tuple[dict, list[str]]:
    """spec.podTemplateOverrides for the pod's replicated job; container resources of the trainer
    node as spec.trainer.resourcesPerNode. What a TrainJob cannot override is returned by name."""
    target = owner.replica or TRAINER_NODE
    override_spec = {k: v for k, v in spec.items() if k in TRAINJOB_SPEC_FIELDS and k not in ("containers", "initContainers")}
    left_out = sorted(k for k in spec if k not in TRAINJOB_SPEC_FIELDS)
    body: dict[str, Any] = {}
    for section in ("initContainers", "containers"):
        overrides = []
        for container in spec.get(section) or []:
            kept = {k: container[k] for k in TRAINJOB_CONTAINER_FIELDS if k in container}
            if kept:
                overrides.append({"name": container.get("name"), **kept})
            if section == "containers" and container.get("resources") and target == TRAINER_NODE:
                body.setdefault("trainer", {})["resourcesPerNode"] = container["resources"]
            left_out += [f"{section}[{container.get('name')}].{k}" for k in container
                         if k not in (*TRAINJOB_CONTAINER_FIELDS, "name") and not (k == "resources" and target == TRAINER_NODE)]
        if overrides:
            override_spec[section] = overrides
    override: dict[str, Any] = {"targetJobs": [{"name": target}]}
    if metadata:
        override["metadata"] = metadata
    if override_spec:
        override["spec"] = override_spec
    if len(override) > 1:
        body["podTemplateOverrides"] = [override]
    return body, left_out


def _apply(owner: Owner, namespace: str, left_out: list[str]) -> str:
    """How to apply the patch, the shell command last; names are shell-quoted (an ownerReference's name
    is whatever its writer put there)."""
    name, ns, key = shlex.quote(owner.name), shlex.quote(namespace), owner.key
    if key in ("pytorchjob", "tfjob", "mpijob"):
        return (f"kubectl patch {key} {name} -n {ns} --type merge --patch-file fix.yaml "
                f"&& kubectl delete pod -n {ns} -l {shlex.quote(f'{KUBEFLOW_JOB}={owner.name}')} "
                f"--field-selector status.phase=Pending")
    if key == "jobset":
        return (f"A running JobSet's pod templates are immutable (only a suspended one takes label, annotation and "
                f"scheduling changes): merge this into the JobSet manifest's replicatedJobs entry of that name, then "
                f"kubectl delete jobset {name} -n {ns} && kubectl apply -f jobset.yaml")
    if key == "trainjob":
        text = f"TrainJob specs are immutable (its JobSet {JOBSET_NAME}={one_line(owner.name)} goes with it)"
        if left_out:
            text += f"; {', '.join(left_out)} cannot be overridden by a TrainJob: change them in its TrainingRuntime"
        return text + f": merge this into the TrainJob manifest, then kubectl delete trainjob {name} -n {ns} && kubectl apply -f trainjob.yaml"
    if key == "job":
        return f"Job pod templates are immutable: merge this into the Job manifest, then kubectl delete job {name} -n {ns} && kubectl apply -f job.yaml"
    return f"Pod specs are immutable: merge this into the pod manifest, then kubectl delete pod {name} -n {ns} && kubectl apply -f pod.yaml"


__all__ = ["known_names", "owner_of", "owner_patch", "pod_owner", "pod_selector"]
