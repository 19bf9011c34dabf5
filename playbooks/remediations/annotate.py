"""annotate-do-not-disrupt: ``karpenter.sh/do-not-disrupt: "true"`` on a job's running pods, so
Karpenter does not voluntarily disrupt their nodes, and on its pod template(s), so pods it creates
later carry it too.

What counts as already protected is what Karpenter counts (``protection``): a running pod with "true"
or a duration that has not run out is left alone; one whose duration ran out, or whose value Karpenter
ignores ("True", "yes"), gets "true", and the undo puts its old value back. An explicit "false" is the
owner's own opt-out and is left alone. A pod template keeps any value Karpenter reads ("true" or a
duration, which counts from each new pod's start) and "false"; an unreadable one is replaced the
same way."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from playbooks.model import Remediation
from playbooks.remediations.diff import join, object_diff, project
from playbooks.remediations.model import (
    JSON_PATCH, MERGE_PATCH, Change, NothingToDo, ObjectRef, Permission, Plan, Reads, escape,
)
from playbooks.remediations.proposals import DO_NOT_DISRUPT, InvalidRemediation
from playbooks.remediations.protection import is_protected, valid_value
from playbooks.remediations.readback import verify_change

VALUE = "true"
FINISHED = ("Succeeded", "Failed")

# The label each controller puts on the pods it creates, naming their job:
# - Kubeflow training-operator (PyTorchJob, TFJob): JobNameLabel in
#   kubeflow/training-operator pkg/apis/kubeflow.org/v1/common_types.go;
# - MPI operator v2 (MPIJob v2beta1): the same JobNameLabel in
#   kubeflow/mpi-operator pkg/apis/kubeflow/v2beta1/constants.go;
# - Job controller: JobNameLabel in kubernetes/kubernetes staging/src/k8s.io/api/batch/v1/types.go
#   (since 1.27; it still sets the unprefixed legacy "job-name" beside it, which older pods carry alone);
# - JobSet: JobSetNameKey in kubernetes-sigs/jobset api/jobset/v1alpha2/jobset_types.go.
KUBEFLOW_JOB_NAME = "training.kubeflow.org/job-name"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME = "job-name"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"


@dataclass(frozen=True)
class Workload:
    api_version: str
    kind: str
    plural: str
    pod_labels: tuple[str, ...]  # first: the selector; the rest are also accepted when planning
    replica_specs: str | None = None  # Kubeflow: the map of replica type -> {template}


WORKLOADS = {
    "pytorchjob": Workload("kubeflow.org/v1", "PyTorchJob", "pytorchjobs", (KUBEFLOW_JOB_NAME,), "pytorchReplicaSpecs"),
    "tfjob": Workload("kubeflow.org/v1", "TFJob", "tfjobs", (KUBEFLOW_JOB_NAME,), "tfReplicaSpecs"),
    "mpijob": Workload("kubeflow.org/v2beta1", "MPIJob", "mpijobs", (KUBEFLOW_JOB_NAME,), "mpiReplicaSpecs"),
    "job": Workload("batch/v1", "Job", "jobs", (JOB_NAME, LEGACY_JOB_NAME)),
    "jobset": Workload("jobset.x-k8s.io/v1alpha2", "JobSet", "jobsets", (JOBSET_NAME,)),
    "pod": Workload("v1", "Pod", "pods", ()),
}


@dataclass(frozen=True)
class Site:
    """One place the annotation goes: an object's root (a pod) or one of its pod templates."""

    path: tuple[str, ...]  # segments to the object holding ``metadata``; () for a pod
    label: str  # how the preview and summary name it: "Worker", "replicatedJobs[0] workers"
    guard: tuple[str, str] | None = None  # (pointer, value) proving a list item is still the one read

    def annotations(self) -> tuple[str, ...]:
        return (*self.path, "metadata", "annotations")


