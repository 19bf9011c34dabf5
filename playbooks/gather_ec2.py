"""EC2 facts for a diagnosis: which instance types each considered NodePool allows, and where they
are offered. Only the NodePools a pending pod could use are looked up."""
from __future__ import annotations

import re
from typing import Any, Protocol

from playbooks.facts import Ec2Facts, Facts, FactsUnavailable, PodFacts
from playbooks.requirements import instance_patterns, label_prefix, nodepool_requirements, type_allowed


class Catalog(Protocol):  # what the engine needs from bot.gateway.Ec2Catalog
    region: str | None
    unavailable_reason: str | None

    def matching(self, patterns: list[str]) -> dict[str, Any]: ...
    def zones_offering(self, names: list[str]) -> dict[str, frozenset[str]]: ...


def gather_ec2(facts: Facts, *, catalog: Catalog | None) -> Ec2Facts:
    if catalog is None:
        return Ec2Facts(unavailable="no EC2 catalogue configured")
    out = Ec2Facts(region=catalog.region)
    wanted = {n for pod in facts.pending_pods() for n in considered_nodepools(pod, facts)}
    if facts.target.kind == "nodepool":
        wanted.add(facts.target.name)
    try:
        for name in sorted(wanted & set(facts.nodepools)):
            out.candidates[name] = candidates_for(facts.nodepools[name], catalog=catalog)
        names = sorted({t for c in out.candidates.values() for t in c})
        if names:
            out.zones = catalog.zones_offering(names)
    except FactsUnavailable as exc:
        return Ec2Facts(unavailable=str(exc), region=catalog.region)
    return out


_NODEPOOL_NAMED = re.compile(r"""(?:nodepool "|NodePool=|provisioner ")(?P<name>[a-z0-9][-a-z0-9.]*)""")


def considered_nodepools(pod: PodFacts, facts: Facts) -> list[str]:
    """NodePools that could serve a pending pod: the one it selects, else those Karpenter's own
    FailedScheduling events say it evaluated, else every NodePool."""
    selected = ((pod.pod.get("spec") or {}).get("nodeSelector") or {}).get("karpenter.sh/nodepool")
    if selected:
        return [selected]
    named: list[str] = []
    for event in pod.events:
        if event.get("reason") == "FailedScheduling":
            named += [m.group("name") for m in _NODEPOOL_NAMED.finditer(event.get("message", ""))]
    named = [n for n in dict.fromkeys(named) if n in facts.nodepools]
    return named or sorted(facts.nodepools)


def candidates_for(nodepool: dict, *, catalog: Catalog) -> dict[str, Any]:
    """Instance types this NodePool's requirements allow, with their EC2 facts."""
    reqs = nodepool_requirements(nodepool)
    prefix = label_prefix(nodepool)
    flat = [r for rs in reqs.values() for r in rs]
    found = catalog.matching(instance_patterns(reqs, prefix))
    return {name: info for name, info in found.items() if type_allowed(info.karpenter_labels(prefix.rstrip("/")), flat)}
