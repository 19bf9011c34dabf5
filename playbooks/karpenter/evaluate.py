"""One pending pod against one NodePool, in the order Karpenter's scheduler checks it: taints, the NodeClass,
then for each required nodeSelectorTerm the label requirements, the instance types they allow, resources
with daemonset overhead, offerings, minValues and limits (kubernetes-sigs/karpenter
pkg/controllers/provisioning/scheduling/{scheduler,nodeclaim}.go). Returns data; findings are worded by
playbooks/analyzers/pending.py."""
from __future__ import annotations

from dataclasses import dataclass, field

from playbooks.facts import Facts, PodFacts
from playbooks.karpenter import labels as lbl
from playbooks.karpenter import limits as lim
from playbooks.karpenter import offerings as off
from playbooks.karpenter import resources as res
from playbooks.karpenter.controller_settings import BEST_EFFORT
from playbooks.karpenter.nodeconfig import NodeConfig, discovered_memory, node_config
from playbooks.karpenter.requirements import (
    Incompatible, Requirements, instance_requirements, is_auto_mode, label_prefix, min_values_unmet,
    nodepool_requirements, pod_terms,
)

# Stages in the order Karpenter meets them; a term that fails later got further.
STAGES = ("label", "no_types", "type_requirements", "resources", "efa", "offering", "min_values", "limit")


@dataclass
class Blocker:
    kind: str  # taint, nodeclass, or one of STAGES
    weight: int = 1  # how far the NodePool is from serving the pod: a pool without GPUs at all is clearly not meant
    data: dict = field(default_factory=dict)


@dataclass
class Verdict:
    nodepool: str
    blockers: list[Blocker] = field(default_factory=list)
    verified: bool = True  # False: no instance-type facts, so only labels, taints and limits were checked
    # set when a term passed only because no zone offering of its instance types was known while its zones
    # are restricted: {"zones": ..., "types": ...}
    offerings_unknown: dict | None = None
    # a term that passed can launch into an available reserved offering (capacity reservation, Capacity Block)
    reserved: bool = False

    @property
    def ok(self) -> bool:
        return not self.blockers

    @property
    def score(self) -> int:
        return sum(b.weight for b in self.blockers)


def evaluate(pod: PodFacts, nodepool: dict, facts: Facts) -> Verdict:
    name = nodepool["metadata"]["name"]
    auto = is_auto_mode(nodepool)
    requests = res.pod_requests(pod.pod)
    verdict = Verdict(name, verified=_verifiable(name, requests, facts))
    spec = (nodepool.get("spec") or {}).get("template", {}).get("spec") or {}
    # kubernetes-sigs/karpenter pkg/scheduling/taints.go ToleratesPod against the template's taints
    # (startupTaints are expected to be removed, so they do not count)
    missing = res.untolerated(spec.get("taints") or [], (pod.pod.get("spec") or {}).get("tolerations") or [])
    if missing:
        verdict.blockers.append(Blocker("taint", 1, {"taints": missing, "all": spec.get("taints") or []}))
    nodeclass_key, nodeclass = off.nodeclass_of(nodepool, facts.nodeclasses)
    broken = off.not_ready(nodeclass)
    if broken:
        verdict.blockers.append(Blocker("nodeclass", 1, {"nodeclass": nodeclass_key, "condition": broken}))
    np_reqs = nodepool_requirements(nodepool, karpenter_version=facts.karpenter.version)
    # a registered node's memory stands in for the VM overhead estimate of its type (nodeconfig.discovered_memory)
    discovered = discovered_memory([*facts.nodes.values(), *facts.peer_nodes.values()],
                                   nodeclass_name=nodeclass_key.split("/", 1)[1], nodeclass=nodeclass,
                                   nodeclaims=facts.nodeclaims, controller_version=facts.karpenter.version)
    config = node_config(nodepool=nodepool, nodeclass=nodeclass, controller_version=facts.karpenter.version,
                         vm_overhead=facts.karpenter.vm_memory_overhead_percent, discovered=discovered)
    outcomes = [_term(term, np_reqs, nodepool=nodepool, requests=requests, facts=facts, auto=auto,
                      nodeclass=nodeclass, verdict=verdict, config=config) for term in pod_terms(pod.pod)]
    for index, outcome in enumerate(outcomes):
        if outcome is not None:
            outcome.data["term"] = index
    if any(o is None for o in outcomes):
        return verdict
    # report the term that got furthest (Karpenter tried them all); the first of equals
    best = max(outcomes, key=lambda b: (STAGES.index(b.kind), -b.data["term"]))
    best.data["terms"] = len(outcomes)
    verdict.blockers.append(best)
    return verdict


