"""Findings that follow from another one: when EC2 or Karpenter took a node of the job, the other ranks'
NCCL errors, timeouts and SIGTERMs are what losing a peer looks like, not causes of their own. They stay
in the diagnosis (the evidence is real) as info, each marked with the cause it follows
(``Finding.consequence_of``), so the cause comes first and renderers fold them under it.
"""
from __future__ import annotations

from dataclasses import replace

from playbooks.model import Finding

# Codes that take a node of the job away, strongest first.
CAUSES = ("karpenter.interruption", "karpenter.disruption")
# What the surviving ranks report when a peer's node goes (torch.distributed: the NCCL watchdog times
# out, OFI / NCCL lose the peer, torchrun's agent sends SIGTERM, rendezvous cannot re-form).
FOLLOWERS = frozenset({"nccl.peer_unresponsive", "nccl.timeout", "training.terminated", "training.rendezvous_failed"})
# A cause that hit the target itself (critical) or one of its peers (error): either way the rank the
# user asked about failed because a node was taken, and its own NCCL error only repeats that.
SERIOUS = ("critical", "error")


def follow_causes(findings: list[Finding]) -> list[Finding]:
    cause = next((f for code in CAUSES for f in findings if f.code == code and f.severity in SERIOUS), None)
    if cause is None:
        return findings
    followers = [f for f in findings if f.code in FOLLOWERS and f is not cause]
    if not followers:
        return findings
    return [replace(f, severity="info", consequence_of=cause.code) if f in followers else f for f in findings]


def consequences(findings: list[Finding], cause: Finding) -> list[Finding]:
    """The findings marked as following from ``cause``, in their order."""
    return [f for f in findings if f.consequence_of == cause.code and f is not cause]
