"""Karpenter disrupting nodes that run training pods, read by method: each has its own controls.

A node of the job was disrupted when its (or its NodeClaim's) events say "Disrupting Node: <Reason>",
the Karpenter controller logged "disrupting node(s)" or "deleting expired nodeclaim" naming it, or a
pod of the job, deleted since, was "Evicted pod: <Reason>" / force-deleted from it. The nodes are those
the job's pods run on now and ran on before (analyzers/lost.py). Training jobs lose every rank when one
dies. The methods (kubernetes-sigs/karpenter pkg/controllers/disruption/types.go, v1.0-v1.14):

- Consolidation (``Underutilized``, ``Empty``; singlenodeconsolidation.go, multinodeconsolidation.go,
  emptiness.go) is *graceful*: it never evicts a pod with ``karpenter.sh/do-not-disrupt`` or a blocking
  PDB. Controls: the annotation, ``consolidationPolicy: WhenEmpty``, budgets.
- Drift (``Drifted``; drift.go ``Class() = EventualDisruptionClass``) is *eventual*: it honours
  do-not-disrupt and PDBs until the NodeClaim's ``terminationGracePeriod`` runs out, then deletes the
  pods anyway (types.go: "eventual disruption is bounded by a NodePool's TerminationGracePeriod,
  regardless of blocking pod PDBs and the do-not-disrupt annotation"). A WhenEmpty consolidation patch
  does nothing for it; a budget with ``reasons: [Drifted]`` or pinning the AMI does.
- Expiry (``Expired``; pkg/controllers/nodeclaim/expiration/controller.go) is *forced*: the NodeClaim
  is deleted at ``expireAfter`` whatever protects its pods; do-not-disrupt only delays the drain until
  ``terminationGracePeriod`` (EKS Auto Mode sets 24h). Control: ``expireAfter`` longer than the job.
- Interruption is EC2's doing, read by analyzers/interruption.py.
- Node repair (``Unhealthy``; kubernetes-sigs/karpenter v1.14.0 pkg/controllers/node/health/controller.go,
  feature gate ``NodeRepair``) is *forced* and not Karpenter's choice: a node condition of the cloud
  provider's repair policies held past its toleration, so the NodeClaim is deleted with its termination
  time set to now (PDBs and do-not-disrupt bypassed). The condition is the cause (a GPU fault for
  ``AcceleratedHardwareReady``: analyzers/gpu.py leads with it); the repair is what followed. No annotation,
  consolidation policy or budget acts on it. ``NodeRepairBlocked`` says it is held back (more than 20% of the
  NodePool's nodes unhealthy): the node stays, fault and all.

The pod event ``Disrupted`` ("... This bypasses the PDB of the pod and the do-not-disrupt annotation.") says
only that the NodeClaim's termination time came (signatures/karpenter_interruption.py): its
``terminationGracePeriod`` ran out, node repair set it, or (aws v1.13+) an EC2 instance/system status check
did (utils.go ``ForcefulTermination``). It is read as whichever the node's other evidence names.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from playbooks.analyzers import evidence as ev
from playbooks.analyzers.interruption import FORCEFUL, interrupted
from playbooks.analyzers.lost import LostPod, claim_nodes, job_nodes, lost_pods
from playbooks.analyzers.owners import OWNER_KINDS, pod_owner
from playbooks.analyzers.scan import signals
from playbooks.history_names import nodes_named
from playbooks.requirements import is_auto_mode
from playbooks.facts import Facts, PodFacts
from playbooks.explain import template_for
from playbooks.fixes import render_fix
from playbooks.model import Evidence, Finding
from playbooks.remediations import DO_NOT_DISRUPT, annotate_do_not_disrupt, merge_patch, nodepool_consolidation
from playbooks.remediations.protection import protection


def disrupted_nodes(facts: Facts) -> dict[str, list[Evidence]]:
    """Node name -> evidence that Karpenter disrupted it (cached per diagnosis)."""
    if "disrupted" in facts.cache:
        return facts.cache["disrupted"]
    out: dict[str, list[Evidence]] = {}
    reasons: dict[str, list[str]] = facts.cache.setdefault("disruption_reasons", {})
    names = {p.node_name for p in facts.pods if p.node_name} | set(facts.nodes) | job_nodes(facts)
    ties = claim_nodes(facts)
    taken = set(interrupted(facts))

    forceful = {n for n, hit in interrupted(facts).items() if set(hit.reasons) & set(FORCEFUL)}

    def add(node: str, sig) -> None:
        reason = sig.fields.get("reason", "")
        if reason == "RepairBlocked":
            return  # repair held back: the node was not taken (read by repairs())
        if node in taken and reason in FORCED_ONLY:
            return  # the eviction that followed EC2's interruption: not a method of Karpenter's own
        if node in forceful and reason == "TerminationGracePeriod":
            return  # a failed status check set the termination time (aws interruption/utils.go ForcefulTermination)
        out.setdefault(node, []).append(Evidence(sig.source, sig.line))
        if reason:
            reasons.setdefault(node, []).append(reason)

    for loc in signals(facts):
        sig = loc.signal
        if sig.code != "karpenter.disruption" or sig.severity == "info":
            continue
        if loc.origin == "node-event" and loc.node and loc.by_speaker:  # not a tenant's word for Karpenter's
            add(loc.node, sig)
        elif loc.origin == "nodeclaim-event" and loc.from_karpenter and ties.get(loc.node or "") in names:
            add(ties[loc.node or ""], sig)
        elif loc.origin == "karpenter":
            for name in names:
                if name and (name in sig.line or ties.get(sig.fields.get("nodeclaim", "")) == name):
                    add(name, sig)
    for lost in lost_pods(facts):  # what Karpenter said to pods deleted since, on the nodes they ran on
        for sig in lost.said:
            if sig.code == "karpenter.disruption" and sig.severity != "info":
                for node in lost.nodes:
                    add(node, sig)
    for name, repair in repairs(facts).items():  # a deletion the node's own state shows as node repair's
        if repair.inferred and name not in out:
            out[name] = list(repair.deleted)
            reasons.setdefault(name, []).append("Unhealthy")
    for name, node in facts.nodes.items():
        for taint in ((node or {}).get("spec") or {}).get("taints") or []:
            if taint.get("key") == "karpenter.sh/disrupted" and name in out:
                out[name].append(ev.field(f"node/{name}", "spec.taints", taint))
    facts.cache["disrupted"] = out
    return out


# Evictions that say only that the NodeClaim went (deleted by hand, expired, or interrupted): on a node
# EC2 took they belong to the interruption (terminator/eviction.go evictionReason: "Forceful Termination").
FORCED_ONLY = ("ForcefulTermination", "Eviction")

# aws/karpenter-provider-aws v1.14.1 pkg/cloudprovider/cloudprovider.go RepairPolicies: the node conditions (and
# statuses) kubernetes-sigs/karpenter v1.14.0 pkg/controllers/node/health/controller.go repairs on, and how long
# each must hold (TolerationDuration) before the NodeClaim is deleted.
REPAIR_POLICIES: dict[str, tuple[tuple[str, ...], timedelta]] = {
    "Ready": (("False", "Unknown"), timedelta(minutes=30)),
    "AcceleratedHardwareReady": (("False",), timedelta(minutes=10)),
    "StorageReady": (("False",), timedelta(minutes=30)),
    "NetworkingReady": (("False",), timedelta(minutes=30)),
    "KernelReady": (("False",), timedelta(minutes=30)),
    "ContainerRuntimeReady": (("False",), timedelta(minutes=30)),
}
# health/controller.go allowedUnhealthyPercent: above it, repair stops and NodeRepairBlocked is published.
REPAIR_THRESHOLD = "20%"
# core v1 NodeClaimTerminationTimestampAnnotationKey: the time after which every pod is deleted, PDBs or not.
TERMINATION_TIMESTAMP = "karpenter.sh/nodeclaim-termination-timestamp"
# How far apart two clocks' records of one act may be (the controller's log, the API server's deletion time).
_SLACK = timedelta(minutes=2)
_NEVER = datetime.max.replace(tzinfo=timezone.utc)


@dataclass
class Repair:
    """What node repair did, or is due to do, to one node of the job."""

    node: str
    claim: str | None = None
    condition: dict | None = None  # the unhealthy condition a repair policy matches (the earliest due)
    toleration: timedelta | None = None
    deleted: list[Evidence] = field(default_factory=list)  # Karpenter deleted the NodeClaim for it
    blocked: list[Evidence] = field(default_factory=list)  # NodeRepairBlocked on the node
    blocked_why: str = ""
    inferred: bool = False  # the deletion is read from the NodeClaim and the condition, not from the log

    @property
    def since(self) -> datetime | None:
        return ev.parse_time((self.condition or {}).get("lastTransitionTime"))

    @property
    def due(self) -> datetime | None:
        since = self.since
        return since + self.toleration if since is not None and self.toleration is not None else None

    def what(self) -> str:
        """``AcceleratedHardwareReady=False (NvidiaNVLinkError)``, or "" when the condition is not known."""
        cond = self.condition or {}
        if not cond:
            return ""
        reason = f" ({cond.get('reason')})" if cond.get("reason") else ""
        return f"{cond.get('type')}={cond.get('status')}{reason}"


def unhealthy_condition(node: dict | None) -> tuple[dict, timedelta] | None:
    """The condition node repair would act on first (health/controller.go findUnhealthyConditions: the
    earliest LastTransitionTime + TolerationDuration), with its toleration; None when the node is healthy."""
    found: list[tuple[datetime, dict, timedelta]] = []
    for cond in ((node or {}).get("status") or {}).get("conditions") or []:
        policy = REPAIR_POLICIES.get(str(cond.get("type")))
        if policy is None or str(cond.get("status")) not in policy[0]:
            continue
        since = ev.parse_time(cond.get("lastTransitionTime"))
        found.append((since + policy[1] if since is not None else _NEVER, cond, policy[1]))
    if not found:
        return None
    _, cond, toleration = min(found, key=lambda item: item[0])
    return cond, toleration


def repairs(facts: Facts) -> dict[str, Repair]:
    """Node name -> what node repair did or is due to do to it, for the job's nodes (cached per diagnosis)."""
    if "repairs" in facts.cache:
        return facts.cache["repairs"]
    names = {p.node_name for p in facts.pods if p.node_name} | job_nodes(facts)
    ties = claim_nodes(facts)
    claim_of = {node: claim for claim, node in ties.items()}
    out: dict[str, Repair] = {}

    def get(name: str) -> Repair:
        return out.setdefault(name, Repair(name, claim=claim_of.get(name)))

    for name in sorted(n for n in names if n):
        found = unhealthy_condition(facts.nodes.get(name))
        if found is not None:
            repair = get(name)
            repair.condition, repair.toleration = found
    for loc in signals(facts):
        sig = loc.signal
        reason = sig.fields.get("reason")
        if sig.code != "karpenter.disruption" or reason not in ("Unhealthy", "RepairBlocked"):
            continue
        if reason == "Unhealthy" and loc.origin == "karpenter":
            node = sig.fields.get("node") or ties.get(sig.fields.get("nodeclaim", ""))
            if node in names:
                get(node).deleted.append(Evidence(sig.source, sig.line))
        elif reason == "RepairBlocked" and loc.origin == "node-event" and loc.node in names and loc.by_speaker:
            repair = get(loc.node)
            repair.blocked.append(Evidence(sig.source, sig.line))
            repair.blocked_why = f"more than {sig.fields.get('threshold', REPAIR_THRESHOLD)} of the {sig.fields.get('scope', 'nodepool')}'s nodes are unhealthy"
    for name, repair in out.items():
        if repair.deleted or repair.condition is None or not repair.claim:
            continue
        claim = facts.nodeclaims.get(repair.claim) or {}
        meta = claim.get("metadata") or {}
        deleted_at = ev.parse_time(meta.get("deletionTimestamp"))
        stamp = ev.parse_time((meta.get("annotations") or {}).get(TERMINATION_TIMESTAMP))
        due = repair.due
        # repair deletes the NodeClaim once the condition is past its toleration and stamps the termination time
        # with that moment; a terminationGracePeriod's stamp lies a grace period after the deletion instead
        if deleted_at is None or due is None or due > deleted_at + _SLACK:
            continue
        if stamp is not None and abs(stamp - deleted_at) > _SLACK and stamp > deleted_at:
            continue  # stamped later than the deletion: a terminationGracePeriod's, not repair's
        repair.deleted.append(ev.field(f"nodeclaim/{repair.claim}", "metadata",
                                       {k: v for k, v in (("deletionTimestamp", meta.get("deletionTimestamp")),
                                                          ("annotations", {TERMINATION_TIMESTAMP: (meta.get("annotations") or {}).get(TERMINATION_TIMESTAMP)}
                                                           if stamp is not None else None)) if v}))
        repair.inferred = True
    facts.cache["repairs"] = out
    return out


