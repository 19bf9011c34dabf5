"""What one channel may read of an alert message, object by object.

A message speaks of its cause (a NodePool, an EC2 offering, a node, a NodeClass: cluster-scoped, so open
wherever the cluster is) and of its problems, each in its own (cluster, namespace). Masking the whole
message because one team's pods wait on a NodePool would hide from on call the NodePool itself, the one
object they act on and may read; so each object is shown or held back on its own, and what is held back
is counted, never named.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

from bot.alerts.causes import KINDS as CAUSE_KINDS

if TYPE_CHECKING:
    from bot.store.alerts import AlertView, GroupView

Scope = tuple[str, "str | None"]  # (cluster, namespace); namespace None: cluster-scoped


@dataclass(frozen=True)
class Closed:
    """The scopes of a message its channel's grant leaves closed; empty: the channel reads it all."""

    scopes: frozenset[Scope] = frozenset()

    @classmethod
    def everything(cls, group: "GroupView") -> "Closed":
        """All of it, the clusters' own objects included: a caller that knows only "masked", not what
        the channel may read, must not guess that the cause is open."""
        return cls(frozenset(group.scopes) | {(cluster, None) for cluster, _ in group.scopes}
                   | {(group.cluster, None)})

    def __bool__(self) -> bool:
        return bool(self.scopes)

    def hides(self, member: "AlertView") -> bool:
        return (member.cluster, member.namespace) in self.scopes

    def cause_open(self, group: "GroupView") -> bool:
        """Whether the group's cause is an object of its own that this channel may read."""
        return group.cause_kind in CAUSE_KINDS and bool(group.cause_name) and (group.cluster, None) not in self.scopes

    def split(self, members: Iterable["AlertView"]) -> tuple[list["AlertView"], list["AlertView"]]:
        """(members shown, members held back)."""
        shown, held = [], []
        for member in members:
            (held if self.hides(member) else shown).append(member)
        return shown, held

    def key(self) -> list[list]:
        return sorted([cluster, namespace or ""] for cluster, namespace in self.scopes)


def held_pods(held: Sequence["AlertView"]) -> int:
    """Pods among the held-back problems, 0 unless every one of them is pods: a workload's counted pods,
    or a pod alert (one pod)."""
    counts = [m.pods or (1 if m.target_kind == "pod" else 0) for m in held]
    return sum(counts) if counts and all(counts) else 0


def held_noun(held: Sequence["AlertView"]) -> str:
    """"3 pods", "2 problems": what is held back, by count alone."""
    pods = held_pods(held)
    return _n(pods, "pod") if pods else _n(len(held), "problem")


def held_back_count(held: Sequence["AlertView"]) -> str:
    """"3 pods of 1 namespace this channel cannot read", "2 problems in a cluster this channel cannot
    read": how many, and of how many namespaces, never which."""
    namespaces = {(m.cluster, m.namespace) for m in held if m.namespace}
    where = f"of {_n(len(namespaces), 'namespace')}" if namespaces else "in a cluster"
    return f"{held_noun(held)} {where} this channel cannot read"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