def _verifiable(nodepool: str, requests: dict, facts: Facts) -> bool:
    """Whether the instance-type facts can decide for this pod. The embedded catalogue (used without EC2)
    holds only GPU and accelerated types: it decides for a pod that needs an accelerator, not for others."""
    if facts.ec2.unavailable is not None or nodepool not in facts.ec2.candidates:
        return False
    return facts.ec2.source == "ec2" or any(requests.get(r) for r in res.ACCELERATORS)


def _term(term: Requirements, np_reqs: Requirements, *, nodepool: dict, requests: dict, facts: Facts, auto: bool,
          nodeclass: dict | None, verdict: Verdict, config: NodeConfig) -> Blocker | None:
    # kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/nodeclaim.go CanAdd:
    # Compatible(podRequirements, AllowUndefinedWellKnownLabels)
    bad: Incompatible | None = np_reqs.compatible(term, allow_undefined=lbl.well_known(auto_mode=auto))
    if bad is not None:
        return Blocker("label", 2, {"incompatible": bad, "requirements": term})
    merged = np_reqs.merged(term)
    name = nodepool["metadata"]["name"]
    if not verdict.verified:
        block = lim.blocking_by_request(nodepool, requests)
        return Blocker("limit", 1, {"block": block, "requests": requests}) if block else None
    prefix = label_prefix(nodepool)
    candidates = facts.ec2.candidates.get(name, {})
    if not candidates:
        return Blocker("no_types", 10, {"requirements": np_reqs})
    if requests.get(res.GPU) and not any(i.gpu_count for i in candidates.values()):
        return Blocker("no_types", 10, {"requirements": np_reqs, "gpus": requests[res.GPU], "candidates": candidates})
    # nodeclaim.go filterInstanceTypesByRequirements: compatible(it, requirements) = it.Requirements.Intersects
    # (zone-id from the NodeClass subnets: offerings.type_zone_ids)
    types = {t: i for t, i in candidates.items() if instance_requirements(
        i, prefix=prefix, zone_ids=off.type_zone_ids(t, ec2=facts.ec2, nodeclass=nodeclass)).intersects(merged) is None}
    if not types:
        return Blocker("type_requirements", 2, {"requirements": term, "merged": merged, "candidates": candidates})
    overhead, daemons = res.daemonset_overhead(facts.daemonsets, nodepool, auto_mode=auto)
    per_type: dict[str, tuple[dict, list[str]]] = {}
    if config.at_least((1, 14)):
        # kubernetes-sigs/karpenter v1.14 scheduler.go buildDaemonOverheadGroups (#2975): a DaemonSet counts
        # only on the instance types its pods could run on; v1.0-v1.13 getDaemonOverhead counted it on all
        per_type = {t: res.daemonset_overhead(facts.daemonsets, nodepool, auto_mode=auto, info=i, prefix=prefix)
                    for t, i in types.items()}
    # aws types.go NewInstanceType: allocatable from the NodeClass's kubelet, storage and AMI family
    fit = res.fit(requests, overhead, types, config=config, per_type={t: o for t, (o, _) in per_type.items()})
    if not fit.fitting:
        # EFA capacity as computeCapacity sets it: the NodeClass's efa-only networkInterfaces override the type's
        kind = ("efa" if requests.get(res.EFA) and not any(res.capacity(i, config).get(res.EFA) for i in types.values())
                else "resources")
        overhead, daemons = per_type.get(_closest(fit) or "", (overhead, daemons))
        return Blocker(kind, 1, {"requests": requests, "overhead": overhead, "daemonsets": daemons, "types": types,
                                 "missing": fit.missing, "allocatable": fit.allocatable, "config": config})
    offers = off.check(merged, fit.fitting, ec2=facts.ec2, nodeclass=nodeclass)
    # aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/offering/base_resolver.go and
    # reserved_capacity_resolver.go: every offering of a type the NodeClass's networkInterfaces do not fit
    # (compatibility.go IsCompatibleWithNodeClass) is unavailable
    incompatible = sorted(t for t, i in offers.offered.items() if not res.nodeclass_compatible(i, config))
    if incompatible and len(incompatible) == len(offers.offered):
        return Blocker("offering", 1, {"offerings": offers, "types": fit.fitting, "merged": merged,
                                       "nodeclass_incompatible": incompatible, "config": config})
    offers.offered = {t: i for t, i in offers.offered.items() if t not in incompatible}
    if not offers.offered:
        return Blocker("offering", 1, {"offerings": offers, "types": fit.fitting, "merged": merged})
    # passed only for want of data: a zone pin with no zone offerings known, or spot / reserved only with
    # capacity types not checked (on-demand is offered wherever the type is)
    pinned = merged.by_key.get(lbl.ZONE)
    zone_unknown = pinned is not None and not pinned.complement and not offers.where
    capacity_unknown = not offers.capacity_checked and "on-demand" not in offers.capacity_types
    if zone_unknown or capacity_unknown:
        verdict.offerings_unknown = {"zones": offers.zones if zone_unknown else None, "types": offers.offered,
                                     "capacity_types": offers.capacity_types if capacity_unknown else None}
    unmet = min_values_unmet(merged, offers.offered, prefix=prefix,
                             offered=off.offering_values(offers.offered, ec2=facts.ec2, nodeclass=nodeclass))
    # the controller's --min-values-policy BestEffort relaxes minValues and launches (controller_settings.py)
    if unmet and facts.karpenter.min_values_policy != BEST_EFFORT:
        return Blocker("min_values", 1, {"unmet": unmet, "types": offers.offered})
    block = lim.blocking(nodepool, offers.offered, config)
    if block:
        return Blocker("limit", 1, {"block": block, "requests": requests})
    verdict.reserved = verdict.reserved or _reserved_compatible(offers, merged)
    return None


def _reserved_compatible(offers: off.Offerings, merged: Requirements) -> bool:
    """[core] kubernetes-sigs/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/nodeclaim.go
    offeringsToReserve: an available reserved offering of a remaining type compatible with the NodeClaim's
    requirements (zone, capacity type)."""
    if "reserved" not in offers.capacity_types:
        return False
    zone_req = merged.get(lbl.ZONE)
    return any(cts is not None and "reserved" in cts and zone_req.has(zone)
               and (offers.zones is None or zone in offers.zones)
               for name in offers.offered for zone, cts in (offers.where.get(name) or {}).items())


def _closest(fit: res.Fit) -> str | None:
    """The instance type with the most allocatable of the resource that fails on the most types: the one
    a finding names, whose daemonset overhead it quotes."""
    counts: dict[str, int] = {}
    for missing in fit.missing.values():
        for resource in missing:
            counts[resource] = counts.get(resource, 0) + 1
    if not counts:
        return None
    resource = res.shortfall({r: 1 for r in counts if counts[r] == max(counts.values())}, {})[0]
    return max(fit.missing, key=lambda t: (fit.allocatable.get(t, {}).get(resource, 0), t))
