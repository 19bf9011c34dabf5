"""What the bot raises on its own: a problem seen by a sweep or sent by Alertmanager, plain data.

A problem is keyed by the same fingerprint as an incident (cluster, target, code), so an alert, the
incident it opens and a later diagnosis of the same target agree on what "the same problem" is.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from playbooks.model import SEVERITIES, Evidence, Remediation, Target

SOURCES = ("sweep", "alertmanager")


def fingerprint(*, cluster: str, kind: str, namespace: str | None, name: str, code: str) -> str:
    """The same problem on the same target is one incident (and one alert), however often it is seen."""
    key = "|".join([cluster, kind, namespace or "", name, code])
    return hashlib.sha256(key.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Problem:
    code: str  # a finding code (docs/findings.md), or "alertmanager/<alertname>" for an alert we cannot map
    severity: str  # one of SEVERITIES
    target: Target  # what it is about: pod, pytorchjob, node, nodepool, nodeclaim, ...
    title: str  # one line, says what is wrong with which object
    cluster: str = ""
    detail: str = ""
    evidence: tuple[Evidence, ...] = ()  # verbatim lines from the cluster or the alert
    source: str = "sweep"
    # Storms: problems sharing a group key are told in one message with counts (many Xids on one node,
    # many pods of one job, many nodes of one NodePool). None: the problem is its own group.
    group: str | None = None
    nodepool: str | None = None  # for routing (policy `alerts:`), when known
    remediations: tuple[Remediation, ...] = ()
    # Alertmanager's labels, or a finding's structured labels (Finding.labels, the same names): what
    # bot.alerts.causes reads the cause from, so a sweep's finding and an alert about it group as one.
    labels: dict[str, str] = field(default_factory=dict)
    # A namespace the problem speaks of besides its target's: an alert about a node (DCGM's Xid) also
    # names the pod using the GPU, and whoever is shown it in full must be able to read that namespace.
    workload_namespace: str | None = None
    # Pods of the target that wait on the problem (a Pending job's), so a message about a cause can say
    # "16 pods of 3 jobs wait on it"; 0: not counted.
    pods: int = 0

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")
        if self.source not in SOURCES:
            raise ValueError(f"unknown source {self.source!r}")

    @property
    def fingerprint(self) -> str:
        t = self.target
        return fingerprint(cluster=self.cluster, kind=t.kind, namespace=t.namespace, name=t.name, code=self.code)

    @property
    def namespace(self) -> str | None:
        """The namespace whose readers alone may see the problem in full (routing, masking)."""
        return self.target.namespace or self.workload_namespace

    @property
    def group_key(self) -> str:
        return self.group or self.fingerprint

    def to_dict(self) -> dict[str, Any]:
        """The `gpubot sweep --json` shape: {"fingerprint", "code", "severity", "target", "title"}."""
        return {"fingerprint": self.fingerprint, "code": self.code, "severity": self.severity,
                "target": self.target.to_dict(), "title": self.title}
