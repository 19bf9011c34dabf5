"""The catch-all: known signatures in events and logs that no structural analyzer explained.

Scheduler and Karpenter messages about a pending pod are left to the pending analyzer when it
explained the pod (they become its evidence) and are only noise (info) while a NodePool can still
provision for it. A peer's trouble counts one severity lower than the target's own.
"""
from __future__ import annotations

from playbooks.analyzers.scan import Located, signals
from playbooks.explain import finding_from_signals
from playbooks.facts import Facts
from playbooks.model import SEVERITIES

PROVISIONING_PREFIXES = ("scheduling.", "karpenter.", "efa.resource_unavailable")
NOT_PROVISIONING = ("karpenter.disruption",)


def _provisioning(code: str) -> bool:
    return code.startswith(PROVISIONING_PREFIXES) and code not in NOT_PROVISIONING


def analyze(facts: Facts):
    explained: set[str] = facts.cache.get("pending_explained", set())
    provisionable: set[str] = facts.cache.get("pending_ok", set())
    pending = {p.name for p in facts.pending_pods()}
    groups: dict[str, list[tuple[str, Located]]] = {}
    for loc in signals(facts):
        severity = _severity(loc, facts, explained=explained, provisionable=provisionable, pending=pending)
        if severity is not None:
            groups.setdefault(loc.signal.code, []).append((severity, loc))
    for code, items in groups.items():
        yield finding_from_signals([loc.signal for _, loc in items], severities=[s for s, _ in items])


def _severity(loc: Located, facts: Facts, *, explained: set[str], provisionable: set[str], pending: set[str]) -> str | None:
    """The severity this signal counts with here, or None when another analyzer owns it."""
    sig = loc.signal
    severity = sig.severity
    if _provisioning(sig.code):
        about = _pending_pods_named(loc, pending)
        if about and about <= explained:
            return None  # already the evidence of a structural finding
        if about and about <= provisionable:
            return "info"  # scheduler noise while Karpenter brings a node
        if loc.origin == "owner-event" and pending and pending <= (explained | provisionable):
            return None if pending <= explained else "info"
    if loc.pod is not None and not facts.is_target_pod(loc.pod):
        severity = _lower(severity)
    return severity


def _pending_pods_named(loc: Located, pending: set[str]) -> set[str]:
    if loc.pod is not None:
        return {loc.pod.name} & pending
    if loc.origin == "karpenter":
        return {name for name in pending if name in loc.signal.line}
    return set()


def _lower(severity: str) -> str:
    return SEVERITIES[min(SEVERITIES.index(severity) + 1, len(SEVERITIES) - 1)]
