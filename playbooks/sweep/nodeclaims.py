"""NodeClaims that fail to launch or to register, told per NodePool.

kubernetes-sigs/karpenter pkg/apis/v1/nodeclaim_status.go (Launched, Registered, Initialized) and
pkg/controllers/nodeclaim/lifecycle/{launch,registration,liveness}.go: a failed launch sets
Launched=False (LaunchFailed) with the cloud provider's error as message; a launched instance whose
node never joins stays Registered=Unknown (NodeNotFound, "Node not registered with cluster") until the
NodeClaim is deleted after 15 minutes and a new one tried. Karpenter replaces NodeClaims, not their
NodePool, so the problem is the NodePool's: its fingerprint survives the churn, and the NodeClaims
are its evidence. The message is classified by the signature catalogue (insufficient capacity, quota,
subnet ...) so the code names the cause when Karpenter's words do.
"""
from __future__ import annotations

from datetime import datetime

from playbooks.analyzers.evidence import field
from playbooks.model import Target
from playbooks.problems import Problem
from playbooks.signatures.catalogue import scan_line
from playbooks.sweep.objects import condition, labels_of, meta, name_of, seconds_since, show_age

NODEPOOL_LABEL = "karpenter.sh/nodepool"
# Seconds without Launched=True before a NodeClaim is late (EC2 answers a launch within seconds;
# Karpenter gives up at 5 minutes, liveness.go launchTTL).
LAUNCH_AFTER = 180.0
# Seconds from launch without Registered=True (GPU AMIs boot in 2-5 minutes; Karpenter deletes at 15).
REGISTER_AFTER = 600.0
MAX_EVIDENCE = 5
OFFERING_CODES = ("karpenter.insufficient_capacity", "karpenter.offering_unavailable_in_zone")
# Problem.labels named as Karpenter's offering metrics name them, and the well-known labels that say the same.
OFFERING_LABELS = (("instance_type", "node.kubernetes.io/instance-type"), ("zone", "topology.kubernetes.io/zone"),
                   ("capacity_type", "karpenter.sh/capacity-type"))


def nodeclaim_problems(nodeclaims: list[dict], *, cluster: str, now: datetime) -> list[Problem]:
    failing: dict[tuple[str, str], list[tuple[dict, str, dict, str]]] = {}
    offerings: dict[tuple[str, str], set[tuple[str | None, ...]]] = {}
    for claim in nodeclaims:
        if meta(claim).get("deletionTimestamp"):
            continue
        found = _failure(claim, now=now)
        if found is None:
            continue
        stage, cond = found
        message = str(cond.get("message") or "")
        signals = [s for s in scan_line(message or str(cond.get("reason", "")), source="nodeclaim")
                   if s.code.startswith("karpenter.") and s.severity != "info"]
        best = min(signals, key=lambda s: s.rank) if signals else None
        code = best.code if best else "karpenter.node_registration_failed"
        pool = labels_of(claim).get(NODEPOOL_LABEL) or "(no NodePool)"
        failing.setdefault((pool, code), []).append((claim, stage, cond, message))
        offerings.setdefault((pool, code), set()).add(_offering(claim, best.fields if best else {}))
    problems = []
    for (pool, code), claims in sorted(failing.items()):
        launch = [c for c in claims if c[1] == "launch"]
        stage = "launch" if launch else "register"
        names = ", ".join(name_of(c[0]) for c in claims[:3])
        names += f" and {len(claims) - 3} more" if len(claims) > 3 else ""
        said = next((m for _, _, _, m in claims if m), "")
        title = (f"NodePool {pool}: {len(claims)} NodeClaim{'s' if len(claims) != 1 else ''} "
                 f"{'failed to launch' if stage == 'launch' else 'launched but did not register'} ({names})")
        detail = (f"Karpenter said: {said} " if said else "") + (
            "Pods waiting for these nodes stay Pending; Karpenter retries with new NodeClaims, other instance "
            "types or zones when it can." if stage == "launch" else
            "The instances started but their nodes never joined the cluster; Karpenter deletes such a NodeClaim "
            "after 15 minutes and tries again, so the same failure repeats: check the NodeClass role and its "
            "access entry, the AMI and its user data, subnets and security groups.")
        problems.append(Problem(
            code=code, severity="error", target=Target(kind="nodepool", name=pool), cluster=cluster,
            group=f"nodepool/{pool}", nodepool=pool, title=title, detail=detail,
            labels=_offering_labels(offerings[(pool, code)]) if code in OFFERING_CODES else {},
            evidence=tuple(field(f"nodeclaim/{name_of(c)}", f"status.conditions[{cond.get('type')}]", cond)
                           for c, _, cond, _ in claims[:MAX_EVIDENCE]),
        ))
    return problems


def _offering(claim: dict, fields) -> tuple[str | None, ...]:
    """(instance type, zone, capacity type) of the launch that failed: EC2's message names the first two
    (the signature's fields), the NodeClaim's labels or single-valued requirements name the rest."""
    wanted = {r.get("key"): r.get("values") or [] for r in (claim.get("spec") or {}).get("requirements") or []
              if r.get("operator") == "In"}

    def one(field_name: str, label: str) -> str | None:
        values = wanted.get(label) or []
        return fields.get(field_name) or labels_of(claim).get(label) or (values[0] if len(values) == 1 else None)
    return tuple(one(f, label) for f, label in OFFERING_LABELS)


def _offering_labels(seen: set[tuple[str | None, ...]]) -> dict[str, str]:
    """The offering as Problem.labels, when every failing NodeClaim names the same one in full."""
    if len(seen) != 1:
        return {}
    [offering] = seen
    return {f: v for (f, _), v in zip(OFFERING_LABELS, offering)} if all(offering) else {}  # type: ignore[misc]


def _failure(claim: dict, *, now: datetime) -> tuple[str, dict] | None:
    """("launch" | "register", the condition that says so), or None for a NodeClaim on its way or done."""
    launched = condition(claim, "Launched")
    created = seconds_since(meta(claim).get("creationTimestamp"), now)
    if launched is None or launched.get("status") != "True":
        if launched is not None and launched.get("status") == "False":
            return "launch", launched
        if launched is not None and created is not None and created >= LAUNCH_AFTER:
            return "launch", {**launched, "message": launched.get("message") or
                              f"not launched after {show_age(created)}"}
        return None
    registered = condition(claim, "Registered")
    if registered is None or registered.get("status") == "True":
        return None
    since = seconds_since(launched.get("lastTransitionTime"), now)
    if since is None:
        since = created
    if since is not None and since >= REGISTER_AFTER:
        return "register", registered
    return None
