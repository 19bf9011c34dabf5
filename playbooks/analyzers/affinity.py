"""Required pod affinity that can never be met.

kube-scheduler and Karpenter both let the first pod of a self-affine group land: when no pod matches
the term anywhere and the pod matches its own terms, the term counts as satisfied
([k8s] kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity/filtering.go
satisfyPodAffinity; [core] kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/
topologygroup.go nextDomainAffinity "pick a domain at random to bootstrap scheduling"). So a group of
replicas with affinity to their own job is not stuck by itself. It is stuck when:

- the pod does not match its own selector and no pod matching it exists anywhere: nothing to join;
- the term's topology domain is one node (hostname) and the group's summed requests exceed every
  instance type its NodePools allow: the first pods land, the rest wait for room that never comes;
- the pods to join run in domains (zones) where none of the pod's NodePools can launch a node.
"""
from __future__ import annotations

from playbooks.analyzers import evidence as ev
from playbooks.analyzers.fixes import owner_patch
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.gather_ec2 import considered_nodepools
from playbooks.karpenter import resources
from playbooks.karpenter.topology import (
    GPU, HOSTNAME, NODE_KEYS, GroupFit, group_fits_one_node, launchable_domains, matching_pods, merge_domains,
    occupied_domains, required_terms, selector_matches, selector_string, term_namespaces, term_selector,
)
from playbooks.model import Evidence, Finding

CODE = "scheduling.pod_affinity_unsatisfiable"


def analyze(facts: Facts):
    pending = facts.pending_pods()
    judged: set[tuple] = set()
    for pod in pending:
        terms = required_terms(pod, "podAffinity")
        for term in terms:
            group_key = (pod.namespace, selector_string(term_selector(term, pod)), term.get("topologyKey", ""))
            if group_key in judged:
                continue  # replicas of one job share the term: one finding for the group
            judged.add(group_key)
            try:
                finding = _judge(pod, term, terms, facts, pending)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                # a malformed field costs this check, not the diagnosis
                facts.gaps.append(f"Pod affinity of pod {pod.name} not checked: {type(exc).__name__}: {exc}")
                continue
            if finding:
                yield finding


def _judge(pod: PodFacts, term: dict, terms: list[dict], facts: Facts, pending: list[PodFacts]) -> Finding | None:
    key = term.get("topologyKey", "")
    selector = term_selector(term, pod)
    counts, unknown = occupied_domains(term, pod=pod, facts=facts)
    if counts and key == HOSTNAME and not unknown:
        return _nodes_to_join_are_full(pod, term, counts, facts)
    if counts or unknown:
        return _peers_out_of_reach(pod, term, counts, facts) if counts and key not in NODE_KEYS else None
    # interpodaffinity/filtering.go: the bootstrap exception needs the pod to match ALL its own terms.
    if not all(selector_matches(term_selector(t, pod), pod.labels) for t in terms):
        if matching_pods(facts, namespaces=term_namespaces(term, pod), selector=selector, exclude=pod):
            return None  # a matching pod exists, pending: once it lands this pod can join it
        if term_namespaces(term, pod) != {pod.namespace} or "peer pods" in facts.unread:
            return None  # pods of other namespaces (or the peer read) were not listed: absence is not known
        return _nothing_to_join(pod, term, facts)
    if key not in NODE_KEYS:
        return None  # a zone (or wider) domain holds many nodes: the group always has room
    group = [p for p in pending if p.namespace == pod.namespace and term in required_terms(p, "podAffinity")
             and selector_matches(selector, p.labels)]
    nodepools = [facts.nodepools[n] for n in considered_nodepools(pod, facts) if n in facts.nodepools]
    if not nodepools:
        return None
    fit = group_fits_one_node(group, nodepools=nodepools, facts=facts)
    return None if fit.fits else _group_too_big(pod, term, group, fit, nodepools, facts)


def _job(pod: PodFacts) -> str:
    return pod.labels.get("training.kubeflow.org/job-name") or pod.labels.get("job-name") or pod.name


def _fix(pod: PodFacts, term: dict, facts: Facts, *, reason: str):
    replica_types = list(((facts.owner or {}).get("spec") or {}).get("pytorchReplicaSpecs") or {}) or None
    preferred = {"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": None,
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}],
    }}
    return render_fix("pod_affinity_preferred.yaml.j2", **owner_patch(pod, {"affinity": preferred}, replica_types=replica_types),
                      topology_key=term.get("topologyKey", ""), job=_job(pod), reason=reason)