def analyze(facts: Facts):
    disrupted = disrupted_nodes(facts)
    victims = [p for p in facts.pods if p.node_name in disrupted or nodes_named(p.events) & set(disrupted)]
    lost = [p for p in lost_pods(facts) if p.nodes & set(disrupted)]
    if not victims and not lost:
        return
    own = [p for p in victims if facts.is_target_pod(p)]
    first = (own or victims or facts.pods or [None])[0]
    if first is None:
        return
    nodepool = _nodepool(first, facts)
    policy = ((nodepool or {}).get("spec", {}).get("disruption") or {}).get("consolidationPolicy", "WhenEmptyOrUnderutilized")
    owner = pod_owner(first)
    owner_kind, owner_name, kind = owner.kind, owner.name, owner.key
    if kind == "trainjob":
        # A TrainJob's pods are its JobSet's (same name, kubeflow/trainer): annotating the JobSet's
        # running pods protects them; the TrainJob itself is immutable once created.
        kind = "jobset"
    # Karpenter's own reading: "true", or (v1.12+) a duration that has not run out yet
    readings = {p.name: protection(p.pod, now=_seen_at(victims), karpenter_version=facts.karpenter.version)
                for p in victims}
    protected = [p for p in victims if readings[p.name].active]
    lapsed = [p for p in victims if not readings[p.name].active and readings[p.name].value is not None]
    nodes = sorted({n for p in victims for n in ({p.node_name} | nodes_named(p.events)) if n in disrupted}
                   | {n for p in lost for n in p.nodes if n in disrupted})
    methods = _methods(nodes, facts)
    if methods == {"Unhealthy"}:
        yield _repaired(facts, nodes, disrupted, victims, lost, own=bool(own) or (bool(lost) and facts.target.kind in OWNER_KINDS))
        return
    remediations = []
    np_name = (nodepool or {}).get("metadata", {}).get("name")
    # Only controls that act on the method: the annotation holds back consolidation and drift, not
    # expiry or a grace period that ran out; WhenEmpty acts on consolidation alone.
    if (len(protected) < len(victims) or (lost and not victims)) and methods & PROTECTABLE:
        remediations.append(annotate_do_not_disrupt(kind=kind, namespace=first.namespace, name=owner_name))
    if np_name and policy != "WhenEmpty" and methods & CONSOLIDATION:
        remediations.append(nodepool_consolidation(nodepool=np_name, consolidate_after="10m"))
    specs = owner.workload.replica_specs
    replica_types = (list(((facts.owner or {}).get("spec") or {}).get(specs) or {}) or None) if specs else None
    if owner.key == "jobset" and facts.owner_kind == "jobset" and facts.owner is not None:
        replica_types = [rj.get("name") for rj in (facts.owner.get("spec") or {}).get("replicatedJobs") or []] or None
    patches = [merge_patch(r, replica_types=replica_types) for r in remediations]
    fix = render_fix("training_disruption.yaml.j2", patches=patches, owner=f"{owner_kind} {first.namespace}/{owner_name}",
                     nodepool=np_name or "the GPU NodePool",
                     consolidate=bool(methods & CONSOLIDATION)) if patches else None
    if fix is None and np_name and methods & FORCED:
        # the annotation cannot act on a forced method: the NodePool's lifetime settings can
        fix = render_fix("nodepool_expiry.yaml.j2", nodepool=np_name,
                         method="Expired" if "Expired" in methods else "TerminationGracePeriod")
    evidence = [e for n in nodes for e in disrupted[n]]
    evidence += [_termination(p) for p in victims if _termination(p)]
    if nodepool:
        evidence.append(ev.field(f"nodepool/{np_name}", "spec.disruption", nodepool["spec"].get("disruption") or {}))
    if lost and not own and facts.target.kind in OWNER_KINDS:
        own = lost  # the job's own pods, deleted with the node
    running = "training pods" if own else (f"peer rank{'s' if len(victims) > 1 else ''} "
                                          + ", ".join(p.name for p in victims[:3]))
    names = [p.name for p in victims] + [p.name for p in lost if p.name not in {v.name for v in victims}]
    detail = (f"Karpenter disrupted node{'s' if len(nodes) > 1 else ''} {', '.join(nodes)} "
              f"({', '.join(sorted(methods)) or 'method not stated'}) while {', '.join(names[:6])} ran on "
              f"{'them' if len(nodes) > 1 else 'it'}"
              + (f"; {', '.join(p.name for p in lost[:4])} no longer exist{'s' if len(lost) == 1 else ''} and "
                 f"{'is' if len(lost) == 1 else 'are'} known from {'its' if len(lost) == 1 else 'their'} events" if lost else "")
              + ". A distributed training job loses every rank when one pod dies (NCCL peers stop answering, "
                "torchrun gets SIGTERM). ")
    detail += _method_text(methods, nodepool)
    if methods & CONSOLIDATION and policy != "WhenEmpty" and np_name:
        detail += (f"NodePool {np_name} uses consolidationPolicy {policy}, so nodes that look underutilized are "
                   f"consolidated even with training pods on them. ")
    if protected:
        detail += (f"{len(protected)} of these pods carried {DO_NOT_DISRUPT}: the disruption was involuntary "
                   f"(expiry with terminationGracePeriod, node repair, an EC2 interruption or a deleted NodeClaim). ")
    elif lapsed:
        detail += (f"{', '.join(p.name for p in lapsed[:3])} carried {readings[lapsed[0].name].why}: Karpenter no longer "
                   f"counted {'them' if len(lapsed) > 1 else 'it'} as protected. ")
    elif methods & PROTECTABLE:
        detail += f"None of the pods carries the {DO_NOT_DISRUPT}: \"true\" annotation that blocks voluntary disruption. "
    if methods & CONSOLIDATION:
        detail += "Protect running jobs with the annotation and consolidate GPU NodePools only when empty."
    yield Finding(
        code="karpenter.disruption", severity="critical" if own else "error", confidence="high",
        title=f"Karpenter disrupted node{'s' if len(nodes) > 1 else ''} running {running} ({', '.join(nodes[:3])})"
              + (f": {_METHOD_NAMES.get(sorted(methods)[0], sorted(methods)[0])}" if methods else ""),
        detail=detail, evidence=evidence, fix=fix, remediations=remediations,
    )


