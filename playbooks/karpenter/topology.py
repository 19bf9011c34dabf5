"""Topology as kube-scheduler and Karpenter judge it: label selectors, the domains a NodePool can
create, matching pods per domain, topology spread skew, pod (anti-)affinity and volume zones.

Pure functions over plain dicts and Facts. Each rule cites the upstream code it follows:
[k8s] kubernetes/kubernetes pkg/scheduler/framework/plugins/..., [core] kubernetes-sigs/karpenter
pkg/controllers/provisioning/scheduling/... .
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from playbooks.facts import Facts, PodFacts
from playbooks.karpenter import labels as lbl
from playbooks.karpenter import offerings, resources
from playbooks.karpenter.nodeconfig import NodeConfig, discovered_memory
from playbooks.karpenter.requirements import (
    Requirements, is_auto_mode, label_prefix, nodepool_requirements, pod_terms, type_allowed,
)

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
NODECLAIM = "karpenter.sh/nodeclaim"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
GPU = "nvidia.com/gpu"
# Zone labels older nodes and in-tree / EBS CSI volumes carry instead of topology.kubernetes.io/zone.
ZONE_ALIASES = (ZONE, "failure-domain.beta.kubernetes.io/zone", "topology.ebs.csi.aws.com/zone")
# Keys whose every domain is one node: Karpenter can always create a fresh one.
# [core] topologygroup.go domainMinCount: "hostname or nodeclaim based topologies always have a min pod
# count of zero since we can create one".
NODE_KEYS = (HOSTNAME, NODECLAIM)


# -- label selectors -------------------------------------------------------------------------------

def selector_matches(selector: dict | None, labels: dict) -> bool:
    """metav1.LabelSelectorAsSelector semantics: a nil selector matches nothing, an empty one ({})
    matches everything (apimachinery pkg/apis/meta/v1/helpers.go)."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != str(value):
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), [str(v) for v in expr.get("values") or []]
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def selector_string(selector: dict | None) -> str:
    """The selector as kubectl and the API's labelSelector parameter spell it (sorted by key, as
    metav1.LabelSelectorAsSelector sorts requirements): ``a=b,c in (d,e),!f``."""
    parts: list[tuple[str, str]] = []
    for key, value in ((selector or {}).get("matchLabels") or {}).items():
        parts.append((key, f"{key}={value}"))
    for expr in (selector or {}).get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator"), sorted(str(v) for v in expr.get("values") or [])
        text = {"In": f"{key} in ({','.join(values)})", "NotIn": f"{key} notin ({','.join(values)})",
                "Exists": key, "DoesNotExist": f"!{key}"}.get(op or "", "")
        parts.append((key, text))
    return ",".join(text for _, text in sorted(parts))


def peer_key(namespace: str, selector: dict | None) -> str:
    """The ``Facts.peer_pods`` key for pods of ``namespace`` matching ``selector``."""
    return f"{namespace}|{selector_string(selector)}"


def with_match_label_keys(selector: dict | None, keys: Iterable[str], labels: dict) -> dict | None:
    """matchLabelKeys: the pod's own values for those keys are ANDed into the selector
    ([k8s] podtopologyspread/common.go, interpodaffinity since 1.29)."""
    keys = [k for k in keys if k in labels]
    if selector is None or not keys:
        return selector
    merged = dict(selector)
    merged["matchLabels"] = {**(selector.get("matchLabels") or {}), **{k: labels[k] for k in keys}}
    return merged


def term_namespaces(term: dict, pod: PodFacts) -> set[str] | None:
    """Namespaces an affinity term looks at; None: any namespace (a namespaceSelector is set).
    [k8s] pkg/scheduler/framework/types.go newAffinityTerm: empty namespaces and no namespaceSelector
    mean the pod's own namespace."""
    if term.get("namespaceSelector") is not None:
        return None
    return set(term.get("namespaces") or []) or {pod.namespace}