def _scheduler_lines(pod: PodFacts, facts: Facts) -> list[Evidence]:
    out = ev.events(pod, reasons=("FailedScheduling",), components=("karpenter", "eks-auto-mode"))[-1:]
    out += ev.events(pod, reasons=("FailedScheduling",), components=("default-scheduler",))[-1:]
    owner_events = [e for e in facts.owner_events if e.get("reason") in ("Unschedulable", "FailedScheduling")]
    if owner_events and not out:
        out.append(ev.from_event(f"{facts.owner_kind}/{pod.namespace}/{_job(pod)}", owner_events[-1]))
    return out


def _term_evidence(pod: PodFacts, term: dict) -> Evidence:
    return ev.field(pod.ref, "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution", [term])


def _group_too_big(pod: PodFacts, term: dict, group: list[PodFacts], fit: GroupFit, nodepools: list[dict],
                   facts: Facts) -> Finding:
    key = term.get("topologyKey", "")
    job = _job(pod)
    names = ", ".join(n["metadata"]["name"] for n in nodepools)
    shown = [r for r in (GPU, resources.CPU, resources.MEMORY) if fit.totals.get(r)]
    wanted = ", ".join(f"{r}={resources.show(r, fit.totals[r])}" for r in shown)
    if fit.largest:
        biggest = "; ".join(f"{t} ({', '.join(f'{r}={resources.show(r, c.get(r, 0))}' for r in shown)})"
                            for t, c in fit.largest.items())
        offer = f"the largest instance types NodePool {names} allows offer {biggest}"
    else:
        offer = "no EC2 instance type has more than 8 NVIDIA GPUs"
    evidence = [
        _term_evidence(pod, term),
        Evidence(source=f"pods of {job} (Pending, same podAffinity term)",
                 text=ev.trim(f"{len(group)} pods: {', '.join(p.name for p in group[:8])}; together {wanted}")),
        Evidence(source="ec2 describe_instance_types" if facts.ec2.source == "ec2" else f"instance catalogue ({facts.ec2.source})",
                 text=ev.trim(offer)),
        *_scheduler_lines(pod, facts),
    ]
    return Finding(
        code=CODE, severity="error", confidence="high" if fit.verified else "medium",
        title=(f"{len(group)} pods of {job} must share one node ({key}) but together need {wanted}; "
               f"no instance type NodePool {names} allows is that large"),
        detail=(f"Every pod of {job} requires a pod of {job} on the same {key}. The first one may land (kube-scheduler "
                f"and Karpenter let a self-affine group bootstrap), but all the others must then join that one node, "
                f"and {offer}. The pods that do not fit stay Pending for good: neither the scheduler nor Karpenter "
                f"will place them on another node. Make the affinity preferred, or widen its topologyKey to "
                f"topology.kubernetes.io/zone, or request fewer resources per pod."),
        evidence=evidence,
        fix=_fix(pod, term, facts, reason=f"the {len(group)} pods cannot fit on one node"),
    )


def _nothing_to_join(pod: PodFacts, term: dict, facts: Facts) -> Finding:
    key = term.get("topologyKey", "")
    selector = selector_string(term_selector(term, pod))
    namespaces = term_namespaces(term, pod)
    where = ", ".join(sorted(namespaces)) if namespaces is not None else "any namespace"
    evidence = [
        _term_evidence(pod, term),
        ev.field(pod.ref, "metadata.labels", pod.labels),
        Evidence(source=f"pods in {where} matching {selector}", text="none"),
        *_scheduler_lines(pod, facts),
    ]
    return Finding(
        code=CODE, severity="error", confidence="high" if "peer pods" not in facts.unread else "medium",
        title=f"{pod.name} requires a pod matching {selector} on the same {key}, and no such pod exists",
        detail=(f"{pod.name} has a required podAffinity on pods matching {selector} in {where}. None exists, and the "
                f"pod does not match its own selector, so the scheduler's bootstrap exception (a pod matching its own "
                f"term may land first) does not apply: the pod stays Pending until such a pod runs. Start the pod it "
                f"should join, fix the selector, or make the affinity preferred."),
        evidence=evidence,
        fix=_fix(pod, term, facts, reason=f"no pod matches {selector}"),
    )