def _seen_at(victims: list[PodFacts]):
    """When the pods were disrupted, to judge a duration protection then, not now: the latest
    termination of a victim's container, else the present."""
    times = [ev.parse_time(term.get("finishedAt")) for p in victims for status in p.container_statuses()
             for term in [((status.get("state") or {}).get("terminated") or (status.get("lastState") or {}).get("terminated") or {})]
             if term.get("exitCode") in (143, 137)]
    times = [t for t in times if t is not None]
    return min(times) if times else None


def _nodepool(pod: PodFacts, facts: Facts) -> dict | None:
    by_node = facts.nodepool_of_node(pod.node_name or "")
    if by_node:
        return by_node
    selected = ((pod.pod.get("spec") or {}).get("nodeSelector") or {}).get("karpenter.sh/nodepool")
    if selected in facts.nodepools:
        return facts.nodepools[selected]
    for other in facts.pods:  # the node is gone: its siblings' nodes come from the same NodePool
        np = facts.nodepool_of_node(other.node_name or "")
        if np:
            return np
    return None


def _termination(pod: PodFacts) -> Evidence | None:
    for status in pod.container_statuses():
        for state in (status.get("state") or {}, status.get("lastState") or {}):
            term = state.get("terminated")
            if term and term.get("exitCode") in (143, 137):
                return ev.field(pod.ref, f"status.containerStatuses[{status.get('name')}]",
                                {k: term.get(k) for k in ("exitCode", "reason", "finishedAt") if term.get(k) is not None})
    return None