def matching_pods(facts: Facts, *, namespaces: set[str] | None, selector: dict | None,
                  exclude: PodFacts | None = None) -> list[dict]:
    """Pods (as dicts) in ``namespaces`` matching ``selector``, from the job's pods and the peer pods
    gathered for pending pods' selectors; each pod once. Finished and terminating pods do not count
    ([k8s] podtopologyspread/common.go countPodsMatchSelector skips terminating pods; the scheduler's
    cache holds no Succeeded / Failed pods)."""
    seen: set[tuple[str, str]] = set()
    out = []
    candidates = [p.pod for p in facts.pods] + [p for pods in facts.peer_pods.values() for p in pods]
    for pod in candidates:
        meta = pod.get("metadata") or {}
        ident = (meta.get("namespace", ""), meta.get("name", ""))
        if ident in seen or (exclude is not None and ident == (exclude.namespace, exclude.name)):
            continue
        seen.add(ident)
        if namespaces is not None and ident[0] not in namespaces:
            continue
        if meta.get("deletionTimestamp") or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        if selector_matches(selector, meta.get("labels") or {}):
            out.append(pod)
    return out


# -- domains ---------------------------------------------------------------------------------------

def node_labels(node: dict | None) -> dict:
    return ((node or {}).get("metadata") or {}).get("labels") or {}


def domain_of(labels: dict, key: str) -> str | None:
    """A node's value for a topology key; zone also through its legacy aliases."""
    if key in ZONE_ALIASES:
        return next((labels[k] for k in ZONE_ALIASES if labels.get(k)), None)
    return labels.get(key)


@dataclass(frozen=True)
class Domains:
    """Values of a topology key that new nodes of the pod's NodePools can have.

    ``unbounded``: every new node is a new domain (hostname). ``verified``: from EC2 offerings, not
    only from the NodePool's own requirements. ``values`` is None when it cannot be known."""

    key: str
    values: frozenset[str] | None
    unbounded: bool = False
    verified: bool = False
    # what limited the values, for the finding's detail: "NodePool gpu allows zones [...]", ...
    notes: tuple[str, ...] = ()


def _pod_allows(pod: PodFacts, key: str, value: str) -> bool:
    """Whether any of the pod's required node selector terms allows ``value`` for ``key`` (Karpenter
    relaxes to later terms, so a value any term allows is reachable)."""
    return any(term.get(lbl.normalize(key)).has(value) for term in pod_terms(pod.pod))


def _first_term(pod: PodFacts, nodepool: dict) -> Requirements:
    return nodepool_requirements(nodepool).merged(pod_terms(pod.pod)[0])


def _capacity_config(nodepool: dict, facts: Facts) -> NodeConfig:
    """The estimate's settings that only raise capacity: a registered node's memory for its type
    (nodeconfig.discovered_memory), so that a 'does not fit' stays sure."""
    key, nodeclass = offerings.nodeclass_of(nodepool, facts.nodeclasses)
    return NodeConfig(discovered_memory=discovered_memory(
        [*facts.nodes.values(), *facts.peer_nodes.values()], nodeclass_name=key.split("/", 1)[1],
        nodeclass=nodeclass, nodeclaims=facts.nodeclaims, controller_version=facts.karpenter.version))


def fitting_types(pod: PodFacts, nodepool: dict, facts: Facts) -> dict | None:
    """Instance types of the NodePool that meet the pod's requirements and whose raw capacity holds its
    requests; None: EC2 (or the catalogue) was not asked for this NodePool."""
    name = nodepool["metadata"]["name"]
    if facts.ec2.unavailable is not None or name not in facts.ec2.candidates:
        return None
    reqs = Requirements({k: r for k, r in _first_term(pod, nodepool).by_key.items() if k != ZONE})
    prefix = label_prefix(nodepool)
    wanted = {k: v for k, v in resources.pod_requests(pod.pod).items() if k != resources.PODS}
    config = _capacity_config(nodepool, facts)
    return {t: i for t, i in facts.ec2.candidates[name].items()
            if type_allowed(i, reqs, prefix=prefix) and not resources.shortfall(wanted, resources.capacity(i, config))}


