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
"""
from __future__ import annotations

from playbooks.analyzers import evidence as ev
from playbooks.analyzers.interruption import interrupted
from playbooks.analyzers.lost import LostPod, claim_nodes, job_nodes, lost_pods
from playbooks.analyzers.owners import OWNER_KINDS, pod_owner
from playbooks.analyzers.scan import signals
from playbooks.history_names import nodes_named
from playbooks.requirements import is_auto_mode
from playbooks.facts import Facts, PodFacts
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

    def add(node: str, sig) -> None:
        reason = sig.fields.get("reason", "")
        if node in taken and reason in FORCED_ONLY:
            return  # the eviction that followed EC2's interruption: not a method of Karpenter's own
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
    for name, node in facts.nodes.items():
        for taint in ((node or {}).get("spec") or {}).get("taints") or []:
            if taint.get("key") == "karpenter.sh/disrupted" and name in out:
                out[name].append(ev.field(f"node/{name}", "spec.taints", taint))
    facts.cache["disrupted"] = out
    return out


# Evictions that say only that the NodeClaim went (deleted by hand, expired, or interrupted): on a node
# EC2 took they belong to the interruption (terminator/eviction.go evictionReason: "Forceful Termination").
FORCED_ONLY = ("ForcefulTermination", "Eviction")


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
                   f"(expiry with terminationGracePeriod, spot interruption or a deleted NodeClaim). ")
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
                 "Eviction": "eviction", "ForcefulTermination": "forced termination"}
# Methods do-not-disrupt holds back: consolidation always, drift until terminationGracePeriod runs out.
PROTECTABLE = CONSOLIDATION | {"Drifted", "Eviction"}
FORCED = frozenset({"Expired", "TerminationGracePeriod"})


def _methods(nodes: list[str], facts: Facts) -> set[str]:
    """The disruption reasons stated for these nodes; a bare eviction counts only when nothing names one."""
    said = {r for n in nodes for r in (facts.cache.get("disruption_reasons") or {}).get(n, [])}
    named = said - set(FORCED_ONLY)
    return named or said


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
    if methods & CONSOLIDATION:
        parts.append("Consolidation removes nodes it finds empty or underutilized; it is graceful and never evicts "
                     "a pod annotated karpenter.sh/do-not-disrupt.")
    return " ".join(parts) + (" " if parts else "")
