"""What a remediation definition works with: references to live objects, the changes it would write
to them, and a plan (changes, their undo, a preview). All plain data: a plan is stored with its
proposal and read back by another replica, so every type round-trips through JSON."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from playbooks.model import Remediation
from playbooks.remediations.proposals import InvalidRemediation

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
PATCH_TYPES = (MERGE_PATCH, JSON_PATCH)


class NothingToDo(InvalidRemediation):
    """The live objects already are as the remediation would make them."""


@dataclass(frozen=True)
class ObjectRef:
    """One object of the cluster, as the API addresses it."""

    api_version: str  # "v1", "batch/v1", "kubeflow.org/v1", "karpenter.sh/v1", "jobset.x-k8s.io/v1alpha2"
    kind: str  # "Pod", "Job", "PyTorchJob", "NodePool", "Node"
    plural: str  # "pods", "jobs", "pytorchjobs", "nodepools", "nodes"
    name: str
    namespace: str | None = None  # None: cluster-scoped

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"

    def to_dict(self) -> dict[str, Any]:
        return {"apiVersion": self.api_version, "kind": self.kind, "plural": self.plural, "name": self.name,
                "namespace": self.namespace}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "ObjectRef":
        return cls(api_version=raw["apiVersion"], kind=raw["kind"], plural=raw["plural"], name=raw["name"],
                   namespace=raw.get("namespace"))


@dataclass(frozen=True)
class Change:
    """One patch to one object, computed from the object as read at ``resource_version``.

    ``patch`` carries no precondition; :func:`with_precondition` adds the resourceVersion at apply
    time. ``watched``: JSON pointer -> the value found there when the change was computed (None:
    absent). If any differs when the change is about to be applied, the object changed in a way that
    matters since the proposal, and the apply stops."""

    ref: ObjectRef
    patch_type: str
    patch: Any
    resource_version: str | None = None
    watched: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.ref.to_dict(), "patchType": self.patch_type, "patch": self.patch,
                "resourceVersion": self.resource_version, "watched": self.watched}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "Change":
        return cls(ref=ObjectRef.from_dict(raw["ref"]), patch_type=raw["patchType"], patch=raw["patch"],
                   resource_version=raw.get("resourceVersion"), watched=dict(raw.get("watched") or {}))


@dataclass(frozen=True)
class Plan:
    changes: tuple[Change, ...]
    undo: tuple[Change, ...]  # computed from the same reads as ``changes``: what restores them exactly
    preview: str  # a unified diff per object, before -> after, of the fields the changes touch
    summary: str  # one line: "annotate 4 pods and the PyTorchJob's 2 pod templates"

    def to_dict(self) -> dict[str, Any]:
        return {"changes": [c.to_dict() for c in self.changes], "undo": [c.to_dict() for c in self.undo],
                "preview": self.preview, "summary": self.summary}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "Plan":
        return cls(changes=tuple(Change.from_dict(c) for c in raw.get("changes") or []),
                   undo=tuple(Change.from_dict(c) for c in raw.get("undo") or []),
                   preview=raw.get("preview", ""), summary=raw.get("summary", ""))


@dataclass(frozen=True)
class Reads:
    """What to read before planning: the object the remediation names, and (a workload) its pods."""

    owner: ObjectRef
    pod_selector: str | None = None  # label selector of the workload's pods, in owner.namespace


@dataclass(frozen=True)
class Permission:
    """One RBAC permission a definition needs to apply and verify its changes."""

    group: str  # "" for the core API group
    resource: str  # plural
    verb: str


class Definition(Protocol):
    kind: str
    permissions: tuple[Permission, ...]

    def reads(self, remediation: Remediation) -> Reads: ...

    def plan(self, remediation: Remediation, owner: dict, pods: list[dict]) -> Plan:
        """The changes from the live objects; raises NothingToDo when they already are as wanted and
        InvalidRemediation when the objects do not fit (not a GPU node, an unknown job kind ...)."""

    def verify(self, change: Change, after: dict) -> str | None:
        """None when ``after`` (the object read back) shows the change; else what is missing."""


def with_precondition(change: Change) -> Any:
    """The patch body to send: the change's patch guarded by its resourceVersion, so a write computed
    from an older object fails with 409 Conflict instead of overwriting.

    A merge patch carries ``metadata.resourceVersion``; a JSON patch starts by replacing it with the
    version read. Either way the API server compares the version in the patched object with the
    stored one (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go,
    Update: "the object has been modified"). A JSON patch ``test`` op would not do: any failed op is
    answered 422 with a generic message (apiserver pkg/endpoints/handlers/patch.go, applyJSPatch)."""
    if change.resource_version is None:
        return change.patch
    if change.patch_type == JSON_PATCH:
        return [{"op": "replace", "path": "/metadata/resourceVersion", "value": change.resource_version},
                *change.patch]
    patch = dict(change.patch)
    patch["metadata"] = {**(patch.get("metadata") or {}), "resourceVersion": change.resource_version}
    return patch


def pointer_get(obj: Any, pointer: str) -> Any:
    """The value at a JSON pointer (RFC 6901), or None when any step is absent."""
    if pointer in ("", "/"):
        return obj
    node = obj
    for raw in pointer.lstrip("/").split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            node = node.get(key)
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
        if node is None:
            return None
    return node


def escape(segment: str) -> str:
    """One JSON pointer segment: ``karpenter.sh/do-not-disrupt`` -> ``karpenter.sh~1do-not-disrupt``."""
    return segment.replace("~", "~0").replace("/", "~1")
