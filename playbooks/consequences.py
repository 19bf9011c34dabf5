"""Findings that follow from another one: when EC2 or Karpenter took a node of the job, the other ranks'
NCCL errors, timeouts and SIGTERMs are what losing a peer looks like, not causes of their own. They stay
in the diagnosis (the evidence is real) as info, each saying which cause it follows, and the cause's
detail lists them, so the cause comes first.
"""
from __future__ import annotations

from dataclasses import replace

from playbooks.model import Finding

# Codes that take a node of the job away, strongest first.
CAUSES = ("karpenter.interruption", "karpenter.disruption")
# What the surviving ranks report when a peer's node goes (torch.distributed: the NCCL watchdog times
# out, OFI / NCCL lose the peer, torchrun's agent sends SIGTERM, rendezvous cannot re-form).
FOLLOWERS = frozenset({"nccl.peer_unresponsive", "nccl.timeout", "training.terminated", "training.rendezvous_failed"})
# Only a cause that hit the target itself (the job, or the pod the user named): a rank the user asked
# about whose own node stayed keeps its NCCL finding first, and that finding names the peer that went.
SERIOUS = ("critical",)


def follow_causes(findings: list[Finding]) -> list[Finding]:
    cause = next((f for code in CAUSES for f in findings if f.code == code and f.severity in SERIOUS), None)
    if cause is None:
        return findings
    followers = [f for f in findings if f.code in FOLLOWERS and f is not cause]
    if not followers:
        return findings
    note = f"This follows from {cause.code}: {cause.title}."
    out = []
    for finding in findings:
        if finding in followers:
            finding = replace(finding, severity="info", title=f"{finding.title} (a consequence of {cause.code})",
                              detail=f"{note} {finding.detail}")
        elif finding is cause:
            finding = replace(finding, detail=f"{finding.detail.rstrip()} Its consequences, listed below as info: "
                              + "; ".join(f"{f.code} ({f.title})" for f in followers[:4]) + ".")
        out.append(finding)
    return out
