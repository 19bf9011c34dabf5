"""Where a NodeClaim is in its life, and how long Karpenter lets each stage take.

kubernetes-sigs/karpenter pkg/controllers/nodeclaim/lifecycle/liveness.go: a NodeClaim that has not
launched within 5 minutes, or registered within 15, is deleted and its pods scheduled afresh.
Initialization has no such limit (initialization.go, v1.0-v1.14): a resource that never registers keeps
the NodeClaim at Initialized=Unknown until someone acts. ``ResourceNotRegistered`` ("Resource
"nvidia.com/gpu" was requested but not registered") is also the normal state of every GPU, EFA or Neuron
NodeClaim between its node turning Ready and the device plugin advertising the resource: it is waiting,
not failing (device_plugin_evidence.py says when it has become a fault).
"""
from __future__ import annotations

from datetime import datetime, timezone

from playbooks import linear

LAUNCH_TTL_S = 5 * 60
REGISTRATION_TTL_S = 15 * 60
# initialization.go RequestedResourcesRegistered: a requested extended resource still 0 in allocatable
RESOURCE_NOT_REGISTERED = "ResourceNotRegistered"
# How long a requested resource may take to register, counted from the node's registration, before a
# missing or unhealthy plugin is held to blame: a plain device plugin registers within a minute or two of
# the node turning Ready, the GPU Operator only after its driver container has installed and validated the
# driver, which takes several minutes.
RESOURCE_GRACE_S = 10 * 60
_RESOURCE = linear.compile(r'Resource \\?"(?P<resource>[^"\\]{1,253})\\?" was requested but not registered')
# pkg/controllers/provisioning/scheduling/events.go NominatePodEvent: "Pod should schedule on:
# nodeclaim/<n>[, node/<n>]"; before v1 (v1alpha5) the claim was a Machine: "machine/<n>".
_NOMINATED = linear.compile(r"(?:nodeclaim|machine)/(?P<name>[a-z0-9][-a-z0-9.]*)")


def nominated_claims(message: str) -> list[str]:
    """The NodeClaims (or Machines) a Nominated event names."""
    return [m.group("name") for m in _NOMINATED.finditer(message or "")]


def conditions(claim: dict) -> dict[str, dict]:
    return {c.get("type"): c for c in (claim.get("status") or {}).get("conditions") or []}


def stage(claim: dict) -> tuple[str, int | None]:
    """("launching" | "launched, waiting for its node to register" | "registered, initializing" | "ready",
    the limit of that stage in seconds or None). Waiting for a device plugin to register a resource is
    initializing: initialization.go sets no deadline and the wait is normal at first."""
    found = conditions(claim)

    def true(kind: str) -> bool:
        return str((found.get(kind) or {}).get("status")) == "True"

    if not true("Launched"):
        return "launching", LAUNCH_TTL_S
    if not true("Registered"):
        return "launched, waiting for its node to register", REGISTRATION_TTL_S
    if not true("Initialized"):
        return "registered, initializing", None
    return "ready", None


def unregistered_resource(claim: dict) -> str | None:
    """The resource an Initialized=Unknown ResourceNotRegistered condition waits for ("nvidia.com/gpu")."""
    cond = conditions(claim).get("Initialized") or {}
    if cond.get("reason") != RESOURCE_NOT_REGISTERED or str(cond.get("status")) == "True":
        return None
    match = _RESOURCE.search(cond.get("message") or "")
    return match.group("resource") if match else ""


def registered_for(claim: dict, *, now: datetime | None = None) -> float | None:
    """Seconds since the NodeClaim's Registered condition turned True (else since its creation)."""
    registered = conditions(claim).get("Registered") or {}
    stamp = registered.get("lastTransitionTime") if str(registered.get("status")) == "True" else None
    stamp = stamp or (claim.get("metadata") or {}).get("creationTimestamp")
    if not stamp:
        return None
    try:
        since = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(((now or datetime.now(timezone.utc)) - since).total_seconds(), 0.0)


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
    if name == "ready":
        return False
    age = age_seconds(claim)
    return limit is None or age is None or age <= limit