def launchable_domains(key: str, *, pod: PodFacts, nodepool: dict, facts: Facts) -> Domains:
    """Domains of ``key`` where this NodePool can launch a node for ``pod``.

    [core] topology.go / topologydomaingroup.go: Karpenter registers a key's domains from each NodePool's
    requirements and, for zones, from the offerings of the instance types it allows; a pod's own
    requirements then narrow them (podDomains) and the NodeClaim's (nodeDomains) pick one."""
    np_name = nodepool["metadata"]["name"]
    key = lbl.normalize(key)
    if key in NODE_KEYS:
        return Domains(key, None, unbounded=True, verified=True)
    np_req = nodepool_requirements(nodepool).by_key.get(key)
    if key != ZONE:
        if np_req is None or np_req.complement:
            return Domains(key, None)
        allowed = {v for v in np_req.values if _pod_allows(pod, key, v)}
        return Domains(key, frozenset(allowed), verified=True,
                       notes=(f"NodePool {np_name} allows {np_req.describe()}",))
    reqs = _first_term(pod, nodepool)
    _, nodeclass = offerings.nodeclass_of(nodepool, facts.nodeclasses)
    subnets = offerings.subnet_zones(nodeclass)
    zones_allowed, capacity_types = offerings.allowed(reqs, subnets=subnets)
    notes = []
    if np_req is not None:
        notes.append(f"NodePool {np_name} requires {np_req.describe()}")
    if subnets is not None:
        notes.append(f"its EC2NodeClass has subnets in [{', '.join(sorted(subnets))}]")
    types = fitting_types(pod, nodepool, facts)
    if types is not None and not types:
        return Domains(key, None)  # no instance type fits at all: the pending analysis says so
    checked = offerings.check(reqs, types or {}, ec2=facts.ec2, nodeclass=nodeclass) if types else None
    if checked is not None and checked.where:
        zone_req = reqs.get(ZONE)
        zones = {zone for where in checked.where.values() for zone, kinds in where.items()
                 if (zones_allowed is None or zone in zones_allowed) and zone_req.has(zone)
                 and (kinds is None or kinds & capacity_types)}
        offered = sorted({zone for where in checked.where.values() for zone in where})
        notes.insert(0, f"instance types of NodePool {np_name} that fit the pod are offered in "
                        f"[{', '.join(offered) or 'no zone'}]")
        zones = {z for z in zones if _pod_allows(pod, key, z)}
        return Domains(key, frozenset(zones), verified=True, notes=tuple(notes))
    if zones_allowed is None:
        return Domains(key, None)  # zone offerings not checked (no EC2) and nothing else bounds the zones
    zones = {z for z in zones_allowed if _pod_allows(pod, key, z)}
    return Domains(key, frozenset(zones), verified=False, notes=tuple(notes))


def usable_nodepools(pod: PodFacts, facts: Facts) -> list[str]:
    """NodePools a NodeClaim for ``pod`` can come from: those whose template taints it tolerates and whose
    requirements one of its node selector terms is compatible with ([core] scheduler.go tries every
    NodePool's NodeClaimTemplate; nodeclaim.go CanAdd checks taints, then Compatible). These give the
    domains the pod can be placed in (nodeDomains); the domains a spread constraint counts are wider
    (``spread_universe``)."""
    tolerations = (pod.pod.get("spec") or {}).get("tolerations") or []
    out = []
    for name, nodepool in sorted(facts.nodepools.items()):
        template = ((nodepool.get("spec") or {}).get("template") or {}).get("spec") or {}
        if resources.untolerated(template.get("taints") or [], tolerations):
            continue
        reqs = nodepool_requirements(nodepool, karpenter_version=facts.karpenter.version)
        allow = lbl.well_known(auto_mode=is_auto_mode(nodepool))
        if any(reqs.compatible(term, allow_undefined=allow) is None for term in pod_terms(pod.pod)):
            out.append(name)
    return out


