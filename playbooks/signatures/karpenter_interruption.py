"""EC2 taking a node away, and Karpenter's forced termination of a node's pods.

Interruption (aws/karpenter-provider-aws pkg/controllers/interruption, v1.0-v1.14): the controller
reads EC2's messages from the SQS queue (messages/*: spot interruption, rebalance recommendation,
scheduled change, instance state change to stopping/stopped or shutting-down/terminated, capacity
reservation interruption; v1.12+ also DescribeInstanceStatus), publishes an event on the NodeClaim and
on the Node (events/events.go), and for every kind but the rebalance recommendation deletes the NodeClaim
(controller.go / utils.go ``deleteNodeClaim``): it logs ``initiating delete from interruption message``
with ``messageKind``, ``NodeClaim``, ``Node`` and ``action``, and publishes ``TerminatingOnInterruption``.

==================================  ==========================================================  ========
event reason                        message (events.go)                                        severity
==================================  ==========================================================  ========
SpotInterrupted                     Spot interruption warning was triggered                    warning
CapacityReservationInstance...      Capacity Reservation interruption warning was triggered    warning
InstanceStopping                    Instance is stopping                                       warning
InstanceTerminating                 Instance is terminating                                    warning
InstanceUnhealthy (ScheduledChange, An unhealthy warning was triggered for the instance        warning
  instance/system status)
TerminatingOnInterruption           Interruption triggered termination for the NodeClaim|Node  warning
SpotRebalanceRecommendation         Spot rebalance recommendation was triggered                info
==================================  ==========================================================  ========

A rebalance recommendation is ``NoAction`` (utils.go ``actionForMessage``): the node stays, so it is
info. Forced termination (kubernetes-sigs/karpenter pkg/controllers/node/termination/terminator/
events/events.go, v1.0-v1.14): ``Evicted pod`` (v1.0-v1.1) / ``Evicted pod: <reason>`` (v1.2+; the
NodeClaim's DisruptionReason condition, else ``Forceful Termination``, eviction.go ``evictionReason``),
the pod event ``Disrupted``: ``Deleting the pod to accommodate the terminationTime ... This bypasses the
PDB of the pod and the do-not-disrupt annotation.``, and ``TerminationGracePeriodExpiring``: ``All pods
will be deleted by <time>`` on the node and the NodeClaim. Expiry deletes the NodeClaim itself
(pkg/controllers/nodeclaim/expiration/controller.go: debug log ``deleting expired nodeclaim``).

Who set the time the ``Disrupted`` event names: three writers annotate the NodeClaim with
``karpenter.sh/nodeclaim-termination-timestamp``, and the terminator (v1.14.0 terminator.go
``DeleteExpiringPods``) deletes every pod still there at that time, whatever its PDB or do-not-disrupt says:

- the NodeClaim's ``terminationGracePeriod``: deletion time + the grace period (core v1.14.0
  pkg/controllers/nodeclaim/lifecycle/controller.go ``ensureTerminationGracePeriodTerminationTimeAnnotation``,
  which alone also publishes ``TerminationGracePeriodExpiring`` on the NodeClaim);
- node repair: the present time (core v1.14.0 pkg/controllers/node/health/controller.go
  ``annotateTerminationGracePeriod``), logged ``deleting unhealthy node``;
- an EC2 instance or system status check (aws v1.13+, v1.14.1 pkg/controllers/interruption/utils.go
  ``actionForMessage``: ``instance_status`` / ``system_status`` -> ``ForcefulTermination``, which calls
  ``annotateTerminationTimestamp`` with the present time before deleting the NodeClaim).

The node's ``TerminationGracePeriodExpiring`` (node/termination/controller.go ``nodeTerminationTime``) is
published for any of the three. A do-not-disrupt annotation or a WhenEmpty policy helps against none of them.

Capacity Blocks (aws v1.14.1 pkg/controllers/capacityreservation/expiration/controller.go, since v1.6): a
reservation of type ``capacity-block`` is ``expiring`` from 40 minutes before its end (pkg/apis/v1/
ec2nodeclass_status.go ``CapacityReservationFromEC2``: ``capacityReservationExpirationPeriod``), 10 minutes
before EC2 starts reclaiming its instances; the controller then deletes every NodeClaim of it and logs
``initiating delete for capacity block expiration`` with ``NodeClaim`` and ``capacity-reservation-id``. It
publishes no event. An EC2-side reclaim, like an interruption: nothing in the NodePool's disruption
settings holds it back.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict

# messageKind in the controller log (messages/types.go Kind) -> the event reason it publishes
KINDS = {
    "spot_interrupted": "SpotInterrupted",
    "rebalance_recommendation": "SpotRebalanceRecommendation",
    "scheduled_change": "ScheduledChange",
    "instance_stopped": "InstanceStopping",
    "instance_terminated": "InstanceTerminating",
    "capacity_reservation_interrupted": "CapacityReservationInstanceInterrupted",
    "instance_status": "InstanceStatus",
    "system_status": "InstanceStatus",
    "event_status": "ScheduledChange",
}
# event message (events.go) -> reason
MESSAGES = {
    "Spot interruption warning was triggered": "SpotInterrupted",
    "Capacity Reservation interruption warning was triggered": "CapacityReservationInstanceInterrupted",
    "Instance is stopping": "InstanceStopping",
    "Instance is terminating": "InstanceTerminating",
    "An unhealthy warning was triggered for the instance": "InstanceUnhealthy",
    "Interruption triggered termination for the": "TerminatingOnInterruption",
}
WHAT = {
    "SpotInterrupted": "EC2 reclaimed the spot instance (two-minute spot interruption warning)",
    "CapacityReservationInstanceInterrupted": "EC2 reclaimed the instance from its capacity reservation",
    "InstanceStopping": "the EC2 instance was stopped",
    "InstanceTerminating": "the EC2 instance was terminated outside Karpenter",
    "InstanceUnhealthy": "EC2 scheduled maintenance or a failed instance status check retired the instance",
    "ScheduledChange": "EC2 scheduled maintenance (an AWS Health scheduled change) retired the instance",
    "InstanceStatus": "a failed EC2 instance or system status check retired the instance",
    "CapacityBlockExpiring": ("the EC2 Capacity Block reserving the instance is ending (Karpenter deletes its nodes 40 "
                              "minutes before the end, 10 minutes before EC2 reclaims the instances)"),
    "TerminatingOnInterruption": "Karpenter deleted the node on an EC2 interruption message",
}


def _event(fields: dict[str, str], text: str) -> Verdict:
    reason = next((r for m, r in MESSAGES.items() if m in text), "TerminatingOnInterruption")
    return Verdict(fields={"interruption": reason},
                   title=f"EC2 interruption: {WHAT[reason]} ({reason})")


def _logged(fields: dict[str, str], text: str) -> Verdict:
    reason = KINDS.get(fields.pop("kind", ""), "TerminatingOnInterruption")
    return Verdict(fields={"interruption": reason},
                   title=f"Karpenter deleted a node on an EC2 interruption message ({reason})[: NodeClaim {{nodeclaim}}]")


def _forced(fields: dict[str, str], text: str) -> Verdict:
    # The line does not say which writer set the termination time (module doc): the analyzer tells them
    # apart (analyzers/disruption.py); "TerminationGracePeriod" names the mechanism, not the cause.
    return Verdict(fields={"reason": "TerminationGracePeriod"})


def _evicted(fields: dict[str, str], text: str) -> Verdict:
    reason = fields.get("reason", "").replace(" ", "") or "Eviction"
    return Verdict(fields={"reason": reason}, title=f"Karpenter evicted a pod while draining its node ({reason})",
                   confidence="high" if reason != "ForcefulTermination" else "medium")


RULES: tuple[Rule, ...] = (
    Rule(
        name="karpenter.interrupted",
        code="karpenter.interruption",
        severity="warning",
        confidence="high",
        title="EC2 interruption",
        keywords=tuple(MESSAGES),
        refine=_event,
        fields_doc="interruption (SpotInterrupted|InstanceStopping|InstanceTerminating|InstanceUnhealthy|"
                   "CapacityReservationInstanceInterrupted|TerminatingOnInterruption)",
        example="Warning  SpotInterrupted  2m  karpenter  Spot interruption warning was triggered",
    ),
    Rule(
        name="karpenter.interruption_delete",
        code="karpenter.interruption",
        severity="warning",
        confidence="high",
        title="Karpenter deleted a node on an EC2 interruption message",
        # v0.31-v0.32 named the object it deleted a machine: "initiating delete for machine from interruption
        # message" with messageKind SpotInterruptionKind (aws pkg/controllers/interruption/controller.go).
        keywords=("initiating delete from interruption message", "initiating delete for machine from interruption message"),
        extract=(linear.compile(r"messageKind=(?P<kind>[a-z_]+)"),),
        refine=_logged,
        fields_doc="interruption, nodeclaim, node",
        example='{"level":"INFO","time":"2026-01-01T10:00:00.000Z","logger":"controller","message":"initiating delete '
                'from interruption message","commit":"1d92708","controller":"interruption","messageKind":"spot_interrupted",'
                '"NodeClaim":{"name":"gpu-spot-x7k2p"},"action":"CordonAndDrain","Node":{"name":"ip-10-1-2-3.ec2.internal"}}',
    ),
    Rule(
        # NoAction upstream: the node stays; worth knowing, never a problem by itself.
        name="karpenter.rebalance",
        code="karpenter.interruption",
        severity="info",
        confidence="high",
        title="EC2 recommends rebalancing away from a spot instance (no action taken)",
        keywords=("Spot rebalance recommendation was triggered",),
        refine=lambda f, t: Verdict(fields={"interruption": "SpotRebalanceRecommendation"}),
        fields_doc="interruption (SpotRebalanceRecommendation)",
        example="Normal  SpotRebalanceRecommendation  5m  karpenter  Spot rebalance recommendation was triggered",
    ),
    Rule(
        name="karpenter.forced_termination",
        code="karpenter.disruption",
        severity="warning",
        confidence="high",
        title=("Karpenter deleted a pod at its node's termination time (PDB and do-not-disrupt bypassed: "
               "terminationGracePeriod, node repair or a failed EC2 status check)"),
        keywords=("This bypasses the PDB of the pod and the do-not-disrupt annotation", "All pods will be deleted by"),
        refine=_forced,
        fields_doc="reason (TerminationGracePeriod)",
        example="Normal  Disrupted  1m  karpenter  Deleting the pod to accommodate the terminationTime 2026-01-01 10:00:00 "
                "+0000 UTC of the node. The pod was granted 30 seconds of grace-period of its 3600 "
                "terminationGracePeriodSeconds. This bypasses the PDB of the pod and the do-not-disrupt annotation.",
    ),
    Rule(
        # aws/karpenter-provider-aws v1.14.1 pkg/controllers/capacityreservation/expiration/controller.go (v1.6+):
        # log.Info("initiating delete for capacity block expiration") with NodeClaim and capacity-reservation-id.
        name="karpenter.capacity_block_expiration",
        code="karpenter.interruption",
        severity="warning",
        confidence="high",
        title="Karpenter deleted a node because its EC2 Capacity Block ends within 40 minutes[: NodeClaim {nodeclaim}]",
        keywords=("initiating delete for capacity block expiration",),
        refine=lambda f, t: Verdict(fields={"interruption": "CapacityBlockExpiring"}),
        fields_doc="interruption (CapacityBlockExpiring), nodeclaim",
        example='{"level":"INFO","time":"2026-01-01T10:50:00.000Z","logger":"controller","message":"initiating delete '
                'for capacity block expiration","commit":"9f1a0c2","controller":"capacityreservation.expiration",'
                '"NodeClaim":{"name":"trn2-cb-5rj8x"},"capacity-reservation-id":"cr-01c2e6897ac9c06d3"}',
    ),
    Rule(
        name="karpenter.evicted_reason",
        code="karpenter.disruption",
        severity="warning",
        confidence="high",
        title="Karpenter evicted a pod while draining its node",
        keywords=("Evicted pod:",),
        pattern=linear.compile(r"Evicted pod: (?P<reason>[A-Za-z][A-Za-z ]{0,40})"),
        refine=_evicted,
        fields_doc="reason (Underutilized|Empty|Drifted|Expired|ForcefulTermination|...)",
        example="Normal  Evicted  40s  karpenter  Evicted pod: Drifted",
    ),
    Rule(
        name="karpenter.expired",
        code="karpenter.disruption",
        severity="warning",
        confidence="high",
        title="Karpenter deleted an expired NodeClaim (expireAfter)[: {nodeclaim}]",
        keywords=("deleting expired nodeclaim",),
        refine=lambda f, t: Verdict(fields={"reason": "Expired"}),
        fields_doc="reason (Expired), nodeclaim, node",
        example='{"level":"DEBUG","time":"2026-01-01T10:00:00.000Z","logger":"controller","message":"deleting expired '
                'nodeclaim","commit":"1d92708","controller":"nodeclaim.expiration","NodeClaim":{"name":"gpu-od-4kq2m"}}',
    ),
)
