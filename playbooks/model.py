"""The diagnosis contract: plain data that playbooks return and renderers format.

Field names and their JSON shape are a public contract (design.md, "Diagnosis JSON"); finding codes
are listed in ``playbooks.codes``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SEVERITIES = ("critical", "error", "warning", "info")
CONFIDENCES = ("high", "medium", "low")
REMEDIATION_KINDS = ("annotate-do-not-disrupt", "nodepool-consolidation", "cordon-gpu-node")


@dataclass(frozen=True)
class Evidence:
    """One verbatim line or object field a finding rests on, and where it came from."""

    source: str  # e.g. "event pod/default/x FailedScheduling", "log pod/default/x", "ec2 describe_instance_types"
    text: str


@dataclass(frozen=True)
class Fix:
    summary: str
    snippet: str
    language: str  # "yaml", "json", "shell", "text"


@dataclass(frozen=True)
class Remediation:
    """A typed change the bot may apply behind an approval (applying is handled elsewhere)."""

    kind: str
    target: str  # "pytorchjob/ns/name", "nodepool/name", ...
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in REMEDIATION_KINDS:
            raise ValueError(f"unknown remediation kind {self.kind!r}")


@dataclass
class Finding:
    code: str
    severity: str
    confidence: str
    title: str
    detail: str
    evidence: list[Evidence] = field(default_factory=list)
    fix: Fix | None = None
    remediations: list[Remediation] = field(default_factory=list)
    # The code of the finding this one follows from (a peer's NCCL error after its node was taken):
    # renderers fold it under that cause instead of listing it as a finding of its own.
    consequence_of: str | None = None
    # The cause as structured fields, for grouping and headlines that must never parse the title: named
    # as Karpenter's metrics and Alertmanager's labels name them (nodepool, resource_type, instance_type,
    # zone, capacity_type), plus ``used`` and ``limit`` (the resource's own units) for a NodePool limit,
    # so a finding and an alert about one cause carry the same labels. Empty where the analyzer knows none.
    labels: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")
        if self.confidence not in CONFIDENCES:
            raise ValueError(f"unknown confidence {self.confidence!r}")

    @property
    def severity_rank(self) -> int:
        return SEVERITIES.index(self.severity)

    @property
    def confidence_rank(self) -> int:
        return CONFIDENCES.index(self.confidence)


@dataclass(frozen=True)
class Target:
    kind: str  # pod, job, pytorchjob, node, nodepool, text
    name: str
    namespace: str | None = None

    def __str__(self) -> str:
        return f"{self.kind}/{self.name}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "namespace": self.namespace}


@dataclass
class Diagnosis:
    target: Target
    summary: str
    findings: list[Finding] = field(default_factory=list)
    # What could not be checked (no AWS credentials, Karpenter logs absent on Auto Mode, ...).
    gaps: list[str] = field(default_factory=list)
    cluster: str | None = None
    # The GPU metric series the diagnosis read (playbooks.gpu_series.GpuUsage), for renderers that
    # draw them; not part of the JSON contract.
    gpu_usage: Any = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": {**self.target.to_dict(), "cluster": self.cluster},
            "summary": self.summary,
            "findings": [finding_to_dict(f) for f in self.findings],
            "gaps": list(self.gaps),
        }


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    out = asdict(finding)
    if finding.fix is None:
        out["fix"] = None
    return out
