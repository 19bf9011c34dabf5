"""EC2 facts for a diagnosis: which instance types each considered NodePool allows, and where and how
(zone, capacity type) they are offered. Only the NodePools a pending pod could use are looked up.

Instance-type facts may come from EC2 or, without it, from the embedded catalogue; offerings need EC2.
What could not be checked becomes a gap; nothing is concluded from it."""
from __future__ import annotations

import re
from typing import Any, Protocol

from playbooks.facts import Ec2Facts, Facts, FactsUnavailable, PodFacts
from playbooks.karpenter import labels as lbl
from playbooks.karpenter.offerings import nodeclass_of
from playbooks.karpenter.requirements import instance_patterns, label_prefix, nodepool_requirements, type_allowed


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
    except FactsUnavailable as exc:
        return Ec2Facts(unavailable=str(exc), region=catalog.region)
    out.node_types = gather_node_types(facts, catalog=catalog)
    out.source = str(getattr(catalog, "source", None) or "ec2")
    if out.source != "ec2":
        facts.gaps.append(f"Instance-type facts come from the {out.source}, not EC2"
                          f"{' (' + catalog.unavailable_reason + ')' if catalog.unavailable_reason else ''}.")
    names = sorted({t for c in out.candidates.values() for t in c})
    if names:
        _gather_offerings(out, names, catalog=catalog, facts=facts)
    return out


def gather_node_types(facts: Facts, *, catalog: Catalog | None) -> dict[str, Any]:
    """Facts of the instance types the target pods' nodes are (their network interfaces limit pod IPs)."""
    running = sorted({((facts.node_of(p) or {}).get("metadata", {}).get("labels") or {}).get(lbl.INSTANCE_TYPE, "")
                      for p in facts.pods if facts.is_target_pod(p) and p.node_name} - {""})
    if not running or catalog is None:
        return {}
    try:
        return dict(catalog.matching(running))
    except FactsUnavailable as exc:
        facts.gaps.append(f"The instance types of the pods' nodes were not read: {exc}.")
        return {}


def _gather_offerings(out: Ec2Facts, names: list[str], *, catalog: Catalog, facts: Facts) -> None:
    by_capacity = getattr(catalog, "offerings", None)
    try:
        if callable(by_capacity):
            out.offerings = by_capacity(names)
            out.zones = {t: frozenset(z) for t, z in out.offerings.items()}
            relevant = _capacity_types_in_play(facts, sorted(out.candidates))
            for capacity_type, why in (getattr(catalog, "capacity_types_unchecked", None) or {}).items():
                if capacity_type not in relevant:
                    continue
                facts.gaps.append(why if why.lower().startswith(capacity_type) else
                                  f"{capacity_type.capitalize()} offerings per zone were not checked: {why}.")
                out.offerings = {}  # zones stay known; capacity types are not (offerings.py never concludes from that)
        else:
            out.zones = catalog.zones_offering(names)
            facts.gaps.append("Capacity types (on-demand, spot, reserved) per zone were not checked: zone offerings only.")
    except FactsUnavailable as exc:
        out.zones, out.offerings = {}, {}
        facts.gaps.append(f"Zone and capacity-type offerings were not checked: {exc}.")


def _capacity_types_in_play(facts: Facts, nodepools: list[str]) -> set[str]:
    """Capacity types some considered NodePool could launch. Reserved counts only where the NodePool asks for
    it or its EC2NodeClass selects capacity reservations: Karpenter has reserved offerings only for those
    (aws/karpenter-provider-aws pkg/providers/capacityreservation, EC2NodeClass capacityReservationSelectorTerms)."""
    out: set[str] = set()
    for name in nodepools:
        nodepool = facts.nodepools[name]
        wanted = nodepool_requirements(nodepool).get(lbl.CAPACITY_TYPE)
        allowed = {c for c in lbl.CAPACITY_TYPES if wanted.has(c)}
        _, nodeclass = nodeclass_of(nodepool, facts.nodeclasses)
        selects = bool(((nodeclass or {}).get("spec") or {}).get("capacityReservationSelectorTerms"))
        if "reserved" in allowed and not selects and wanted.operator != "In":
            allowed.discard("reserved")
        out |= allowed
    return out


_NODEPOOL_NAMED = re.compile(r"""(?:nodepool "|NodePool=|provisioner "|nodepool: ")(?P<name>[a-z0-9][-a-z0-9.]*)""")


def considered_nodepools(pod: PodFacts, facts: Facts) -> list[str]:
    """NodePools that could serve a pending pod: the one it selects, else those Karpenter's own
    FailedScheduling events say it evaluated, else every NodePool."""
    selected = ((pod.pod.get("spec") or {}).get("nodeSelector") or {}).get("karpenter.sh/nodepool")
    if selected:
        return [selected]
    named: list[str] = []
    for event in pod.events:
        if event.get("reason") == "FailedScheduling":
            named += [m.group("name") for m in _NODEPOOL_NAMED.finditer(event.get("message", "") or event.get("note", ""))]
    named = [n for n in dict.fromkeys(named) if n in facts.nodepools]
    return named or sorted(facts.nodepools)


def candidates_for(nodepool: dict, *, catalog: Catalog) -> dict[str, Any]:
    """Instance types this NodePool's requirements allow, with their facts."""
    reqs = nodepool_requirements(nodepool)
    prefix = label_prefix(nodepool)
    found = catalog.matching(instance_patterns(reqs, prefix))
    return {name: info for name, info in found.items() if type_allowed(info, reqs, prefix=prefix)}