def _nodes_to_join_are_full(pod: PodFacts, term: dict, counts: dict[str, int], facts: Facts) -> Finding | None:
    """Pods of the group already run, and the pod may only join their node(s) (hostname): Karpenter cannot
    help ([core] topologygroup.go nextDomainAffinity only offers domains holding a matching pod), so the
    pod waits until one of those nodes has room. Reported when its requests exceed what is left on every
    such node after the pods we know run there (other pods only take more)."""
    wanted = {k: v for k, v in resources.pod_requests(pod.pod).items() if k != resources.PODS}
    short: dict[str, list[str]] = {}
    for node_name in counts:
        node = facts.nodes.get(node_name) or facts.peer_nodes.get(node_name)
        allocatable = ((node or {}).get("status") or {}).get("allocatable")
        if not allocatable:
            return None  # a node we cannot size may have room
        free = {}
        for name, value in allocatable.items():
            try:
                free[name] = resources.quantity(value)
            except ValueError:
                continue
        for other in _pods_on(node_name, facts):
            for name, value in resources.pod_requests(other).items():
                free[name] = free.get(name, 0.0) - value
        missing = resources.shortfall(wanted, free)
        if not missing:
            return None
        short[node_name] = [f"{r}: wants {resources.show(r, wanted[r])}, free {resources.show(r, max(free.get(r, 0.0), 0.0))}"
                            for r in missing]
    job = _job(pod)
    selector = selector_string(term_selector(term, pod))
    evidence = [
        _term_evidence(pod, term),
        *[Evidence(source=f"node/{n} allocatable minus the pods known to run there", text=ev.trim("; ".join(v)))
          for n, v in short.items()],
        *_scheduler_lines(pod, facts),
    ]
    nodes = ", ".join(short)
    return Finding(
        code=CODE, severity="error", confidence="high" if "peer pods" not in facts.unread else "medium",
        title=f"{pod.name} must join pods matching {selector} on node {nodes}, which has no room left for it",
        detail=(f"The required podAffinity on kubernetes.io/hostname only admits the node(s) where pods matching "
                f"{selector} run ({nodes}), and {pod.name}'s requests exceed what is left there. Karpenter cannot "
                f"launch a node for it: a new node holds no matching pod. The pod waits until the running pods of "
                f"{job} finish, which a distributed job waiting for all its workers never does. Make the affinity "
                f"preferred, or widen its topologyKey to topology.kubernetes.io/zone."),
        evidence=evidence,
        fix=_fix(pod, term, facts, reason=f"node {nodes} has no room for {pod.name}"),
    )


def _pods_on(node_name: str, facts: Facts) -> list[dict]:
    seen: set[tuple[str, str]] = set()
    out = []
    for raw in [p.pod for p in facts.pods] + [p for pods in facts.peer_pods.values() for p in pods]:
        meta = raw.get("metadata") or {}
        ident = (meta.get("namespace", ""), meta.get("name", ""))
        if ident in seen or (raw.get("spec") or {}).get("nodeName") != node_name:
            continue
        seen.add(ident)
        if (raw.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            out.append(raw)
    return out


def _peers_out_of_reach(pod: PodFacts, term: dict, counts: dict[str, int], facts: Facts) -> Finding | None:
    key = term.get("topologyKey", "")
    parts = [launchable_domains(key, pod=pod, nodepool=facts.nodepools[n], facts=facts)
             for n in considered_nodepools(pod, facts) if n in facts.nodepools]
    domains = merge_domains(key, parts)
    if domains.values is None or set(counts) & domains.values:
        return None
    selector = selector_string(term_selector(term, pod))
    shown = ", ".join(f"{d}: {n}" for d, n in sorted(counts.items()))
    evidence = [
        _term_evidence(pod, term),
        Evidence(source=f"pods matching {selector} per {key}", text=shown),
        Evidence(source="domains the NodePools can launch in",
                 text=ev.trim(f"{', '.join(sorted(domains.values)) or 'none'} ({'; '.join(domains.notes)})")),
        *_scheduler_lines(pod, facts),
    ]
    return Finding(
        code=CODE, severity="error", confidence="high" if domains.verified else "medium",
        title=(f"{pod.name} must join pods matching {selector} in {key} {', '.join(sorted(counts))}, where its "
               f"NodePools cannot launch a node"),
        detail=(f"The pods it requires to share a {key} with run in {shown}. Karpenter may only launch in a domain that "
                f"already holds a matching pod (topologygroup.go nextDomainAffinity), and the pod's NodePools can "
                f"launch only in {', '.join(sorted(domains.values)) or 'no domain'}. Unless an existing node there has "
                f"room, the pod stays Pending. Allow the NodePool in that {key}, or make the affinity preferred."),
        evidence=evidence,
        fix=_fix(pod, term, facts, reason=f"no node can be launched in {', '.join(sorted(counts))}"),
    )