def pod_launchable_domains(key: str, *, pod: PodFacts, facts: Facts) -> tuple[Domains, list[str]]:
    """The union of ``launchable_domains`` over ``usable_nodepools``, and those NodePools' names."""
    names = usable_nodepools(pod, facts)
    parts = [launchable_domains(key, pod=pod, nodepool=facts.nodepools[n], facts=facts) for n in names]
    return merge_domains(key, parts), names


def merge_domains(key: str, parts: list[Domains]) -> Domains:
    """The union over the NodePools a pod may use; unknown when any of them is unknown."""
    if not parts or any(p.values is None and not p.unbounded for p in parts):
        return Domains(key, None)
    if any(p.unbounded for p in parts):
        return Domains(key, None, unbounded=True, verified=True)
    values = frozenset().union(*(p.values or frozenset() for p in parts))
    return Domains(key, values, verified=all(p.verified for p in parts),
                   notes=tuple(n for p in parts for n in p.notes))


@dataclass(frozen=True)
class Universe:
    """The domains of a topology key Karpenter registers for a spread constraint before counting pods.

    ``sources``: domain -> the NodePools that contribute it. ``complete``: False when some NodePool's
    domains could not be known (its instance types or subnets were not read); the missing ones could
    only lower the global minimum, so a verdict of 'placeable' is then not sure, but 'blocked' is."""

    key: str
    sources: dict[str, tuple[str, ...]]
    complete: bool = True


def _zones_of_nodepool(nodepool: dict, facts: Facts) -> frozenset[str] | None:
    """Zones the instance types of a NodePool are offered in, within its EC2NodeClass's subnets
    ([aws] aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go computeRequirements: the
    zone requirement of a type is its offering zones intersected with the subnet zones). The provider returns
    every instance type of the region for the NodeClass, whatever the NodePool allows; the types EC2 was
    asked about stand in for them, else the subnet zones. None: neither is known."""
    _, nodeclass = offerings.nodeclass_of(nodepool, facts.nodeclasses)
    subnets = offerings.subnet_zones(nodeclass)
    name = nodepool["metadata"]["name"]
    types = facts.ec2.candidates.get(name) if facts.ec2.unavailable is None else None
    offered: set[str] = set()
    for type_name in types or ():
        offered |= set((facts.ec2.offerings or {}).get(type_name) or facts.ec2.zones.get(type_name) or ())
    if offered:
        return frozenset(z for z in offered if subnets is None or z in subnets)
    return subnets


def spread_universe(key: str, *, pod: PodFacts, facts: Facts, honor_taints: bool) -> Universe:
    """[core] kubernetes-sigs/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/topology.go
    buildDomainGroups: for every NodePool whose instance types the provider resolved, each instance type's
    requirements intersected with the NodePool's (and its template labels) add their values for every key,
    and the NodePool's own In requirements add theirs. topologygroup.go NewTopologyGroup then takes every
    domain (topologydomaingroup.go ForEachDomain): under the default nodeTaintsPolicy Ignore whatever the
    NodePool's taints, under Honor only domains of a NodePool whose template taints the pod tolerates
    (all effects: pkg/scheduling/taints.go Tolerates). nodeAffinityPolicy does not narrow them; the pod's
    own requirements on the key do, when the global minimum is taken (domainMinCount(podDomains)).

    The pod's tolerations and its compatibility with the NodePool do not narrow the domains: #2671 (commit
    89c1296, in v1.11.0) filtered them by NodePool compatibility with the pod's requirements and #2957
    reverted it (commit 4e80a7e on main, cherry-picked as 5e51202 into v1.11.1; absent from v1.12.0 on), and
    #2639 (aa00d04, the nodeAffinityPolicy filter) was reverted by #2797 (ea4d81b) before v1.10.0 shipped.
    NodePools being deleted or whose EC2NodeClass is not Ready have no instance types (provisioner.go
    NewScheduler skips them) and add nothing."""
    key = lbl.normalize(key)
    tolerations = (pod.pod.get("spec") or {}).get("tolerations") or []
    sources: dict[str, list[str]] = {}
    complete = True
    for name, nodepool in sorted(facts.nodepools.items()):
        if (nodepool.get("metadata") or {}).get("deletionTimestamp"):
            continue
        _, nodeclass = offerings.nodeclass_of(nodepool, facts.nodeclasses)
        if offerings.not_ready(nodeclass) is not None:
            continue
        template = ((nodepool.get("spec") or {}).get("template") or {}).get("spec") or {}
        if honor_taints and any(not resources.tolerates(t, tolerations) for t in template.get("taints") or []):
            continue
        req = nodepool_requirements(nodepool, karpenter_version=facts.karpenter.version).by_key.get(key)
        values: set[str] = set(req.values) if req is not None and not req.complement else set()
        if key == ZONE:
            zones = _zones_of_nodepool(nodepool, facts)
            if zones is None:
                complete = complete and bool(values)
            else:
                values |= {z for z in zones if req is None or req.has(z)}
        elif req is None or req.complement:
            complete = False  # the instance types' own values for the key (instance type, capacity type ...)
        for value in values:
            sources.setdefault(value, []).append(name)
    if "nodepools" in facts.unread:
        complete = False
    return Universe(key, {d: tuple(n) for d, n in sorted(sources.items())}, complete)


