"""Which NodeClaim a launch failure was about, and whether another one is launching for the same pods.

Karpenter reports a failed launch for one NodeClaim: a controller log line ``failed launching nodeclaim``
with ``{"NodeClaim":{"name":...}}`` and the cloud provider's error (kubernetes-sigs/karpenter
pkg/controllers/nodeclaim/lifecycle/launch.go; aws/karpenter-provider-aws pkg/errors: ``creating instance,
insufficient capacity, ...``), and an ``InsufficientCapacityError`` event on that NodeClaim (launch.go
``InsufficientCapacityErrorEvent``). It names no pod. The pod is tied to the claim by its ``Nominated``
event (pkg/controllers/provisioning/scheduling/events.go ``NominatePodEvent``: "Pod should schedule on:
nodeclaim/<name>"). After the failure Karpenter deletes the claim, marks the offering unavailable (the
provider's unavailable-offerings cache, 3 minutes) and schedules the pod afresh: with a lower-weight NodePool
it nominates the pod to a NodeClaim of that pool. While that claim is launching or launched, the first
pool's capacity error is history, not why the pod waits.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.analyzers.evidence import event_component, event_time
from playbooks.facts import Facts, PodFacts
from playbooks.karpenter.nodeclaim import conditions, nominated_claims, stage, within_limits

NODEPOOL_LABEL = "karpenter.sh/nodepool"
_LOGGED_CLAIM = linear.compile(r'"NodeClaim":\s*\{\s*"name":\s*"(?P<name>[a-z0-9][-a-z0-9.]{0,252})"')
_REPORTERS = ("karpenter", "eks-auto-mode")


def claims_named(line: str) -> frozenset[str]:
    """The NodeClaims a controller log line or event message names (structured field or nodeclaim/<name>)."""
    return frozenset([m.group("name") for m in _LOGGED_CLAIM.finditer(line or "")] + nominated_claims(line))


def nominations(pod: PodFacts) -> list[str]:
    """Every NodeClaim Karpenter nominated the pod to, newest first."""
    found = [(event_time(e), claim) for e in pod.events
             if e.get("reason") == "Nominated" and any(r in event_component(e) for r in _REPORTERS)
             for claim in nominated_claims(e.get("message") or e.get("note") or "")]
    return list(dict.fromkeys(claim for _, claim in sorted(found, reverse=True)))


def live(claim: dict) -> bool:
    """Launching or launched, inside the time Karpenter gives its stage (or joined), not being deleted."""
    if (claim.get("metadata") or {}).get("deletionTimestamp"):
        return False
    if str((conditions(claim).get("Launched") or {}).get("status")) == "False":
        return False
    return stage(claim)[0] == "ready" or within_limits(claim)


def launching_instead(pod: PodFacts, failed: frozenset[str], facts: Facts) -> str | None:
    """A NodeClaim the pod is nominated to, other than the failed ones, that is launching or launched."""
    for name in nominations(pod):
        claim = facts.nodeclaims.get(name)
        if name not in failed and claim is not None and live(claim):
            return name
    return None


def nodepool_of(name: str, facts: Facts) -> str:
    """The NodePool of a NodeClaim: its label while it exists; Karpenter names claims <nodepool>-<suffix>."""
    claim = facts.nodeclaims.get(name)
    label = ((claim or {}).get("metadata", {}).get("labels") or {}).get(NODEPOOL_LABEL)
    if label:
        return label
    guess = name.rsplit("-", 1)[0]
    return guess if guess in facts.nodepools else ""
