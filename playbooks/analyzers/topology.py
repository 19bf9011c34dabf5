"""Topology constraints a pending pod cannot meet: spread, anti-affinity, volume zones.

Each is judged against the domains the pod's NodePools can create (zones they allow, where an instance
type that fits the pod is offered, in the EC2NodeClass's subnets) and the matching pods already
placed per domain, the way kube-scheduler's filters and Karpenter's topology tracking decide
(playbooks/karpenter/topology.py cites each rule). A constraint Karpenter can meet by launching a node
is not reported.

hostPorts are not judged here: a pod whose hostPort is taken on every existing node is served by a new
node ([core] kubernetes-sigs/karpenter pkg/scheduling/hostportusage.go tracks ports per NodeClaim and
opens another), so it is stuck only when no NodePool can launch, which the pending analysis reports.
"""
from __future__ import annotations

import copy

from playbooks.analyzers import evidence as ev
from playbooks.analyzers.fixes import owner_patch
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.karpenter.topology import (
    NODE_KEYS, ZONE, Domains, SpreadCheck, VolumeZones, check_spread, occupied_domains, pod_launchable_domains,
    required_terms, selector_matches, selector_string, term_selector, volume_zones,
)
from playbooks.model import Evidence, Finding
from playbooks.karpenter import resources as res
from playbooks.karpenter.requirements import nodepool_requirements

SPREAD = "scheduling.topology_spread"
AFFINITY = "scheduling.pod_affinity_unsatisfiable"
VOLUME = "scheduling.volume_zone_conflict"
SCHEDULER_WORDS = {
    SPREAD: "didn't match pod topology spread constraints",
    AFFINITY: "didn't match pod anti-affinity rules",
    VOLUME: "volume node affinity conflict",
}


def analyze(facts: Facts):
    judged: set[tuple] = set()
    pending = facts.pending_pods()
    for pod in pending:
        try:
            found = [*_spread(pod, facts), *_anti_affinity(pod, facts, pending), *_volumes(pod, facts)]
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            # a malformed field (maxSkew "one", a quantity we cannot read) costs this check, not the diagnosis
            facts.gaps.append(f"Topology constraints of pod {pod.name} not checked: {type(exc).__name__}: {exc}")
            continue
        for group, finding in found:
            if group not in judged:  # replicas of one job share constraints: one finding per group
                judged.add(group)
                yield finding


def _domains(key: str, pod: PodFacts, facts: Facts) -> tuple[Domains, list[str]]:
    return pod_launchable_domains(key, pod=pod, facts=facts)


def _scheduler_lines(pod: PodFacts, code: str) -> list[Evidence]:
    """The scheduler's and Karpenter's own FailedScheduling lines, the ones naming this cause first."""
    lines = ev.events(pod, reasons=("FailedScheduling",))
    words = SCHEDULER_WORDS[code]
    naming = [e for e in lines if words in e.text or "unsatisfiable topology constraint" in e.text]
    return (naming or lines)[-2:]


def _job(pod: PodFacts) -> str:
    return pod.labels.get("training.kubeflow.org/job-name") or pod.labels.get("job-name") or pod.name


def _replica_types(facts: Facts) -> list[str] | None:
    return list(((facts.owner or {}).get("spec") or {}).get("pytorchReplicaSpecs") or {}) or None


def _confidence(domains: Domains, unknown: int, facts: Facts) -> str:
    return "high" if domains.verified and not unknown and "peer pods" not in facts.unread else "medium"


# -- topology spread -------------------------------------------------------------------------------

def _spread(pod: PodFacts, facts: Facts):
    constraints = list((pod.pod.get("spec") or {}).get("topologySpreadConstraints") or [])
    for index, constraint in enumerate(constraints):
        key = constraint.get("topologyKey", "")
        domains, names = _domains(key, pod, facts)
        check = check_spread(constraint, pod=pod, facts=facts, launchable=domains)
        if check is None or not check.blocked or check.unknown_pods:
            # matching pods on nodes whose domain was not read could raise the global minimum and open a
            # domain: a 'blocked' verdict would not be sure (the scheduler's own message still speaks)
            continue
        group = (SPREAD, pod.namespace, key, selector_string(constraint.get("labelSelector")))
        yield group, _spread_finding(pod, check, index=index, constraints=constraints, domains=domains,
                                     nodepools=names, facts=facts)


