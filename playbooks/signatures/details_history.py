"""Detail paragraphs for what happened to a node before the question was asked: EC2 taking it away
(karpenter.interruption), and Karpenter removing it read by method (karpenter.disruption: voluntary
disruption, node repair, the termination time coming). Registered into ``details.WRITERS`` / ``NEXT_STEPS``
after details.py's own, so these are the writers used.

Upstream: aws/karpenter-provider-aws pkg/controllers/interruption (events/events.go, utils.go
``actionForMessage``: a rebalance recommendation is NoAction, every other kind deletes the NodeClaim).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from playbooks.signatures.karpenter_interruption import WHAT

if TYPE_CHECKING:
    from playbooks.signatures.details import View

SPOT = ("SpotInterrupted", "CapacityReservationInstanceInterrupted")


def interruption(view: View) -> str:
    kinds = tuple(k for k in view.all("interruption") if k != "TerminatingOnInterruption") or view.all("interruption")
    if set(kinds) <= {"SpotRebalanceRecommendation"}:
        return ("EC2 recommends moving off this spot instance (a rebalance recommendation). Karpenter records it and takes "
                "no action: the node stays until an actual interruption notice. Nothing to do unless interruptions follow.")
    kind = next(iter(kinds), "TerminatingOnInterruption")
    what = WHAT.get(kind, WHAT["TerminatingOnInterruption"])
    count = f" (seen {view.count} times)" if view.count > 1 else ""
    text = (f"{what[:1].upper() + what[1:]}{count}. Karpenter deleted the NodeClaim and drained the node; pods on it were "
            "evicted and any distributed job using it lost a rank, so the other ranks' NCCL errors follow from this.")
    if kind == "CapacityBlockExpiring":
        text += (" A Capacity Block reserves instances for a fixed window: EC2 reclaims them 30 minutes before it ends "
                 "and Karpenter deletes their NodeClaims 40 minutes before (aws/karpenter-provider-aws "
                 "capacityreservation/expiration). Neither karpenter.sh/do-not-disrupt, a PodDisruptionBudget nor the "
                 "NodePool's disruption settings hold it back: checkpoint before the end, and extend the block or buy "
                 "the next one.")
    elif kind in SPOT:
        text += (" A spot interruption cannot be blocked by karpenter.sh/do-not-disrupt or a PodDisruptionBudget: run "
                 "multi-node jobs on on-demand or reserved capacity, or checkpoint often and resume.")
    elif kind in ("InstanceStopping", "InstanceTerminating"):
        text += " The instance was stopped or terminated outside Karpenter: CloudTrail names who did it."
    else:
        text += " AWS Health lists the scheduled change or failed status check behind it."
    return text


# Reasons that are not a voluntary disruption: the termination time came (terminationGracePeriod, node repair or a
# failed EC2 status check; kubernetes-sigs/karpenter v1.14.0 terminator/events/events.go DisruptPodDelete), the
# NodeClaim went without a DisruptionReason (terminator/eviction.go evictionReason "Forceful Termination"; a
# bare "Evicted pod" before v1.2), node repair (node/health/controller.go) and its NodeRepairBlocked.
_NOT_CHOSEN = {"TerminationGracePeriod", "Eviction", "ForcefulTermination", "Unhealthy", "RepairBlocked"}


def disruption(view: View) -> str:
    """karpenter.disruption by method: only consolidation and drift are answered with do-not-disrupt."""
    from playbooks.signatures.details import disruption as voluntary

    reasons = set(view.all("reason"))
    if not reasons or reasons - _NOT_CHOSEN:
        return voluntary(view)
    if "RepairBlocked" in reasons and not reasons & {"Unhealthy", "TerminationGracePeriod", "Eviction",
                                                     "ForcefulTermination"}:
        return (f"Karpenter's node repair is blocked (NodeRepairBlocked): more than {view.get('threshold') or '20%'} of "
                f"the {view.get('scope') or 'nodepool'}'s nodes are unhealthy, so it replaces none of them "
                "(kubernetes-sigs/karpenter node/health). The unhealthy nodes stay, faults and all: so many at once "
                "point at a shared cause (an AMI or driver release, an EC2 issue in a zone). Read the nodes' "
                "conditions, then cordon and replace the faulty ones yourself; no disruption setting of the job or "
                "the NodePool is involved.")
    if "Unhealthy" in reasons:
        return ("Karpenter's node repair deleted an unhealthy node (feature gate NodeRepair; kubernetes-sigs/karpenter "
                "node/health): a node condition of the repair policies (AcceleratedHardwareReady=False for 10 minutes; "
                "Ready, KernelReady, NetworkingReady, StorageReady, ContainerRuntimeReady for 30) had held past its "
                "toleration. Repair sets the NodeClaim's termination time to the moment of deletion, so the node's "
                "pods are deleted at once, PodDisruptionBudgets and karpenter.sh/do-not-disrupt bypassed; no "
                "consolidation policy or budget acts on it. The node's fault is the cause: read its conditions (a GPU "
                "fault leads as gpu.unhealthy_device / gpu.xid_error) and resume the job from its last checkpoint.")
    other = ""
    if "karpenter.interruption" in view.codes:
        other = (" The same text reports an EC2 interruption or a Capacity Block's end (karpenter.interruption): this "
                 "is its drain, and nothing in the job's or the NodePool's disruption settings holds it back.")
    if "TerminationGracePeriod" in reasons:
        return ("Karpenter deleted a pod at its node's termination time, bypassing its PDB and the do-not-disrupt "
                "annotation (kubernetes-sigs/karpenter terminator DisruptPodDelete). Three writers set that time on "
                "the NodeClaim (karpenter.sh/nodeclaim-termination-timestamp): its terminationGracePeriod running out "
                "after a deletion (expiry, drift), node repair of an unhealthy node, or (Karpenter v1.13+) a failed EC2 "
                "instance or system status check. Only the first is the NodePool's to change (terminationGracePeriod, "
                "expireAfter); the annotation helps against none of them. The NodeClaim's events and Karpenter's log "
                "('deleting expired nodeclaim', 'deleting unhealthy node', 'initiating delete from interruption "
                "message') say which." + other)
    text = ("Karpenter evicted a pod while draining its node, and the eviction does not name why the NodeClaim went "
            "(a bare 'Evicted pod' before v1.2, 'Forceful Termination' when the NodeClaim has no disruption reason: "
            "expiry, node repair, an EC2 interruption, a Capacity Block's end or a manual delete). "
            "karpenter.sh/do-not-disrupt holds back consolidation and drift only. Read what deleted the NodeClaim "
            "before changing the job or the NodePool." + other)
    if view.all("blocker"):
        text += (" Karpenter also reported the disruption as blocked, yet a pod was evicted: expiry with a "
                 "terminationGracePeriod, node repair, an EC2 interruption or a manual drain bypasses do-not-disrupt.")
    return text


WRITERS: dict[str, Callable[[View], str]] = {
    "karpenter.interruption": interruption,
    "karpenter.disruption": disruption,
}
NEXT_STEPS: dict[str, str] = {
    "karpenter.interruption": "the events of the node and its NodeClaim (kubectl get events -n default "
                              "--field-selector involvedObject.kind=NodeClaim) and the Karpenter controller log lines "
                              "'initiating delete from interruption message' with their messageKind, and the "
                              "EC2NodeClass status.capacityReservations (state expiring)",
    "karpenter.disruption": "Karpenter's log lines naming the node ('disrupting node(s)', 'deleting expired nodeclaim', "
                            "'deleting unhealthy node'), the NodeClaim's events and the nodes the job's pods ran on",
}