CONSOLIDATION = frozenset({"Underutilized", "Empty", "Consolidation"})
_METHOD_NAMES = {"Underutilized": "consolidation (Underutilized)", "Empty": "consolidation (Empty)", "Drifted": "drift",
                 "Expired": "expiry (expireAfter)", "TerminationGracePeriod": "terminationGracePeriod ran out",
                 "Unhealthy": "node repair",
                 "Eviction": "eviction", "ForcefulTermination": "forced termination"}
# Methods do-not-disrupt holds back: consolidation always, drift until terminationGracePeriod runs out.
PROTECTABLE = CONSOLIDATION | {"Drifted", "Eviction"}
FORCED = frozenset({"Expired", "TerminationGracePeriod"})


def _methods(nodes: list[str], facts: Facts) -> set[str]:
    """The disruption reasons stated for these nodes; a bare eviction counts only when nothing names one. A
    termination time that node repair set is repair's (the ``Disrupted`` pod event says only that it came)."""
    said = {r for n in nodes for r in (facts.cache.get("disruption_reasons") or {}).get(n, [])}
    named = said - set(FORCED_ONLY)
    if "Unhealthy" in named:
        named.discard("TerminationGracePeriod")
    return named or said


# Conditions whose own finding leads when repair follows them: the GPU one (analyzers/gpu.py agent_conditions)
# and Ready (analyzers/nodes.py analyze_not_ready).
_CAUSE_REPORTED = ("AcceleratedHardwareReady", "Ready")


