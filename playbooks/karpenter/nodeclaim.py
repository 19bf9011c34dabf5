"""Where a NodeClaim is in its life, and how long Karpenter lets each stage take.

kubernetes-sigs/karpenter pkg/controllers/nodeclaim/lifecycle/liveness.go: a NodeClaim that has not
launched within 5 minutes, or registered within 15, is deleted and its pods scheduled afresh.
Initialization has no such limit (initialization.go): a resource that never registers keeps the
NodeClaim at Initialized=Unknown until someone acts.
"""
from __future__ import annotations

from datetime import datetime, timezone

from playbooks import linear

LAUNCH_TTL_S = 5 * 60
REGISTRATION_TTL_S = 15 * 60
STUCK_REASONS = ("ResourceNotRegistered",)
# pkg/controllers/provisioning/scheduling/events.go NominatePodEvent: "Pod should schedule on:
# nodeclaim/<n>[, node/<n>]"; before v1 (v1alpha5) the claim was a Machine: "machine/<n>".
_NOMINATED = linear.compile(r"(?:nodeclaim|machine)/(?P<name>[a-z0-9][-a-z0-9.]*)")


def nominated_claims(message: str) -> list[str]:
    """The NodeClaims (or Machines) a Nominated event names."""
    return [m.group("name") for m in _NOMINATED.finditer(message or "")]


def conditions(claim: dict) -> dict[str, dict]:
    return {c.get("type"): c for c in (claim.get("status") or {}).get("conditions") or []}


def stage(claim: dict) -> tuple[str, int | None]:
    """("launching" | "launched, waiting for its node to register" | "registered, initializing" |
    "stuck" | "ready", the limit of that stage in seconds or None)."""
    found = conditions(claim)

    def true(kind: str) -> bool:
        return str((found.get(kind) or {}).get("status")) == "True"

    if not true("Launched"):
        return "launching", LAUNCH_TTL_S
    if not true("Registered"):
        return "launched, waiting for its node to register", REGISTRATION_TTL_S
    if not true("Initialized"):
        if (found.get("Initialized") or {}).get("reason") in STUCK_REASONS:
            return "stuck", None
        return "registered, initializing", None
    return "ready", None


def age_seconds(obj: dict) -> float | None:
    stamp = (obj.get("metadata") or {}).get("creationTimestamp")
    if not stamp:
        return None
    try:
        created = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return None
    return max((datetime.now(timezone.utc) - created).total_seconds(), 0.0)


def within_limits(claim: dict) -> bool:
    """A NodeClaim still inside the time Karpenter gives its current stage: its Unknown conditions
    are the normal state of a launch, not a failure."""
    name, limit = stage(claim)
    if name in ("stuck", "ready"):
        return False
    age = age_seconds(claim)
    return limit is None or age is None or age <= limit
