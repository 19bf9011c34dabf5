"""The mechanics of one approved change: read the live objects again, stop if what the change
touches moved since the proposal, dry-run every patch on the server, apply with the resourceVersion
precondition, read back and verify; and the undo, computed from the objects as they were just before.

Each step's outcome is one result per object (``{"object", "result", "reason"}``), so a change across
many pods is reported pod by pod and never left half done without saying so."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.gateway.kube import ClusterGateway
from bot.gateway.writes import WriteFailed
from playbooks.gather import ReadFailed
from playbooks.model import Remediation
from playbooks.remediations.model import Change, Definition, NothingToDo, ObjectRef, Plan, pointer_get, with_precondition

MAX_PODS = 500


@dataclass
class Applied:
    ok: bool
    results: list[dict[str, Any]] = field(default_factory=list)
    undo: list[dict[str, Any]] = field(default_factory=list)  # Change.to_dict() of what an undo writes
    stopped: str | None = None  # why nothing was written (changed since the proposal, dry run refused ...)


def read_live(gateway: ClusterGateway, definition: Definition, remediation: Remediation) -> tuple[dict, list[dict]]:
    """The object the remediation names and (a workload) its pods, as they are now."""
    reads = definition.reads(remediation)
    owner = gateway.read_object(reads.owner)
    if owner is None:
        raise LookupError(f"{reads.owner} no longer exists")
    pods: list[dict] = []
    if reads.pod_selector is not None and reads.owner.namespace is not None:
        pods = list(gateway.pods_matching(reads.owner.namespace, reads.pod_selector, max_items=MAX_PODS))
    return owner, pods


def plan_now(gateway: ClusterGateway, definition: Definition, remediation: Remediation) -> Plan:
    owner, pods = read_live(gateway, definition, remediation)
    return definition.plan(remediation, owner, pods)


def _by_ref(owner: dict, pods: list[dict]) -> dict[tuple[str, str | None, str], dict]:
    def key(obj: dict) -> tuple[str, str | None, str]:
        meta = obj.get("metadata") or {}
        return obj.get("kind") or "", meta.get("namespace"), meta.get("name") or ""

    return {key(o): o for o in [owner, *pods]}


def _moved(proposed: Plan, owner: dict, pods: list[dict]) -> str | None:
    """What the proposal's changes touch and now differs from when it was proposed; None if nothing."""
    live = _by_ref(owner, pods)
    for change in proposed.changes:
        obj = live.get((change.ref.kind, change.ref.namespace, change.ref.name))
        if obj is None:
            continue  # a pod that finished since: nothing to change on it
        for pointer, was in change.watched.items():
            if pointer_get(obj, pointer) != was:
                return f"{change.ref} changed since the proposal ({pointer or '/'})"
    return None


def _result(ref: ObjectRef, result: str, reason: str = "") -> dict[str, Any]:
    return {"object": str(ref), "result": result, "reason": reason}


def apply(gateway: ClusterGateway, definition: Definition, remediation: Remediation, proposed: Plan) -> Applied:
    try:
        owner, pods = read_live(gateway, definition, remediation)
    except LookupError as exc:
        return Applied(ok=False, stopped=f"{exc}: nothing was changed")
    except (ReadFailed, WriteFailed) as exc:
        return Applied(ok=False, stopped=f"could not read the target again ({exc}): nothing was changed")
    moved = _moved(proposed, owner, pods)
    if moved is not None:
        return Applied(ok=False, stopped=f"{moved}: nothing was changed; request a fresh proposal")
    try:
        plan = definition.plan(remediation, owner, pods)
    except NothingToDo as exc:
        return Applied(ok=True, results=[{"object": remediation.target, "result": "already in place",
                                          "reason": str(exc)}])
    for change in plan.changes:  # the server checks every patch (schema, admission) before any is written
        try:
            gateway.patch_object(change.ref, with_precondition(change), patch_type=change.patch_type, dry_run=True)
        except WriteFailed as exc:
            return Applied(ok=False, results=[_result(change.ref, "dry run refused", str(exc))],
                           stopped=f"the server's dry run refused the change to {change.ref}: nothing was changed")
    undo_of: dict[ObjectRef, list[Change]] = {}
    for change in plan.undo:
        undo_of.setdefault(change.ref, []).append(change)
    applied = Applied(ok=True)
    for change in plan.changes:
        try:
            gateway.patch_object(change.ref, with_precondition(change), patch_type=change.patch_type)
        except WriteFailed as exc:
            applied.ok = False
            applied.results.append(_result(change.ref, "failed", str(exc)))
            continue
        applied.undo.extend(u.to_dict() for u in undo_of.get(change.ref, []))
        try:
            problem = definition.verify(change, gateway.read_object(change.ref) or {})
        except (ReadFailed, WriteFailed) as exc:
            problem = f"could not read it back ({exc})"
        if problem is not None:
            applied.ok = False
            applied.results.append(_result(change.ref, "not verified", problem))
        else:
            applied.results.append(_result(change.ref, "applied"))
    return applied


def undo(gateway: ClusterGateway, changes: list[Change]) -> tuple[bool, list[dict[str, Any]]]:
    """Write the undo patches; each carries its own ``test`` of what gpubot wrote, so an object someone
    changed since is left alone and reported."""
    results, ok = [], True
    for change in changes:
        try:
            gateway.patch_object(change.ref, change.patch, patch_type=change.patch_type)
            results.append(_result(change.ref, "restored"))
        except WriteFailed as exc:
            ok = False
            results.append(_result(change.ref, "not restored", str(exc)))
    return ok, results