# -- topology spread -------------------------------------------------------------------------------

@dataclass
class SpreadCheck:
    """One DoNotSchedule constraint judged for a pending pod."""

    constraint: dict
    key: str
    max_skew: int
    min_domains: int | None
    counts: dict[str, int]  # matching pods per domain the pod may use (zero-count domains included)
    global_min: int
    self_match: bool
    launchable: frozenset[str]
    placeable: list[str]  # launchable domains where the pod keeps skew within maxSkew
    unknown_pods: int = 0  # matching pods on nodes whose domain could not be read
    # domain -> NodePools that make Karpenter count it (spread_universe); domains only nodes give are absent
    sources: dict[str, tuple[str, ...]] = field(default_factory=dict)
    honor_taints: bool = False

    @property
    def blocked(self) -> bool:
        return not self.placeable


def _node_value(labels: dict, key: str) -> str | None:
    return domain_of(labels, key) if lbl.normalize(key) == ZONE else labels.get(key)


def node_matches_pod(node: dict | None, pod: PodFacts) -> bool:
    """nodeAffinityPolicy Honor: only nodes meeting the pod's nodeSelector and one of its required node
    selector terms ([k8s] component-helpers nodeaffinity.GetRequiredNodeAffinity Match)."""
    labels = node_labels(node)
    return any(all(req.has(_node_value(labels, req.key)) for req in term) for term in pod_terms(pod.pod))


def _tolerates(pod: PodFacts, node: dict | None) -> bool:
    """nodeTaintsPolicy Honor: nodes whose NoSchedule / NoExecute taints the pod tolerates."""
    taints = ((node or {}).get("spec") or {}).get("taints") or []
    return not resources.untolerated(taints, (pod.pod.get("spec") or {}).get("tolerations") or [])