def _repaired(facts: Facts, nodes: list[str], disrupted: dict[str, list[Evidence]], victims: list[PodFacts],
              lost: list[LostPod], *, own: bool) -> Finding:
    """Node repair took the job's node(s): what followed a node condition, never a voluntary disruption."""
    found = repairs(facts)
    known = [found[n] for n in nodes if n in found and found[n].condition is not None]
    led = bool(known) and all(str(r.condition.get("type")) in _CAUSE_REPORTED for r in known)
    conditions = sorted({r.what() for r in known})
    names = [p.name for p in victims] + [p.name for p in lost if p.name not in {v.name for v in victims}]
    because = f" after {', '.join(conditions)}" if conditions else ""
    evidence = [e for n in nodes for e in disrupted[n]]
    evidence += [ev.field(f"node/{r.node}", f"status.conditions[{r.condition.get('type')}]",
                          {k: r.condition.get(k) for k in ("status", "reason", "lastTransitionTime") if r.condition.get(k)})
                 for r in known]
    evidence += [e for p in victims for e in ev.events(p, reasons=("Evicted", "Disrupted"), components=("karpenter",))][:2]
    tolerations = sorted({f"{int(r.toleration.total_seconds() // 60)} minutes" for r in known if r.toleration})
    detail = (f"Karpenter's node repair (feature gate NodeRepair; kubernetes-sigs/karpenter node/health) deleted the "
              f"NodeClaim of {', '.join(nodes)}{because}"
              + (f", once the condition had held for {' / '.join(tolerations)}" if tolerations else "")
              + (f", and {', '.join(names[:6])} went with it" if names else "") + ". Repair stamps the NodeClaim's "
              "termination time with the moment of deletion, so the pods are deleted at once: PodDisruptionBudgets and "
              "karpenter.sh/do-not-disrupt do not hold it back, and no consolidation policy or disruption budget acts on "
              "it. It is what followed the node's fault, not Karpenter's choice: ")
    detail += ("the fault is the finding to act on (GPU fault: the job resumes from its last checkpoint on the "
               "replacement). " if led else "read the node's condition (kubectl describe node) for the fault. ")
    detail += ("Karpenter repairs only while at most 20% of a NodePool's nodes are unhealthy; to have a person decide "
               "instead, turn the feature gate off and the unhealthy node stays until someone replaces it.")
    first = known[0] if known else None
    fix = render_fix(template_for("karpenter.disruption"), reason="Unhealthy", node=nodes[0],
                     **({"condition": first.what()} if first is not None else {}))
    return Finding(
        code="karpenter.disruption",
        severity="warning" if led else ("critical" if own else "error"), confidence="high",
        title=(f"Karpenter's node repair replaced {', '.join(nodes[:3])}{because}: what followed the node's fault, "
               "not a voluntary disruption"),
        detail=detail, evidence=evidence, fix=fix,
    )


