"""Detail paragraphs for what happened to a node before the question was asked: EC2 taking it away
(karpenter.interruption). Registered into ``details.WRITERS`` / ``NEXT_STEPS``.

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
    if kind in SPOT:
        text += (" A spot interruption cannot be blocked by karpenter.sh/do-not-disrupt or a PodDisruptionBudget: run "
                 "multi-node jobs on on-demand or reserved capacity, or checkpoint often and resume.")
    elif kind in ("InstanceStopping", "InstanceTerminating"):
        text += " The instance was stopped or terminated outside Karpenter: CloudTrail names who did it."
    else:
        text += " AWS Health lists the scheduled change or failed status check behind it."
    return text


WRITERS: dict[str, Callable[[View], str]] = {
    "karpenter.interruption": interruption,
}
NEXT_STEPS: dict[str, str] = {
    "karpenter.interruption": "the events of the node and its NodeClaim (kubectl get events -n default "
                              "--field-selector involvedObject.kind=NodeClaim) and the Karpenter controller log lines "
                              "'initiating delete from interruption message' with their messageKind",
}
