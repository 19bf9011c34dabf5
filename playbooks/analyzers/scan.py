"""Every text the engine gathered, run once through the signature catalogue.

Each signal keeps where it came from (which pod, event, log, or the Karpenter controller), so the
analyzers can tell the target's own evidence from a peer's.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from playbooks.analyzers.evidence import event_component, event_source, event_time
from playbooks.analyzers.history import recovered
from playbooks.analyzers.initializing import launch_in_progress
from playbooks.facts import Facts, PodFacts
from playbooks.karpenter.nodeclaim import nominated_claims
from playbooks.signatures import Signal, scan_line, scan_lines

KARPENTER_COMPONENTS = ("karpenter", "eks-auto-mode")


@dataclass(frozen=True)
class Located:
    signal: Signal
    origin: str  # "event", "condition", "log", "karpenter", "device-plugin", "node-event", "owner-event"
    pod: PodFacts | None = None
    node: str | None = None
    component: str = ""  # the event's reporting component ("karpenter", "default-scheduler", ...)
    when: datetime | None = None  # when the event last happened
    about: frozenset[str] = frozenset()  # a NodeClaim event: the pods nominated to that claim

    @property
    def from_karpenter(self) -> bool:
        """Karpenter's own words: its controller log, or an event it (or EKS Auto Mode) reported."""
        return self.origin == "karpenter" or any(c in self.component for c in KARPENTER_COMPONENTS)


def signals(facts: Facts) -> list[Located]:
    if "signals" not in facts.cache:
        facts.cache["signals"] = list(_scan(facts))
    return facts.cache["signals"]


def _scan(facts: Facts):
    owner_ref = f"{facts.owner_kind}/{facts.target.namespace}/{facts.target.name}"
    for event in facts.owner_events:
        for sig in scan_line(event.get("message", ""), source=event_source(owner_ref, event)):
            yield Located(sig, "owner-event", component=event_component(event), when=event_time(event))
    for pod in facts.pods:
        for event in pod.events:
            for sig in scan_line(event.get("message", ""), source=event_source(pod.ref, event)):
                yield Located(sig, "event", pod=pod, component=event_component(event), when=event_time(event))
        status = pod.pod.get("status") or {}
        if status.get("message"):
            for sig in scan_line(status["message"], source=f"{pod.ref} status.message"):
                yield Located(sig, "condition", pod=pod)
        for (container, previous), text in pod.logs.items():
            if previous and recovered(pod.pod, container):
                continue  # a crash the container has run fine for an hour since: history (analyzers/history.py)
            source = f"log {pod.ref} container {container}" + (" (previous)" if previous else "")
            for sig in scan_lines(text.splitlines(), source=source):
                yield Located(sig, "log", pod=pod)
    for node, events in facts.node_events.items():
        for event in events:
            for sig in scan_line(event.get("message", ""), source=event_source(f"node/{node}", event)):
                yield Located(sig, "node-event", node=node)
    nominated = _nominated_pods(facts)
    for claim, events in facts.nodeclaim_events.items():
        for event in events:
            for sig in scan_line(event.get("message") or event.get("note") or "",
                                 source=event_source(f"nodeclaim/{claim}", event)):
                yield Located(sig, "nodeclaim-event", node=claim, component=event_component(event),
                              when=event_time(event), about=nominated.get(claim, frozenset()))
    yield from _conditions(facts)
    if facts.karpenter_log:
        for sig in scan_lines(facts.karpenter_log, source=facts.karpenter_source):
            yield Located(sig, "karpenter")
    for node, entries in facts.device_plugin_logs.items():
        for ref, text in entries:
            for sig in scan_lines(text.splitlines(), source=f"log {ref}"):
                yield Located(sig, "device-plugin", node=node)


def _nominated_pods(facts: Facts) -> dict[str, frozenset[str]]:
    """NodeClaim name -> the pods Karpenter nominated to it (their Nominated events)."""
    pods: dict[str, set[str]] = {}
    for pod in facts.pods:
        for event in pod.events:
            if event.get("reason") == "Nominated":
                for claim in nominated_claims(event.get("message") or event.get("note") or ""):
                    pods.setdefault(claim, set()).add(pod.name)
    return {claim: frozenset(names) for claim, names in pods.items()}


# kubernetes-sigs/karpenter pkg/apis/v1/nodeclaim_status.go and nodepool_status.go: NodeClaims carry
# Launched / Registered / Initialized, NodePools ValidationSucceeded / NodeClassReady and (v1.4+)
# NodeRegistrationHealthy. They are read as `kubectl describe` prints them: "Type  Status  Reason  Message".
def _conditions(facts: Facts):
    for name, claim in sorted(facts.nodeclaims.items()):
        # Launched / Registered Unknown inside Karpenter's limits is a launch in progress, not news;
        # initializing past registration's limit is stuck (analyzers/initializing.py)
        waiting = launch_in_progress(claim)
        for line, source in _condition_lines(claim, f"nodeclaim/{name}", skip_unknown=waiting):
            for sig in scan_line(line, source=source):
                yield Located(sig, "nodeclaim")
    classes: set[str] = set()
    for name in sorted(_nodepools_in_play(facts)):
        nodepool = facts.nodepools[name]
        for line, source in _condition_lines(nodepool, f"nodepool/{name}"):
            for sig in scan_line(line, source=source):
                yield Located(sig, "nodepool")
        ref = ((nodepool.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}
        classes.add(f"{ref.get('group', '')}/{ref.get('name', '')}")
    # aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass_status.go: AMIsReady, SubnetsReady,
    # SecurityGroupsReady, InstanceProfileReady, ValidationSucceeded; a NodeClass not Ready makes its
    # NodePools not Ready and Karpenter then ignores them without a word on the pod.
    for key in sorted(classes & set(facts.nodeclasses)):
        kind = "ec2nodeclass" if key.startswith("karpenter.k8s.aws/") else "nodeclass"
        for line, source in _condition_lines(facts.nodeclasses[key], f"{kind}/{key.split('/', 1)[1]}"):
            for sig in scan_line(line, source=source):
                yield Located(sig, "nodeclass")


def _condition_lines(obj: dict, ref: str, *, skip_unknown: bool = False):
    for cond in (obj.get("status") or {}).get("conditions") or []:
        status, reason, message = str(cond.get("status", "")), cond.get("reason") or "", cond.get("message") or ""
        if status == "True" or not (reason or message) or cond.get("type") == "Ready":
            continue  # Ready only repeats the others ("UnhealthyDependents")
        if skip_unknown and status == "Unknown":
            continue
        yield (f"{cond.get('type', '')}  {status}  {reason}  {message}".strip(),
               f"{ref} status.conditions[{cond.get('type', '')}]")


def _nodepools_in_play(facts: Facts) -> set[str]:
    """NodePools this diagnosis is about: selected by a pending pod, meant for it, launching its
    NodeClaims, or owning its nodes; not every NodePool of the cluster."""
    names: set[str] = set()
    for pod in facts.pending_pods():
        selected = ((pod.pod.get("spec") or {}).get("nodeSelector") or {}).get("karpenter.sh/nodepool")
        if selected:
            names.add(selected)
        names.update((facts.cache.get("pending_nodepools") or {}).get(pod.name, ()))
    for claim in facts.nodeclaims.values():
        label = ((claim.get("metadata") or {}).get("labels") or {}).get("karpenter.sh/nodepool")
        if label:
            names.add(label)
    if facts.target.kind == "nodepool":
        names.add(facts.target.name)
    return names & set(facts.nodepools)