def _spread_finding(pod: PodFacts, check: SpreadCheck, *, index: int, constraints: list[dict], domains: Domains,
                    nodepools: list[str], facts: Facts) -> Finding:
    counts = ", ".join(f"{d}: {n}" for d, n in check.counts.items()) or "no domain"
    launchable = ", ".join(sorted(check.launchable)) or "none"
    selector = selector_string(check.constraint.get("labelSelector"))
    after = ", ".join(f"{d} -> {check.counts[d] + int(check.self_match) - check.global_min}"
                      for d in sorted(check.launchable) if d in check.counts)
    min_note = (f"; fewer than minDomains={check.min_domains} domains exist, so the global minimum counts as 0"
                if check.min_domains is not None and len(check.counts) < check.min_domains else "")
    fewest = min(check.counts.values(), default=0)
    unreachable = sorted(d for d, n in check.counts.items() if d not in check.launchable and n == fewest)
    evidence = [
        ev.field(pod.ref, f"spec.topologySpreadConstraints[{index}]", check.constraint),
        Evidence(source=f"pods matching {selector} per {check.key}",
                 text=ev.trim(f"{counts} (global minimum {check.global_min}{min_note})"
                              + (f"; {check.unknown_pods} more on nodes whose {check.key} was not read" if check.unknown_pods else ""))),
        Evidence(source=f"{check.key} NodePool {', '.join(nodepools)} can launch in",
                 text=ev.trim(f"{launchable} ({'; '.join(domains.notes) or 'from the NodePool requirements'})")),
        *_scheduler_lines(pod, SPREAD),
    ]
    patched = copy.deepcopy(constraints)
    patched[index]["whenUnsatisfiable"] = "ScheduleAnyway"
    fix = render_fix("topology_spread.yaml.j2",
                     **owner_patch(pod, {"topologySpreadConstraints": patched}, replica_types=_replica_types(facts)),
                     key=check.key, unreachable=unreachable, nodepools=nodepools)
    where = (f" The domains holding fewest pods ({', '.join(unreachable)}) are ones no node can be launched in for "
             f"this pod.{_foreign_domains(pod, check, unreachable, nodepools, facts)}" if unreachable else "")
    return Finding(
        code=SPREAD, severity="error", confidence=_confidence(domains, check.unknown_pods, facts),
        title=(f"{pod.name} cannot be placed in any {check.key} without exceeding maxSkew={check.max_skew} "
               f"(matching pods: {counts})"),
        detail=(f"The constraint on {check.key} (whenUnsatisfiable: DoNotSchedule) allows a domain only while its "
                f"matching pods{' plus this one' if check.self_match else ''} minus the global minimum stay within "
                f"maxSkew={check.max_skew}. NodePool {', '.join(nodepools)} can launch in {launchable}; there the skew "
                f"would become {after or 'undefined'}.{where} Neither kube-scheduler nor Karpenter will place the pod. "
                f"Let the NodePool launch where pods are fewest, raise maxSkew, or use ScheduleAnyway."),
        evidence=evidence, fix=fix,
    )


