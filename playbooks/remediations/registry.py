"""The one registry of remediation definitions, by kind, and the RBAC they need together (the
Helm chart's ClusterRole gpubot-remediate is checked against ``permissions()``)."""
from __future__ import annotations

from datetime import datetime

from playbooks.model import Remediation
from playbooks.remediations.annotate import AnnotateDoNotDisrupt
from playbooks.remediations.consolidation import NodePoolConsolidation
from playbooks.remediations.cordon import CordonGpuNode
from playbooks.remediations.model import Definition, Permission, Plan
from playbooks.remediations.proposals import InvalidRemediation

DEFINITIONS: dict[str, Definition] = {d.kind: d for d in (AnnotateDoNotDisrupt(), NodePoolConsolidation(), CordonGpuNode())}


def definition(kind: str) -> Definition:
    try:
        return DEFINITIONS[kind]
    except KeyError:
        raise InvalidRemediation(f"unknown remediation kind {kind!r}: one of {', '.join(DEFINITIONS)}") from None


def plan(remediation: Remediation, owner: dict, pods: list[dict], *, now: datetime | None = None) -> Plan:
    """The remediation's plan from the live objects its definition's ``reads`` named. ``now``: the
    moment a do-not-disrupt duration is judged at (the present when None)."""
    if now is not None and remediation.kind == "annotate-do-not-disrupt":
        return definition(remediation.kind).plan(remediation, owner, pods, now=now)
    return definition(remediation.kind).plan(remediation, owner, pods)


def permissions() -> list[Permission]:
    """Every permission any definition needs, once each, sorted by group, resource and verb."""
    unique = {p for d in DEFINITIONS.values() for p in d.permissions}
    return sorted(unique, key=lambda p: (p.group, p.resource, p.verb))
