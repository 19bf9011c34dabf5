"""Karpenter disrupting nodes that run training pods (consolidation, drift, expiry).

A node of the job was disrupted when its events say "Disrupting Node" or the Karpenter controller
logged "disrupting node(s)" naming it. Training jobs lose every rank when one dies, so the fix is to
protect their pods (``karpenter.sh/do-not-disrupt``) and to consolidate GPU NodePools only when empty.
"""
from __future__ import annotations

from playbooks.analyzers import evidence as ev
from playbooks.analyzers.owners import pod_owner
from playbooks.analyzers.scan import signals
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
    names = {p.node_name for p in facts.pods if p.node_name} | set(facts.nodes)
    for loc in signals(facts):
        sig = loc.signal
        if sig.code != "karpenter.disruption" or sig.severity == "info":
            continue
        if loc.origin == "node-event" and loc.node and loc.by_speaker:  # not a tenant's word for Karpenter's
            out.setdefault(loc.node, []).append(Evidence(sig.source, sig.line))
        elif loc.origin == "karpenter":
            for name in names:
                if name and name in sig.line:
                    out.setdefault(name, []).append(Evidence(sig.source, sig.line))
    for name, node in facts.nodes.items():
        for taint in ((node or {}).get("spec") or {}).get("taints") or []:
            if taint.get("key") == "karpenter.sh/disrupted" and name in out:
                out[name].append(ev.field(f"node/{name}", "spec.taints", taint))
    facts.cache["disrupted"] = out
    return out


def analyze(facts: Facts):
    disrupted = disrupted_nodes(facts)
    victims = [p for p in facts.pods if p.node_name in disrupted]
    if not victims:
        return
    own = [p for p in victims if facts.is_target_pod(p)]
    first = (own or victims)[0]
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
    remediations = []
    if len(protected) < len(victims):
        remediations.append(annotate_do_not_disrupt(kind=kind, namespace=first.namespace, name=owner_name))
    np_name = (nodepool or {}).get("metadata", {}).get("name")
    if np_name and policy != "WhenEmpty":
        remediations.append(nodepool_consolidation(nodepool=np_name, consolidate_after="10m"))
    specs = owner.workload.replica_specs
    replica_types = (list(((facts.owner or {}).get("spec") or {}).get(specs) or {}) or None) if specs else None
    if owner.key == "jobset" and facts.owner_kind == "jobset" and facts.owner is not None:
        replica_types = [rj.get("name") for rj in (facts.owner.get("spec") or {}).get("replicatedJobs") or []] or None
    patches = [merge_patch(r, replica_types=replica_types) for r in remediations]
    fix = render_fix("training_disruption.yaml.j2", patches=patches, owner=f"{owner_kind} {first.namespace}/{owner_name}",
                     nodepool=np_name or "the GPU NodePool") if patches else None
    nodes = sorted({p.node_name for p in victims if p.node_name})
    evidence = [e for n in nodes for e in disrupted[n]]
    evidence += [_termination(p) for p in victims if _termination(p)]
    if nodepool:
        evidence.append(ev.field(f"nodepool/{np_name}", "spec.disruption", nodepool["spec"].get("disruption") or {}))
    whose = "" if own else f"peer{'s' if len(victims) > 1 else ''} of {facts.target}: "
    detail = (f"Karpenter disrupted node{'s' if len(nodes) > 1 else ''} {', '.join(nodes)} while "
              f"{', '.join(p.name for p in victims[:6])} ran on {'them' if len(nodes) > 1 else 'it'}. A distributed "
              f"training job loses every rank when one pod dies (NCCL peers stop answering, torchrun gets SIGTERM). ")
    if policy != "WhenEmpty" and np_name:
        detail += (f"NodePool {np_name} uses consolidationPolicy {policy}, so nodes that look underutilized are "
                   f"consolidated even with training pods on them. ")
    if protected:
        detail += (f"{len(protected)} of these pods carried {DO_NOT_DISRUPT}: the disruption was involuntary "
                   f"(expiry with terminationGracePeriod, spot interruption or a deleted NodeClaim). ")
    elif lapsed:
        detail += (f"{', '.join(p.name for p in lapsed[:3])} carried {readings[lapsed[0].name].why}: Karpenter no longer "
                   f"counted {'them' if len(lapsed) > 1 else 'it'} as protected. ")
    else:
        detail += f"None of the pods carries the {DO_NOT_DISRUPT}: \"true\" annotation that blocks voluntary disruption. "
    detail += "Protect running jobs with the annotation and consolidate GPU NodePools only when empty."
    yield Finding(
        code="karpenter.disruption", severity="critical" if own else "error", confidence="high",
        title=f"{whose}Karpenter disrupted node{'s' if len(nodes) > 1 else ''} running training pods ({', '.join(nodes[:3])})",
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
