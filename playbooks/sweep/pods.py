"""GPU pods Pending longer than a threshold, grouped by the job they belong to.

Selecting and grouping is here; the diagnosis of each group is the same engine `/gpu why-pending`
runs (bot/alerts/sweep.py calls it), and its first finding becomes the Problem: 64 pending pods of one
job are one problem about the job, with the count in the title.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from playbooks.model import Diagnosis, Target
from playbooks.problems import Problem
from playbooks.sweep.objects import accelerators, meta, name_of, seconds_since, show_age, workload

MAX_EVIDENCE = 5
# Kinds the diagnosis engine resolves by name (bot/targets.py); other workloads are diagnosed through
# one of their pods.
DIAGNOSABLE = ("pod", "job", "pytorchjob")


@dataclass(frozen=True)
class PendingGroup:
    kind: str  # pytorchjob, job, jobset, ..., or pod for a bare pod
    namespace: str
    name: str
    pods: tuple[str, ...]  # pending accelerator pods of the group, oldest first
    pending_for: float  # seconds, the oldest pod
    nodepool: str | None = None  # the NodePool the pods select, when they name one

    @property
    def target(self) -> Target:
        return Target(kind=self.kind, name=self.name, namespace=self.namespace)

    @property
    def group(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"

    @property
    def diagnose_target(self) -> str:
        """What to hand the diagnosis engine: the job itself when it resolves jobs of this kind."""
        return f"{self.kind}/{self.name}" if self.kind in DIAGNOSABLE else f"pod/{self.pods[0]}"

    def describe(self) -> str:
        if self.kind == "pod":
            return f"pod {self.namespace}/{self.name}"
        count = len(self.pods)
        return f"{self.kind} {self.namespace}/{self.name} ({count} accelerator pod{'s' if count != 1 else ''})"


def pending_groups(pods: list[dict], *, now: datetime, pending_after: float) -> list[PendingGroup]:
    """Pending pods asking for accelerators, Pending for at least ``pending_after`` seconds, by job;
    oldest first, so a bounded sweep diagnoses the same groups every time."""
    found: dict[tuple[str, str, str], list[tuple[float, dict]]] = {}
    for pod in pods:
        if (pod.get("status") or {}).get("phase") != "Pending" or meta(pod).get("deletionTimestamp"):
            continue
        if not accelerators(pod):
            continue
        age = seconds_since(meta(pod).get("creationTimestamp"), now)
        if age is None or age < pending_after:
            continue
        kind, name = workload(pod)
        found.setdefault((str(meta(pod).get("namespace") or ""), kind, name), []).append((age, pod))
    groups = []
    for (namespace, kind, name), members in found.items():
        members.sort(key=lambda m: (-m[0], name_of(m[1])))
        selected = [((m[1].get("spec") or {}).get("nodeSelector") or {}).get("karpenter.sh/nodepool") for m in members]
        groups.append(PendingGroup(kind=kind, namespace=namespace, name=name,
                                   pods=tuple(name_of(p) for _, p in members), pending_for=members[0][0],
                                   nodepool=next((s for s in selected if s), None)))
    groups.sort(key=lambda g: (-g.pending_for, g.namespace, g.kind, g.name))
    return groups


def pending_problem(group: PendingGroup, diagnosis: Diagnosis, *, cluster: str) -> Problem | None:
    """The diagnosis' first finding (its most likely root cause) as the problem; None when it found nothing.

    A pod Pending past the threshold is worth telling on call about even when the cause is benign-looking
    (a node on its way for ten minutes is late: Karpenter gives up on a launch after five), so an
    informational first finding is raised to a warning.
    """
    if not diagnosis.findings:
        return None
    top = diagnosis.findings[0]
    severity = "warning" if top.severity == "info" else top.severity
    named = (str(r.params["nodepool"]) for r in top.remediations if r.params.get("nodepool"))
    nodepool = group.nodepool or next(named, None)
    return Problem(
        code=top.code, severity=severity, target=group.target, cluster=cluster,
        title=f"{group.describe()} Pending for {show_age(group.pending_for)}: {top.title}",
        detail=top.detail, evidence=tuple(top.evidence[:MAX_EVIDENCE]), source="sweep", group=group.group,
        nodepool=nodepool, remediations=tuple(top.remediations), labels=dict(top.labels),
    )
