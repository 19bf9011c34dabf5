"""A NodeClaim registered long ago and still not initialized: stuck, though Karpenter sets no limit.

kubernetes-sigs/karpenter pkg/controllers/nodeclaim/lifecycle/initialization.go waits without a
deadline for the node to be Ready, its startup taints gone and its requested extended resources
registered; liveness.go ends only launch (5 min) and registration (15 min). A GPU node whose driver
never lifts its startup taint (Initialized Unknown StartupTaintsExist) stays uninitialized for good,
and the pods nominated for it wait with it. gpubot allows initialization as long as Karpenter allows
registration, counted from the Registered transition.
"""
from __future__ import annotations

from datetime import datetime, timezone

from playbooks.analyzers.evidence import parse_time
from playbooks.karpenter.nodeclaim import REGISTRATION_TTL_S, conditions, stage, within_limits

INITIALIZATION_GRACE_S = REGISTRATION_TTL_S


def initializing_too_long(claim: dict, *, now: datetime | None = None) -> bool:
    """Registered, not initialized, for longer than INITIALIZATION_GRACE_S."""
    if stage(claim)[0] != "registered, initializing":
        return False
    registered = conditions(claim).get("Registered") or {}
    since = parse_time(registered.get("lastTransitionTime")) or parse_time(
        (claim.get("metadata") or {}).get("creationTimestamp"))
    now = now or datetime.now(timezone.utc)
    return since is not None and (now - since).total_seconds() > INITIALIZATION_GRACE_S


def launch_in_progress(claim: dict) -> bool:
    """Inside the time its stage may take: its Unknown conditions are a launch going on, not news."""
    return within_limits(claim) and not initializing_too_long(claim)
