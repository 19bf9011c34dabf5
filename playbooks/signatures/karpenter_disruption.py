"""Karpenter disruption: nodes it removes (consolidation, drift, expiry, spot) and what blocks it.

Sources: kubernetes-sigs/karpenter pkg/controllers/disruption/events/events.go (``Disrupting Node:
<Reason>``, ``DisruptionBlocked``), pkg/controllers/state/statenode.go (what blocks a node), the
node termination events (``Evicted pod``). EC2 interruptions (``SpotInterrupted`` ...) and forced
termination are read in karpenter_interruption.py.

``DisruptionBlocked`` over the versions (the event reason is the same; the message changed):

- v0.32-v1.1: ``Cannot disrupt Node|NodeClaim: pod "<ns>/<n>" has "karpenter.sh/do-not-disrupt"
  annotation`` and ``... pdb "<ns>/<n>" prevents pod evictions``;
- v1.2-v1.4: the same sentence capitalised, without the prefix: ``Pod "<ns>/<n>" has ...``,
  ``Pdb "<ns>/<n>" prevents pod evictions``;
- v1.5+: structured: ``Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=<ns>/<n>)``,
  ``Pdb prevents pod evictions (PodDisruptionBudget=[<ns>/<n>])``, ``Eviction does not support
  multiple PDBs (PodDisruptionBudget(s)=[...])``;
- all v1: ``No allowed disruptions due to blocking budget`` (NodePool event) and ``No allowed
  disruptions for disruption reason <R> due to blocking budget``; node-level ``Disruption is blocked
  through the "karpenter.sh/do-not-disrupt" annotation``, ``Node is nominated for a pending pod``.

Node repair (feature gate ``NodeRepair``; kubernetes-sigs/karpenter v1.14.0 pkg/controllers/node/health/
controller.go and events.go): once a condition of the cloud provider's repair policies has held for its
toleration (aws/karpenter-provider-aws v1.14.1 pkg/cloudprovider/cloudprovider.go ``RepairPolicies``:
``AcceleratedHardwareReady`` False 10 minutes; ``Ready`` False or Unknown, ``StorageReady``,
``NetworkingReady``, ``KernelReady``, ``ContainerRuntimeReady`` False 30 minutes) Karpenter annotates the
NodeClaim ``karpenter.sh/nodeclaim-termination-timestamp`` with the present time, deletes it and logs
``deleting unhealthy node`` (INFO from v1.8, V(1) before). Pods then go at once, PDBs and do-not-disrupt
bypassed. While more than 20% of the NodePool's nodes (or, for a NodeClaim without a NodePool, of the
cluster's) are unhealthy it repairs nothing and publishes the Warning ``NodeRepairBlocked`` on the node:
``more than 20% nodes are unhealthy in the nodepool`` (``more then`` before v1.3) / ``more then 20% nodes
are unhealthy in the cluster`` (every version).
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict


def _disruption(fields: dict[str, str], text: str) -> Verdict:
    reason = fields.pop("reason2", None) or fields.get("reason") or fields.get("method") or "unknown"
    return Verdict(fields={"reason": reason[:1].upper() + reason[1:]})


def _blocked(fields: dict[str, str], text: str) -> Verdict:
    pod = fields.pop("pod2", None) or fields.pop("pod3", None)
    if pod:
        fields["pod"] = pod
    pdb = fields.pop("pdb2", None) or fields.get("pdb")
    if pdb:
        fields["pdb"] = pdb.strip("[]")
    if "do-not-disrupt" in text:
        kind, title = "do-not-disrupt", "Karpenter disruption is blocked by karpenter.sh/do-not-disrupt[ on pod {pod}]"
    elif "prevents pod evictions" in text or "multiple PDBs" in text:
        kind, title = "pdb", "Karpenter disruption is blocked by a PodDisruptionBudget[ ({pdb})]"
    elif "blocking budget" in text:
        kind, title = "budget", "Karpenter disruption is blocked by the NodePool's disruption budget[ for {budget_reason}]"
    elif "nominated for a pending pod" in text:
        kind, title = "nominated", "Karpenter keeps the node: it is nominated for a pending pod"
    else:
        kind, title = "other", "Karpenter disruption is blocked (node not a candidate)"
    return Verdict(title=title, fields={"blocker_kind": kind, "blocker": fields.get("blocker") or kind})


def _repair_blocked(fields: dict[str, str], text: str) -> Verdict:
    return Verdict(fields={"reason": "RepairBlocked"})


RULES: tuple[Rule, ...] = (
    Rule(
        # kubernetes-sigs/karpenter v1.14.0 pkg/controllers/node/health/controller.go deleteNodeClaim:
        # log.FromContext(ctx).Info("deleting unhealthy node") with NodeClaim and Node (V(1) in v1.1-v1.7).
        name="karpenter.repair",
        code="karpenter.disruption",
        severity="warning",
        confidence="high",
        title="Karpenter node repair deleted an unhealthy node[ ({node})][: NodeClaim {nodeclaim}]",
        keywords=("deleting unhealthy node",),
        refine=lambda f, t: Verdict(fields={"reason": "Unhealthy"}),
        fields_doc="reason (Unhealthy), nodeclaim, node",
        example='{"level":"INFO","time":"2026-01-01T10:00:00.000Z","logger":"controller","caller":"health/controller.go:173",'
                '"message":"deleting unhealthy node","commit":"1d92708","controller":"node.health","Node":{"name":'
                '"ip-10-1-2-3.ec2.internal"},"NodeClaim":{"name":"gpu-od-4kq2m"}}',
    ),
    Rule(
        # kubernetes-sigs/karpenter v1.14.0 pkg/controllers/node/health/controller.go: NodeRepairBlocked (events.go)
        # with fmt.Sprintf("more than %s nodes are unhealthy in the nodepool", "20%") (v1.1-v1.2: "more then"), and
        # for a NodeClaim without a NodePool "more then %s nodes are unhealthy in the cluster" (every version).
        name="karpenter.repair_blocked",
        code="karpenter.disruption",
        severity="warning",
        confidence="high",
        title="Karpenter node repair is blocked: more than {threshold} of the {scope}'s nodes are unhealthy",
        keywords=("nodes are unhealthy in the nodepool", "nodes are unhealthy in the cluster"),
        pattern=linear.compile(r"more th[ae]n (?P<threshold>\d{1,3}%) nodes are unhealthy in the (?P<scope>nodepool|cluster)"),
        refine=_repair_blocked,
        fields_doc="reason (RepairBlocked), threshold, scope (nodepool|cluster)",
        example="Warning  NodeRepairBlocked  2m  karpenter  more than 20% nodes are unhealthy in the nodepool",
    ),
    Rule(
        # events.go: "Disrupting Node: <Reason>" / "Disrupting NodeClaim: <Reason>" (v0.32+); the v1 log
        # "disrupting node(s)" with command=<Reason>/<id>; v0.x "deprovisioning via <method>".
        name="karpenter.disrupting",
        code="karpenter.disruption",
        severity="warning",
        confidence="high",
        title="Karpenter is disrupting a node ({reason})",
        keywords=("Disrupting Node", "disrupting node(s)", "disrupting via", "deprovisioning via"),
        extract=(
            linear.compile(r"Disrupting Node(?:Claim)?: (?P<reason>\w+)"),
            linear.compile(r"reason=(?P<reason>\w+)"),
            linear.compile(r"command=(?P<reason2>[A-Za-z]+)/"),
            linear.compile(r"(?:disrupting|deprovisioning) via (?P<method>[a-z]+(?: [a-z]+)?)"),
            linear.compile(r"(?P<node>ip-[0-9-]+\.[a-z0-9.-]+|i-[0-9a-f]{8,17})"),
        ),
        refine=_disruption,
        fields_doc="reason (Underutilized|Empty|Drifted|Expired|...), method (older logs), node",
        example="Normal  DisruptionTerminating  2m  karpenter  Disrupting Node: Underutilized",
    ),
    Rule(
        # termination events: "Evicted pod" (v0.32-v1.1), "Evicted pod: <reason>" (v1.2+, also used by
        # generic drain tools, hence only with Karpenter's taint in the same line).
        name="karpenter.evicted",
        code="karpenter.disruption",
        severity="warning",
        confidence="medium",
        title="Karpenter evicted a pod while draining a node",
        keywords=("Evicted pod", "tainted node"),
        unless=("Evicted pod:",),
        refine=lambda f, t: Verdict(fields={"reason": "Eviction"}) if ("Evicted pod" in t or "karpenter.sh/disrupted" in t) else None,
        fields_doc="reason (Eviction)",
        example="Normal  Evicted  40s  karpenter  Evicted pod",
    ),
    Rule(
        # DisruptionBlocked in every spelling (module doc). Protection working as intended: info.
        name="karpenter.blocked",
        code="karpenter.disruption",
        severity="info",
        confidence="high",
        title="Karpenter disruption is blocked (do-not-disrupt or budget)",
        keywords=(
            "Cannot disrupt", "DisruptionBlocked", "No allowed disruptions", 'has "karpenter.sh/do-not-disrupt" annotation',
            "prevents pod evictions", "Disruption is blocked through", "does not support multiple PDBs",
        ),
        extract=(
            linear.compile(r"(?:Cannot disrupt \w+: |DisruptionBlocked\s+\S+\s+\S+\s+)(?P<blocker>.{1,300})$"),
            linear.compile(r'[Pp]od \\?"(?P<pod2>[^"\\]{1,300})\\?" has'),
            linear.compile(r"\(Pod=(?P<pod3>[^\s,;()]{1,300})\)"),
            linear.compile(r'[Pp]db \\?"(?P<pdb>[^"\\]{1,300})\\?" prevents'),
            linear.compile(r"PodDisruptionBudget(?:\(s\))?=(?P<pdb2>\[[^\]]{1,300}\]|[^\s,;()]{1,300})"),
            linear.compile(r"for disruption reason (?P<budget_reason>\w+) due to"),
        ),
        refine=_blocked,
        fields_doc="blocker, blocker_kind (do-not-disrupt|pdb|budget|nominated|other), pod, pdb, budget_reason",
        example='Normal  DisruptionBlocked  36s  karpenter  Cannot disrupt Node: pod "default/llama-3-8b-node-0-0" has "karpenter.sh/do-not-disrupt" annotation',
    ),
)