def _foreign_domains(pod: PodFacts, check: SpreadCheck, unreachable: list[str], nodepools: list[str],
                     facts: Facts) -> str:
    """Why a domain the pod cannot launch in still counts: another NodePool can launch there. [core]
    kubernetes-sigs/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/topology.go buildDomainGroups
    registers every NodePool's domains; only nodeTaintsPolicy: Honor drops those of NodePools whose taints
    the pod does not tolerate (topologydomaingroup.go ForEachDomain)."""
    foreign = {d: [n for n in check.sources.get(d, ()) if n not in nodepools] for d in unreachable}
    foreign = {d: names for d, names in foreign.items() if names}
    if not foreign:
        return ""
    names = sorted({n for ns in foreign.values() for n in ns})
    tolerations = (pod.pod.get("spec") or {}).get("tolerations") or []
    tainted = [n for n in names if any(not res.tolerates(t, tolerations) for t in
                                       (((facts.nodepools[n].get("spec") or {}).get("template") or {}).get("spec")
                                        or {}).get("taints") or [])]
    text = (f" Karpenter counts {', '.join(sorted(foreign))} because NodePool {', '.join(names)} can launch there, "
            f"although this pod cannot use it: every NodePool's domains count towards the global minimum.")
    if tainted and not check.honor_taints:
        text += (f" With nodeTaintsPolicy: Honor on the constraint, the domains of NodePool {', '.join(tainted)} "
                 f"(whose taints the pod does not tolerate) would not count.")
    return text


# -- required pod anti-affinity --------------------------------------------------------------------

def _anti_affinity(pod: PodFacts, facts: Facts, pending: list[PodFacts]):
    """[core] topologygroup.go nextDomainAntiAffinity: only a domain holding no matching pod is allowed;
    [k8s] interpodaffinity/filtering.go satisfyPodAntiAffinity likewise. On hostname a new node is always
    an empty domain, so only keys with a bounded set of domains (zones) can run out."""
    terms = required_terms(pod, "podAntiAffinity")
    for index, term in enumerate(terms):
        key = term.get("topologyKey", "")
        if key in NODE_KEYS:
            continue
        domains, names = _domains(key, pod, facts)
        if domains.values is None:
            continue
        counts, unknown = occupied_domains(term, pod=pod, facts=facts)
        free = sorted(domains.values - set(counts))
        selector = term_selector(term, pod)
        group = [p for p in pending if p.namespace == pod.namespace and term in required_terms(p, "podAntiAffinity")
                 and selector_matches(selector, p.labels)] or [pod]
        # Pending pods of a self-repelling group each take one free domain: the ones beyond stay Pending.
        if len(free) >= len(group):
            continue
        yield (AFFINITY, "anti", pod.namespace, key, selector_string(selector)), _anti_finding(
            pod, term, index=index, counts=counts, unknown=unknown, free=free, group=group, domains=domains,
            nodepools=names, facts=facts)


def _anti_finding(pod: PodFacts, term: dict, *, index: int, counts: dict[str, int], unknown: int, free: list[str],
                  group: list[PodFacts], domains: Domains, nodepools: list[str], facts: Facts) -> Finding:
    key = term.get("topologyKey", "")
    selector = selector_string(term_selector(term, pod))
    shown = ", ".join(f"{d}: {n}" for d, n in sorted(counts.items())) or "none"
    launchable = ", ".join(sorted(domains.values or ())) or "none"
    evidence = [
        ev.field(pod.ref, f"spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[{index}]", term),
        Evidence(source=f"pods matching {selector} per {key}", text=ev.trim(shown)),
        Evidence(source=f"{key} NodePool {', '.join(nodepools)} can launch in",
                 text=ev.trim(f"{launchable} ({'; '.join(domains.notes) or 'from the NodePool requirements'})")),
        *_scheduler_lines(pod, AFFINITY),
    ]
    if len(group) > 1:
        evidence.insert(2, Evidence(source="pending pods with this anti-affinity",
                                    text=ev.trim(f"{len(group)}: {', '.join(p.name for p in group[:8])}")))
    anti = {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": None,
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}],
    }}
    fix = render_fix("pod_anti_affinity_preferred.yaml.j2",
                     **owner_patch(pod, {"affinity": anti}, replica_types=_replica_types(facts)), topology_key=key)
    stuck = len(group) - len(free)
    return Finding(
        code=AFFINITY, severity="error", confidence=_confidence(domains, unknown, facts),
        title=(f"{pod.name}'s required pod anti-affinity on {key} leaves {stuck} pod(s) no domain: pods matching "
               f"{selector} already hold {shown}" if counts else
               f"{len(group)} pods repel each other on {key}, but NodePool {', '.join(nodepools)} can launch in only "
               f"{len(domains.values or ())}: {launchable}"),
        detail=(f"A required podAntiAffinity term lets a pod into a {key} only where no pod matching {selector} runs. "
                f"The NodePools can launch in {launchable}; matching pods hold {shown}, leaving "
                f"{', '.join(free) or 'no domain'} free for {len(group)} pending pod(s). {stuck} of them can never be "
                f"placed. Allow more {key} values in the NodePool, or make the anti-affinity preferred."),
        evidence=evidence, fix=fix,
    )