def _grace(nodepool: dict | None) -> str | None:
    """The NodePool's terminationGracePeriod: EKS Auto Mode's built-in pools set 24h."""
    spec = ((nodepool or {}).get("spec") or {}).get("template", {}).get("spec") or {}
    if spec.get("terminationGracePeriod"):
        return str(spec["terminationGracePeriod"])
    return "24h, EKS Auto Mode's default" if nodepool and is_auto_mode(nodepool) else None


def _method_text(methods: set[str], nodepool: dict | None) -> str:
    grace = _grace(nodepool)
    parts = []
    if "Drifted" in methods:
        parts.append("Drift replaces a node whose NodePool or NodeClass no longer matches it (a new AMI release, a "
                     "changed requirement); it is eventual disruption: do-not-disrupt and PDBs hold it back only until "
                     "the NodeClaim's terminationGracePeriod" + (f" ({grace})" if grace else "") + " runs out. A "
                     "consolidation policy does not act on it: pin the AMI (amiSelectorTerms by id or alias version) "
                     "or add a disruption budget with reasons: [Drifted] that allows 0 nodes while jobs run.")
    if "Expired" in methods:
        parts.append("Expiry deletes the NodeClaim when expireAfter is reached, whatever protects its pods; "
                     "do-not-disrupt only delays the drain until terminationGracePeriod"
                     + (f" ({grace})" if grace else "") + ". Set expireAfter on the NodePool longer than the "
                     "longest job (or Never) and restart jobs from checkpoints before nodes expire.")
    if "TerminationGracePeriod" in methods:
        parts.append("The node's terminationGracePeriod" + (f" ({grace})" if grace else "") + " ran out, so Karpenter "
                     "deleted the pods anyway: this bypasses the PDB and the do-not-disrupt annotation "
                     "(kubernetes-sigs/karpenter terminator events DisruptPodDelete). Raise or unset "
                     "terminationGracePeriod on the NodePool, or keep jobs shorter than it.")
    if "Unhealthy" in methods:
        parts.append("Node repair deleted a node whose condition (GPU, Ready, kernel, network, storage or container "
                     "runtime) stayed unhealthy past its toleration; it bypasses PDBs and do-not-disrupt, and only the "
                     "node's fault explains it.")
    if methods & CONSOLIDATION:
        parts.append("Consolidation removes nodes it finds empty or underutilized; it is graceful and never evicts "
                     "a pod annotated karpenter.sh/do-not-disrupt.")
    return " ".join(parts) + (" " if parts else "")
