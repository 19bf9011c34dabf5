"""What the job lost: pods deleted with their node, the nodes and NodeClaims its pods used, and which
NodeClaim backed which node. Read from gathered events and the controller log only (facts.lost_pods,
node_events, nodeclaim_events, karpenter_log); computed once per diagnosis.
"""
from __future__ import annotations

from dataclasses import dataclass

from playbooks.analyzers.evidence import event_component, event_source
from playbooks.analyzers.scan import KARPENTER_COMPONENTS, signals
from playbooks.facts import Facts
from playbooks.history_names import claims_named, event_text, nodes_named
from playbooks.signatures import Signal, scan_line


@dataclass(frozen=True)
class LostPod:
    """A pod of the job that no longer exists, as its events remember it."""

    name: str
    namespace: str
    nodes: frozenset[str]  # nodes its Scheduled / Nominated events put it on
    claims: frozenset[str]  # NodeClaims Karpenter nominated it to
    said: tuple[Signal, ...]  # Karpenter's words about it (Evicted pod: <reason>, Disrupted ...)

    @property
    def ref(self) -> str:
        return f"pod/{self.namespace}/{self.name}"


def lost_pods(facts: Facts) -> list[LostPod]:
    if "lost_pods" not in facts.cache:
        namespace = facts.target.namespace or ""
        out = []
        for name, events in sorted(facts.lost_pods.items()):
            ref = f"pod/{namespace}/{name}"
            said = tuple(sig for event in events if _from_karpenter(event)
                         for sig in scan_line(event_text(event), source=event_source(ref, event)))
            out.append(LostPod(name, namespace, frozenset(nodes_named(events)), frozenset(claims_named(events)), said))
        facts.cache["lost_pods"] = out
    return facts.cache["lost_pods"]


def _from_karpenter(event: dict) -> bool:
    return any(c in event_component(event) for c in KARPENTER_COMPONENTS)


def job_nodes(facts: Facts) -> set[str]:
    """Every node the job's pods run on now or ran on before (their own events say where)."""
    names = {p.node_name for p in facts.pods if p.node_name}
    names |= nodes_named([e for p in facts.pods for e in p.events])
    for lost in lost_pods(facts):
        names |= lost.nodes
    return names


def claim_nodes(facts: Facts) -> dict[str, str]:
    """NodeClaim -> the node it backed: live NodeClaims' status.nodeName, nodes' ownerReferences, and
    controller log lines naming both (Karpenter v1 logs {"NodeClaim":{"name":..},"Node":{"name":..}})."""
    ties: dict[str, str] = {}
    for name, claim in facts.nodeclaims.items():
        node = ((claim or {}).get("status") or {}).get("nodeName")
        if node:
            ties[name] = node
    for node_name, node in facts.nodes.items():
        for ref in ((node or {}).get("metadata") or {}).get("ownerReferences") or []:
            if ref.get("kind") in ("NodeClaim", "Machine") and ref.get("name"):
                ties[ref["name"]] = node_name
    for loc in signals(facts):
        fields = loc.signal.fields
        if loc.origin == "karpenter" and fields.get("nodeclaim") and fields.get("node"):
            ties.setdefault(fields["nodeclaim"], fields["node"])
    return ties


def job_claims(facts: Facts) -> set[str]:
    names = claims_named([e for p in facts.pods for e in p.events])
    for lost in lost_pods(facts):
        names |= lost.claims
    nodes = job_nodes(facts)
    names |= {claim for claim, node in claim_nodes(facts).items() if node in nodes}
    return names