class AnnotateDoNotDisrupt:
    kind = "annotate-do-not-disrupt"
    permissions = tuple(
        Permission(group=w.api_version.rpartition("/")[0], resource=w.plural, verb=verb)
        for w in WORKLOADS.values() for verb in ("get", "patch")
    ) + (Permission(group="", resource="pods", verb="list"),)

    def reads(self, remediation: Remediation) -> Reads:
        workload = _workload(remediation)
        p = remediation.params
        owner = ObjectRef(workload.api_version, workload.kind, workload.plural, p["name"], p["namespace"])
        selector = f"{workload.pod_labels[0]}={p['name']}" if workload.pod_labels else None
        return Reads(owner=owner, pod_selector=selector)

    def plan(self, remediation: Remediation, owner: dict, pods: list[dict], *, now: datetime | None = None) -> Plan:
        workload = _workload(remediation)
        ref = self.reads(remediation).owner
        _check_owner(owner, ref)
        if workload.kind == "Pod":
            if _finished(owner):
                raise InvalidRemediation(f"{ref} has finished ({owner['status']['phase']}): there is nothing left to protect")
            if _settled(owner, now=now):
                raise NothingToDo(f"{ref} already carries {DO_NOT_DISRUPT}")
            return self._plan([], pods=[(ref, owner)], ref=ref, skipped=None, already=0)
        sites, skipped = _template_sites(workload, owner)
        live = [pod for pod in pods if _belongs(pod, workload, ref) and not _finished(pod)]
        missing = [pod for pod in live if not _settled(pod, now=now)]
        pod_refs = [(ObjectRef("v1", "Pod", "pods", pod["metadata"]["name"], ref.namespace), pod) for pod in missing]
        owner_sites = [s for s in sites if not _settled_value((_at(owner, s.annotations()) or {}).get(DO_NOT_DISRUPT))]
        return self._plan([(ref, owner, owner_sites, workload)] if owner_sites else [], pods=pod_refs, ref=ref,
                          skipped=skipped, already=len(live) - len(missing))

    def _plan(self, owners: list, *, pods: list[tuple[ObjectRef, dict]], ref: ObjectRef, skipped: str | None,
              already: int) -> Plan:
        changes, undo, owner_diffs, pod_diffs = [], [], [], []
        templates = 0
        for owner_ref, obj, sites, workload in owners:
            change, back, diff = _annotate(owner_ref, obj, sites, json_patch=workload.kind == "JobSet")
            changes.append(change)
            undo.append(back)
            owner_diffs.append(diff)
            templates += len(sites)
        for pod_ref, pod in pods:
            change, back, diff = _annotate(pod_ref, pod, [Site((), "pod")], json_patch=False)
            changes.append(change)
            undo.append(back)
            pod_diffs.append(diff)
        if not changes:
            what = f"{ref} already carries" if ref.kind == "Pod" else f"every running pod and pod template of {_name(ref)} already carries"
            raise NothingToDo(f"{what} {DO_NOT_DISRUPT}" + (f" ({skipped})" if skipped else ""))
        return Plan(changes=tuple(changes), undo=tuple(undo), preview=join(owner_diffs, pod_diffs),
                    summary=_summary(ref, pods=len(pod_diffs), templates=templates, already=already, skipped=skipped))

    def verify(self, change: Change, after: dict) -> str | None:
        return verify_change(change, after)


OPT_OUT = "false"


def _settled(pod: dict, *, now: datetime | None) -> bool:
    """Protected as Karpenter reads it now, or explicitly opted out by its owner."""
    return is_protected(pod, now=now) or _annotations(pod).get(DO_NOT_DISRUPT) == OPT_OUT


def _settled_value(value: object) -> bool:
    return value == OPT_OUT or valid_value(value)


def _workload(remediation: Remediation) -> Workload:
    kind = remediation.params.get("kind")
    if kind not in WORKLOADS:
        raise InvalidRemediation(f"cannot annotate a {kind!r}: one of {', '.join(WORKLOADS)}")
    return WORKLOADS[kind]


def _check_owner(owner: dict, ref: ObjectRef) -> None:
    meta = owner.get("metadata") or {}
    if owner.get("kind") != ref.kind or meta.get("name") != ref.name or meta.get("namespace") != ref.namespace:
        raise InvalidRemediation(f"expected {ref}, read {owner.get('kind')} {meta.get('namespace')}/{meta.get('name')}")


def _template_sites(workload: Workload, owner: dict) -> tuple[list[Site], str | None]:
    """The owner's pod templates that may change now; and why none may, when that is so."""
    spec = owner.get("spec") or {}
    if workload.replica_specs:
        replicas = spec.get(workload.replica_specs) or {}
        return [Site(("spec", workload.replica_specs, name, "template"), name)
                for name, replica in replicas.items() if isinstance((replica or {}).get("template"), dict)], None
    if workload.kind == "Job":
        # A Job's pod template is immutable, except labels, annotations and scheduling directives of a
        # suspended Job that never started (kubernetes pkg/registry/batch/job/strategy.go,
        # AllowMutableSchedulingDirectives).
        if spec.get("suspend") is True and not (owner.get("status") or {}).get("startTime"):
            return [Site(("spec", "template"), "template")], None
        return [], "a started Job's pod template cannot change: pods it creates later will not carry it"
    # The JobSet webhook rejects any change to spec.replicatedJobs, except pod template labels,
    # annotations, node selector, tolerations and scheduling gates of a suspended JobSet
    # (kubernetes-sigs/jobset ValidateUpdate).
    if spec.get("suspend") is True:
        return [Site(("spec", "replicatedJobs", str(i), "template", "spec", "template"), f"replicatedJobs[{i}] {rj.get('name')}",
                     guard=(f"/spec/replicatedJobs/{i}/name", rj.get("name")))
                for i, rj in enumerate(spec.get("replicatedJobs") or [])], None
    return [], "a running JobSet's pod templates cannot change: pods it creates later will not carry it"


