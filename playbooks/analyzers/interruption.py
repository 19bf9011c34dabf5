"""EC2 taking a node of the job away (spot interruption, scheduled change, instance stopped or
terminated), read from the events of the node and its NodeClaim, which outlive both, and from the
Karpenter controller log (``initiating delete from interruption message``).

Karpenter does not decide an interruption: aws/karpenter-provider-aws pkg/controllers/interruption
receives EC2's message and deletes the NodeClaim (CordonAndDrain, or ForcefulTermination for a failed
status check), bypassing consolidation budgets; the pods are evicted with ``Evicted pod: Forceful
Termination`` (kubernetes-sigs/karpenter terminator/eviction.go, no DisruptionReason on the NodeClaim).
Neither ``karpenter.sh/do-not-disrupt`` nor a PodDisruptionBudget holds EC2 back, so the remedy is the
capacity (on-demand or reserved for multi-node jobs), checkpoints, and a restart policy that resumes.
A rebalance recommendation takes no action (utils.go ``actionForMessage``: NoAction) and is info.

An EC2 instance or system status check (aws v1.13+, v1.14.1 pkg/controllers/interruption/utils.go: messageKind
``instance_status`` / ``system_status``, action ``ForcefulTermination``) also stamps the NodeClaim's termination
time with the present, so its pods are deleted at once (the pod event ``Disrupted`` ... "bypasses the PDB of the
pod and the do-not-disrupt annotation").

A Capacity Block's end is read the same way (aws v1.14.1 pkg/controllers/capacityreservation/expiration/
controller.go): the log line ``initiating delete for capacity block expiration``, or the reservation of a node of
the job (label ``karpenter.k8s.aws/capacity-reservation-id``) in state ``expiring`` in its EC2NodeClass's
``status.capacityReservations`` (pkg/apis/v1/ec2nodeclass_status.go: from 40 minutes before ``endTime``, when the
controller deletes every NodeClaim of it).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from playbooks.analyzers import evidence as ev
from playbooks.analyzers.lost import LostPod, claim_nodes, job_claims, job_nodes, lost_pods
from playbooks.analyzers.owners import OWNER_KINDS
from playbooks.analyzers.scan import signals
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.history_names import nodes_named
from playbooks.model import Evidence, Finding
from playbooks.signatures.karpenter_interruption import WHAT

SPOT = ("SpotInterrupted", "CapacityReservationInstanceInterrupted")
# Reasons whose action may be ForcefulTermination (utils.go actionForMessage: instance_status, system_status; their
# event is InstanceUnhealthy, shared with a scheduled change): the termination time is set to now.
FORCEFUL = ("InstanceStatus", "InstanceUnhealthy")
CAPACITY_BLOCK = "CapacityBlockExpiring"
# aws/karpenter-provider-aws v1.14.1 pkg/apis/v1/labels.go LabelCapacityReservationID / LabelCapacityReservationType
RESERVATION_ID = "karpenter.k8s.aws/capacity-reservation-id"
RESERVATION_TYPE = "karpenter.k8s.aws/capacity-reservation-type"
# The reason a NodeClaim's events name outranks Karpenter's generic "TerminatingOnInterruption".
_GENERIC = "TerminatingOnInterruption"


@dataclass
class Hit:
    """One node (or a NodeClaim whose node is not known) EC2 took."""

    node: str | None
    claims: set[str] = field(default_factory=set)
    reasons: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    reservation: dict | None = None  # the expiring Capacity Block, as the EC2NodeClass status lists it

    @property
    def reason(self) -> str:
        specific = [r for r in self.reasons if r != _GENERIC]
        return (specific or self.reasons or [_GENERIC])[0]


def interrupted(facts: Facts) -> dict[str, Hit]:
    """Node (else NodeClaim) name -> what EC2 did to it, for the nodes and NodeClaims of the job only."""
    if "interrupted" in facts.cache:
        return facts.cache["interrupted"]
    nodes, claims, ties = job_nodes(facts), job_claims(facts), claim_nodes(facts)
    out: dict[str, Hit] = {}

    def add(*, node: str | None, claim: str | None, reason: str, evidence: Evidence) -> None:
        node = node or ties.get(claim or "")
        if not ((node and node in nodes) or (claim and claim in claims)):
            return  # another job's node
        hit = out.setdefault(node or claim or "", Hit(node))
        if claim:
            hit.claims.add(claim)
        hit.reasons.append(reason)
        if all(e.text != evidence.text for e in hit.evidence):
            hit.evidence.append(evidence)

    for loc in signals(facts):
        sig = loc.signal
        if sig.code != "karpenter.interruption" or sig.severity == "info":
            continue
        reason, evidence = sig.fields.get("interruption", _GENERIC), Evidence(sig.source, sig.line)
        if loc.origin == "node-event" and loc.by_speaker:
            add(node=loc.node, claim=None, reason=reason, evidence=evidence)
        elif loc.origin == "nodeclaim-event" and loc.from_karpenter:
            add(node=None, claim=loc.node, reason=reason, evidence=evidence)
        elif loc.origin == "karpenter":
            add(node=sig.fields.get("node"), claim=sig.fields.get("nodeclaim"), reason=reason, evidence=evidence)
    for node, claim, reservation, where in _expiring_blocks(facts, nodes, claims, ties):
        add(node=node, claim=claim, reason=CAPACITY_BLOCK, evidence=ev.field(where, "status.capacityReservations",
                                                                            reservation))
        key = node or ties.get(claim or "") or claim or ""
        if key in out:
            out[key].reservation = reservation
    facts.cache["interrupted"] = out
    return out


def _expiring_blocks(facts: Facts, nodes: set[str], claims: set[str], ties: dict[str, str]):
    """(node, NodeClaim, reservation, EC2NodeClass ref) for each node of the job held by a Capacity Block that its
    EC2NodeClass reports ``expiring``."""
    expiring: dict[str, tuple[dict, str]] = {}
    for key, nodeclass in sorted(facts.nodeclasses.items()):
        for reservation in ((nodeclass or {}).get("status") or {}).get("capacityReservations") or []:
            if isinstance(reservation, dict) and reservation.get("state") == "expiring" and reservation.get("id"):
                expiring.setdefault(str(reservation["id"]), (reservation, f"ec2nodeclass/{key.split('/', 1)[-1]}"))
    if not expiring:
        return
    node_of = dict(ties)
    seen: set[str] = set()
    for claim, obj in sorted(facts.nodeclaims.items()):
        reservation_id = (((obj or {}).get("metadata") or {}).get("labels") or {}).get(RESERVATION_ID)
        node = node_of.get(claim)
        if reservation_id in expiring and (claim in claims or node in nodes):
            seen.add(node or claim)
            yield node, claim, *expiring[reservation_id]
    for name in sorted(nodes - seen):
        reservation_id = (((facts.nodes.get(name) or {}).get("metadata") or {}).get("labels") or {}).get(RESERVATION_ID)
        if reservation_id in expiring:
            yield name, None, *expiring[reservation_id]


def analyze(facts: Facts):
    hits = interrupted(facts)
    if not hits:
        return
    taken = set(hits) | {c for hit in hits.values() for c in hit.claims}
    live = [p for p in facts.pods if _was_on(p, taken)]
    lost = [p for p in lost_pods(facts) if (p.nodes | p.claims) & taken]
    if not live and not lost:
        return
    own = any(facts.is_target_pod(p) for p in live) or (bool(lost) and facts.target.kind in OWNER_KINDS)
    first = next(iter(hits.values()))
    reason = first.reason
    where = ", ".join(_name(key, hit) for key, hit in hits.items())
    evidence = [e for hit in hits.values() for e in hit.evidence[:3]]
    evidence += [Evidence(sig.source, sig.line) for p in lost
                 for sig in [s for s in p.said if s.code in ("karpenter.interruption", "karpenter.disruption")][:1]]
    yield Finding(
        code="karpenter.interruption", severity="critical" if own else "error", confidence="high",
        title=f"EC2 took {where} from the job ({reason})",
        detail=_detail(reason=reason, where=where, live=live, lost=lost, hit=first),
        evidence=evidence,
        fix=render_fix("generic/karpenter.interruption.sh.j2", interruption=reason,
                       **({"node": first.node} if first.node else {}),
                       **({"nodeclaim": sorted(first.claims)[0]} if first.claims else {}),
                       **_reservation_names(first)),
    )


def _was_on(pod: PodFacts, taken: set[str]) -> bool:
    """The pod runs on a node EC2 took, or an earlier pod of the same name did (a Kubeflow replica
    keeps its name: the old incarnation's events are read with the new pod's)."""
    return pod.node_name in taken or bool(nodes_named(pod.events) & taken)


def _name(key: str, hit: Hit) -> str:
    if hit.node:
        claims = f" (NodeClaim {', '.join(sorted(hit.claims))})" if hit.claims else ""
        return f"node {hit.node}{claims}"
    return f"NodeClaim {key}"


def _reservation_names(hit: Hit) -> dict[str, str]:
    reservation = hit.reservation or {}
    return {k: str(reservation[key]) for k, key in (("reservation", "id"), ("ends", "endTime")) if reservation.get(key)}


def _detail(*, reason: str, where: str, live: list[PodFacts], lost: list[LostPod], hit: Hit | None = None) -> str:
    what = WHAT.get(reason, WHAT[_GENERIC])
    text = f"{what[:1].upper() + what[1:]}: Karpenter deleted {where} and drained it. "
    if lost:
        text += (f"{', '.join(p.name for p in lost[:4])} ran there and no longer exist{'s' if len(lost) == 1 else ''}; "
                 "their events, and the node's and NodeClaim's, are what remains (events outlive their objects for "
                 "an hour by default). ")
    if live:
        text += f"{', '.join(p.name for p in live[:4])} ran there (an earlier pod of the same name, or this one). "
    text += ("A distributed training job loses every rank when one node goes: the other ranks' NCCL errors, "
             "timeouts and SIGTERMs follow from this, not from the network or the code. ")
    if reason in SPOT:
        text += ("Neither karpenter.sh/do-not-disrupt nor a PodDisruptionBudget holds back a spot interruption (EC2 "
                 "gives two minutes' notice). Run multi-node jobs on on-demand or reserved capacity "
                 "(karpenter.sh/capacity-type), checkpoint often, and let the job resume from its last checkpoint.")
    elif reason in ("InstanceStopping", "InstanceTerminating"):
        text += "The instance was stopped or terminated outside Karpenter: CloudTrail names who did it."
    elif reason == CAPACITY_BLOCK:
        names = _reservation_names(hit) if hit is not None else {}
        block = f"Capacity Block {names['reservation']}" if "reservation" in names else "The Capacity Block"
        ends = f" ends at {names['ends']}" if "ends" in names else " ends within 40 minutes"
        text += (f"{block}{ends}: a Capacity Block reserves the instances for a fixed window, EC2 starts reclaiming "
                 "them 30 minutes before its end, and Karpenter deletes their NodeClaims 10 minutes earlier still "
                 "(state expiring). No Karpenter fault and no consolidation: neither karpenter.sh/do-not-disrupt, a "
                 "PodDisruptionBudget, a consolidation policy nor a disruption budget holds it back. Checkpoint before "
                 "the block ends, and extend it (EC2 Capacity Block extensions) or buy the next block for the rest of "
                 "the run; NodeClaims for the new block launch once it is active.")
    elif reason in FORCEFUL:
        text += ("AWS Health lists the scheduled change or the failed status check behind it. A failed instance or "
                 "system status check (Karpenter v1.13+) also sets the NodeClaim's termination time to now: pods are "
                 "deleted at once, PDBs and karpenter.sh/do-not-disrupt bypassed, which no setting of the job changes.")
    else:
        text += "AWS Health lists the scheduled change or the failed status check behind it."
    return text