def check_spread(constraint: dict, *, pod: PodFacts, facts: Facts, launchable: Domains) -> SpreadCheck | None:
    """[k8s] podtopologyspread/filtering.go: a node passes when
    'existing matching num' + 'self-match (1 or 0)' - 'global min matching num' <= maxSkew, the global
    minimum being 0 while fewer than minDomains domains exist; nodeAffinityPolicy defaults to Honor and
    nodeTaintsPolicy to Ignore (common.go). [core] topologygroup.go nextDomainTopologySpread applies the
    same rule to the domains it can create (``launchable``, its nodeDomains), the global minimum being taken
    over every registered domain the pod's own requirements allow (domainMinCount(podDomains)): the
    NodePools' domains (``spread_universe``) and those of existing nodes that pass the node filter
    (topology.go countDomains, topologynodefilter.go Matches: nodeAffinityPolicy and nodeTaintsPolicy).
    ScheduleAnyway never blocks (it is only a score): None."""
    if constraint.get("whenUnsatisfiable", "DoNotSchedule") != "DoNotSchedule":
        return None
    key = constraint.get("topologyKey", "")
    if launchable.unbounded or key in NODE_KEYS:
        return None  # a new node is a new, empty domain: skew 1 - 0 <= maxSkew always holds
    if launchable.values is None:
        return None
    max_skew = int(constraint.get("maxSkew", 1))
    min_domains = constraint.get("minDomains")
    selector = with_match_label_keys(constraint.get("labelSelector"), constraint.get("matchLabelKeys") or [], pod.labels)
    honor_affinity = constraint.get("nodeAffinityPolicy", "Honor") == "Honor"
    honor_taints = constraint.get("nodeTaintsPolicy", "Ignore") == "Honor"
    universe = spread_universe(key, pod=pod, facts=facts, honor_taints=honor_taints)
    counts: dict[str, int] = {d: 0 for d in (*launchable.values, *universe.sources)}
    for node in [*facts.nodes.values(), *facts.peer_nodes.values()]:
        if node is None:
            continue
        value = domain_of(node_labels(node), key)
        if value and (not honor_affinity or node_matches_pod(node, pod)) and (not honor_taints or _tolerates(pod, node)):
            counts.setdefault(value, 0)
    unknown = 0
    for peer in matching_pods(facts, namespaces={pod.namespace}, selector=selector, exclude=pod):
        node_name = (peer.get("spec") or {}).get("nodeName")
        if not node_name:
            continue  # pending pods are not counted by the scheduler
        node = facts.nodes.get(node_name) or facts.peer_nodes.get(node_name)
        value = domain_of(node_labels(node), key) if node else None
        if value is None:
            unknown += 1
            continue
        if honor_affinity and not node_matches_pod(node, pod):
            continue
        if honor_taints and not _tolerates(pod, node):
            continue
        counts[value] = counts.get(value, 0) + 1
    counts = {d: n for d, n in counts.items() if _pod_allows(pod, key, d)}
    global_min = min(counts.values(), default=0)
    if min_domains is not None and len(counts) < int(min_domains):
        global_min = 0
    self_match = selector_matches(selector, pod.labels)
    placeable = sorted(d for d in launchable.values
                       if d in counts and counts[d] + int(self_match) - global_min <= max_skew)
    return SpreadCheck(constraint, key, max_skew, int(min_domains) if min_domains is not None else None,
                       dict(sorted(counts.items())), global_min, self_match, launchable.values, placeable, unknown,
                       sources={d: n for d, n in universe.sources.items() if d in counts}, honor_taints=honor_taints)


# -- pod (anti-)affinity ---------------------------------------------------------------------------

def required_terms(pod: PodFacts, kind: str) -> list[dict]:
    """Required terms of ``podAffinity`` or ``podAntiAffinity``."""
    affinity = ((pod.pod.get("spec") or {}).get("affinity") or {}).get(kind) or {}
    return list(affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or [])


def term_selector(term: dict, pod: PodFacts) -> dict | None:
    return with_match_label_keys(term.get("labelSelector"), term.get("matchLabelKeys") or [], pod.labels)


def occupied_domains(term: dict, *, pod: PodFacts, facts: Facts) -> tuple[dict[str, int], int]:
    """Matching scheduled pods per domain of the term's topologyKey, and how many sit on nodes whose
    domain could not be read."""
    key = term.get("topologyKey", "")
    counts: dict[str, int] = {}
    unknown = 0
    for peer in matching_pods(facts, namespaces=term_namespaces(term, pod), selector=term_selector(term, pod), exclude=pod):
        node_name = (peer.get("spec") or {}).get("nodeName")
        if not node_name:
            continue
        node = facts.nodes.get(node_name) or facts.peer_nodes.get(node_name)
        # hostname domains are named by the node, so the nodes to join can be looked up
        value = node_name if key == HOSTNAME else domain_of(node_labels(node), key)
        if value is None:
            unknown += 1
        else:
            counts[value] = counts.get(value, 0) + 1
    return counts, unknown