# -- volume zones ----------------------------------------------------------------------------------

def _volumes(pod: PodFacts, facts: Facts):
    """[core] kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/volumetopology.go adds a bound
    PV's zone to the pod's requirements; [k8s] volumebinding checks the PV's nodeAffinity on each node."""
    for pinned in volume_zones(pod, facts):
        domains, names = _domains(ZONE, pod, facts)
        if domains.values is None or pinned.zones & domains.values:
            continue
        yield (VOLUME, pinned.volume), _volume_finding(pod, pinned, domains=domains, nodepools=names, facts=facts)


def _volume_finding(pod: PodFacts, pinned: VolumeZones, *, domains: Domains, nodepools: list[str], facts: Facts) -> Finding:
    zones = ", ".join(sorted(pinned.zones))
    launchable = ", ".join(sorted(domains.values or ())) or "no zone"
    pv = facts.volumes.get(pinned.volume) or {}
    evidence = [
        ev.field(pinned.volume, "spec.nodeAffinity", (pv.get("spec") or {}).get("nodeAffinity"))
        if pinned.source.startswith("spec") else ev.field(pinned.volume, "metadata.labels", (pv.get("metadata") or {}).get("labels")),
        ev.field(pinned.claim, "spec.volumeName", pinned.volume.split("/", 1)[1]),
        Evidence(source=f"zones NodePool {', '.join(nodepools)} can launch in",
                 text=ev.trim(f"{launchable} ({'; '.join(domains.notes) or 'from the NodePool requirements'})")),
        *_scheduler_lines(pod, VOLUME),
    ]
    nodepool = facts.nodepools.get(nodepools[0]) if nodepools else None
    requirements = list((((nodepool or {}).get("spec") or {}).get("template") or {}).get("spec", {}).get("requirements") or [])
    zone_req = next((r for r in requirements if r.get("key") == ZONE and r.get("operator") == "In"), None)
    patched = None
    if nodepool and zone_req and not pinned.zones & set(zone_req.get("values") or []):
        patched = [dict(r, values=sorted({*(r.get("values") or []), *pinned.zones})) if r is zone_req else r
                   for r in requirements]
    fix = render_fix("volume_zone.yaml.j2", volume=pinned.volume.split("/", 1)[1], claim=pinned.claim.rsplit("/", 1)[1],
                     namespace=pod.namespace, zones=sorted(pinned.zones), nodepool=nodepools[0] if nodepools else "",
                     requirements=patched)
    np_reqs = nodepool_requirements(nodepool or {})
    excluded = ZONE in np_reqs and not any(np_reqs.get(ZONE).has(z) for z in pinned.zones)
    why = ("the NodePool's zone requirement excludes it" if excluded
           else "no instance type that fits the pod is offered there, or the EC2NodeClass has no subnet there")
    return Finding(
        code=VOLUME, severity="error", confidence="high" if domains.verified else "medium",
        title=f"{pod.name}'s volume {pinned.volume.split('/', 1)[1]} is in {zones}, where NodePool {', '.join(nodepools)} cannot launch a node",
        detail=(f"Claim {pinned.claim.rsplit('/', 1)[1]} is bound to {pinned.volume}, pinned to {zones} by its "
                f"{pinned.source}. An EBS volume attaches only in its own zone, so the pod can run only there; "
                f"Karpenter adds that zone to the pod's requirements and can launch only in {launchable} ({why}). "
                f"Let the NodePool launch in {zones}, or restore the volume from a snapshot in a zone it can use."),
        evidence=evidence, fix=fix,
    )
