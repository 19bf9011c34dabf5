"""The catch-all: known signatures in events and logs that no structural analyzer explained.

Scheduler and Karpenter messages about a pending pod are left to the pending analyzer when it
explained the pod (they become its evidence) and are only noise (info) while a NodePool can still
provision for it. A peer's trouble counts one severity lower than the target's own.
"""
from __future__ import annotations

from playbooks.analyzers.scan import Located, signals
from playbooks.explain import fix_context, template_for
from playbooks.facts import Facts
from playbooks.fixes import render_fix
from playbooks.model import CONFIDENCES, SEVERITIES, Evidence, Finding
from playbooks.signatures import Signal
from playbooks.signatures.details import View, describe

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
    codes = frozenset(groups)
    related = {code: dict(items[0][1].signal.fields) for code, items in groups.items()}
    for code, items in groups.items():
        finding = _finding(code, items, codes=codes, related=related)
        if finding.severity != "info" or code == "scheduling.node_lifecycle_taint":
            yield finding


def _finding(code: str, items: list[tuple[str, Located]], *, codes: frozenset[str], related: dict) -> Finding:
    """One finding for a code: the strongest signal's wording, up to five distinct evidence lines."""
    ranked = sorted(items, key=lambda item: (SEVERITIES.index(item[0]), CONFIDENCES.index(item[1].signal.confidence)))
    severity, best = ranked[0][0], ranked[0][1].signal
    values: dict[str, tuple[str, ...]] = {}
    evidence: list[Evidence] = []
    for _, loc in ranked:
        sig: Signal = loc.signal
        for name, value in sig.fields.items():
            if value not in values.get(name, ()):
                values[name] = values.get(name, ()) + (value,)
        if len(evidence) < 5 and all(e.text != sig.line for e in evidence):
            evidence.append(Evidence(source=sig.source, text=sig.line))
    view = View(code=code, fields=dict(best.fields), values=values, count=len(items), confidence=best.confidence,
                codes=codes, related=related, nominated="Pod should schedule on" in " ".join(l.signal.line for _, l in items))
    return Finding(code=code, severity=severity, confidence=best.confidence, title=best.title, detail=describe(view),
                   evidence=evidence, fix=render_fix(template_for(code), **fix_context(code, best.fields)))


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
        if loc.pod is not None and loc.pod.name not in pending and loc.origin in ("event", "condition"):
            return "info"  # FailedScheduling from before the pod was placed: history, not the problem
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