def _belongs(pod: dict, workload: Workload, ref: ObjectRef) -> bool:
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    return meta.get("namespace") == ref.namespace and any(labels.get(key) == ref.name for key in workload.pod_labels)


def _finished(pod: dict) -> bool:
    return ((pod.get("status") or {}).get("phase") in FINISHED) or bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _annotations(obj: dict) -> dict:
    return (obj.get("metadata") or {}).get("annotations") or {}


def _at(obj: Any, segments: tuple[str, ...]) -> Any:
    for segment in segments:
        if isinstance(obj, dict):
            obj = obj.get(segment)
        elif isinstance(obj, list) and segment.isdigit() and int(segment) < len(obj):
            obj = obj[int(segment)]
        else:
            return None
    return obj


def pointer(segments: tuple[str, ...]) -> str:
    return "".join(f"/{escape(s)}" for s in segments)


def _created(obj: dict, site: Site) -> tuple[tuple[str, ...], Any]:
    """Where the annotation goes in, as the outermost thing that does not exist yet and its value:
    the key in an existing map, else the map, else the template's metadata. The undo removes exactly
    that, so the object reads as before, byte for byte."""
    value: Any = VALUE
    segments = (*site.annotations(), DO_NOT_DISRUPT)
    for parent in (site.annotations(), (*site.path, "metadata")):
        if isinstance(_at(obj, parent), dict):
            break
        value = {segments[-1]: value}
        segments = parent
    return segments, value


def _annotate(ref: ObjectRef, obj: dict, sites: list[Site], *, json_patch: bool) -> tuple[Change, Change, str]:
    """The change to one object (all its sites at once), its undo and its preview."""
    forward: list[dict] = []
    merge: dict[str, Any] = {}
    back: list[dict] = []
    watched: dict[str, Any] = {}
    after = copy.deepcopy(obj)
    for site in sites:
        old = (_at(obj, site.annotations()) or {}).get(DO_NOT_DISRUPT)
        segments, value = _created(obj, site)
        guard = [{"op": "test", "path": site.guard[0], "value": site.guard[1]}] if site.guard else []
        forward += [*guard, {"op": "add", "path": pointer(segments), "value": value}]
        _put(merge, (*site.annotations(), DO_NOT_DISRUPT), VALUE)
        _put(after, segments, copy.deepcopy(value))
        # a value Karpenter no longer honours is replaced; the undo writes it back as it was
        restore = {"op": "replace", "path": pointer(segments), "value": old} if old is not None else {"op": "remove", "path": pointer(segments)}
        back += [*guard, {"op": "test", "path": pointer(segments), "value": value}, restore]
        watched[pointer(segments)] = old
        if site.path:  # a template: another hand on its annotations since the proposal matters too
            watched[pointer(site.annotations())] = _at(obj, site.annotations())
        if site.guard:
            watched[site.guard[0]] = site.guard[1]
    version = (obj.get("metadata") or {}).get("resourceVersion")
    change = Change(ref=ref, patch_type=JSON_PATCH if json_patch else MERGE_PATCH, patch=forward if json_patch else merge,
                    resource_version=version, watched=watched)
    undo = Change(ref=ref, patch_type=JSON_PATCH, patch=back,
                  watched={pointer((*s.annotations(), DO_NOT_DISRUPT)): VALUE for s in sites})
    paths = [list(s.annotations()) for s in sites]
    return change, undo, object_diff(ref, project(obj, paths), project(after, paths))


def _put(obj: Any, segments: tuple[str, ...], value: Any) -> None:
    for segment in segments[:-1]:
        if isinstance(obj, list):
            obj = obj[int(segment)]
        else:
            obj = obj.setdefault(segment, {})
    if isinstance(obj, list):
        obj[int(segments[-1])] = value
    else:
        obj[segments[-1]] = value


def _name(ref: ObjectRef) -> str:
    return f"{ref.kind.lower()} {ref.namespace}/{ref.name}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _summary(ref: ObjectRef, *, pods: int, templates: int, already: int, skipped: str | None) -> str:
    if ref.kind == "Pod":
        return f"annotate pod {ref.namespace}/{ref.name} with {DO_NOT_DISRUPT}"
    parts = [_count(pods, "running pod")] if pods else []
    parts += [_count(templates, "pod template")] if templates else []
    text = f"annotate {' and '.join(parts)} of {_name(ref)}"
    notes = [f"{already} already carr{'ies' if already == 1 else 'y'} it"] if already else []
    notes += [skipped] if skipped else []
    return text + (f" ({'; '.join(notes)})" if notes else "")