# -- resources -------------------------------------------------------------------------------------

# The most NVIDIA GPUs any EC2 instance type has (p4d, p4de, p5, p5e, p5en, g5.48xlarge, g6e.48xlarge,
# p6-b200: 8): the bound used when EC2 cannot be asked.
MAX_GPUS_PER_INSTANCE = 8


@dataclass
class GroupFit:
    """Whether pods that must share one node fit on the largest instance type a NodePool allows."""

    totals: dict[str, float]
    largest: dict[str, dict[str, float]] = field(default_factory=dict)  # type -> capacity, the biggest few
    fits: bool = True
    verified: bool = True


def group_fits_one_node(pods: list[PodFacts], *, nodepools: list[dict], facts: Facts) -> GroupFit:
    """[core] topologygroup.go nextDomainAffinity / topology.go: pods with a required affinity on hostname
    must all land on the node the first one picked; a NodeClaim is one instance type, so the group fits
    only if one type the NodePools allow holds all of their requests. Raw capacity is compared (no
    overhead subtracted) so a 'does not fit' is never a false alarm."""
    totals: dict[str, float] = {}
    for pod in pods:
        for name, value in resources.pod_requests(pod.pod).items():
            totals[name] = totals.get(name, 0.0) + value
    types: dict[str, object] = {}
    configs: dict[str, NodeConfig] = {}
    verified = bool(pods)
    for nodepool in nodepools:
        found = fitting_types(pods[0], nodepool, facts) if pods else None
        if found is None:
            verified = False
            continue
        types.update(found)
        configs.update(dict.fromkeys(found, _capacity_config(nodepool, facts)))
    caps = {name: resources.capacity(info, configs.get(name, NodeConfig())) for name, info in types.items()}
    fits = any(not resources.shortfall(totals, cap) for cap in caps.values())
    if not verified and not fits:
        fits = totals.get(GPU, 0) <= MAX_GPUS_PER_INSTANCE  # only what holds for every EC2 type can be said
    ranked = sorted(caps.items(), key=lambda kv: (kv[1].get(GPU, 0), kv[1][resources.CPU], kv[1][resources.MEMORY]),
                    reverse=True)
    return GroupFit(totals, dict(ranked[:3]), fits=fits, verified=verified)


# -- volumes ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class VolumeZones:
    claim: str
    volume: str
    zones: frozenset[str]
    source: str  # the PV field the zones came from


def volume_zones(pod: PodFacts, facts: Facts) -> list[VolumeZones]:
    """Zones each bound PersistentVolume of the pod is pinned to.

    [k8s] volumebinding/binder.go FindPodVolumes: a bound claim's PV must match the node through its
    spec.nodeAffinity (checkBoundClaims); unbound WaitForFirstConsumer claims are provisioned where the
    pod lands and never conflict. The legacy zone labels on the PV count too (volumezone plugin)."""
    out = []
    for volume in (pod.pod.get("spec") or {}).get("volumes") or []:
        claim_name = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if not claim_name:
            continue
        claim = facts.volumes.get(f"pvc/{pod.namespace}/{claim_name}")
        pv_name = ((claim or {}).get("spec") or {}).get("volumeName")
        pv = facts.volumes.get(f"pv/{pv_name}") if pv_name else None
        if not pv:
            continue
        zones: set[str] = set()
        source = ""
        terms = ((((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms") or [])
        for term in terms:
            for expr in term.get("matchExpressions") or []:
                if expr.get("key") in ZONE_ALIASES and expr.get("operator") == "In":
                    zones |= {str(v) for v in expr.get("values") or []}
                    source = "spec.nodeAffinity.required.nodeSelectorTerms"
        if not zones:
            labels = ((pv.get("metadata") or {}).get("labels") or {})
            zones = {labels[k] for k in ZONE_ALIASES if labels.get(k)}
            source = "metadata.labels"
        if zones:
            out.append(VolumeZones(f"pvc/{pod.namespace}/{claim_name}", f"pv/{pv_name}", frozenset(zones), source))
    return out

