"""Every text the engine gathered, run once through the signature catalogue.

Each signal keeps where it came from (which pod, event, log, or the Karpenter controller), so the
analyzers can tell the target's own evidence from a peer's. A claim that a node's GPU is broken, made
by a writer that cannot speak for the node (playbooks/speakers.py) and not borne out by the node's
status, enters capped: a warning of low confidence that says who reported it; a speaker's claim that no
second reporter and no node status bears out enters below critical, with nothing to cordon. One item that cannot be
read (a hostile event, a log line no rule survives) becomes a gap; the rest is still scanned.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Callable, Iterable, Iterator, TypeVar

from playbooks.analyzers.evidence import event_component, event_source, event_time, superseded
from playbooks.analyzers.history import recovered, retry_is_history
from playbooks.analyzers.initializing import launch_in_progress
from playbooks.analyzers.launches import claims_named
from playbooks.facts import Facts, PodFacts
from playbooks.karpenter.device_plugin_evidence import awaiting_device_plugin
from playbooks.karpenter.nodeclaim import nominated_claims, unregistered_resource
from playbooks.model import SEVERITIES
from playbooks.signatures import Signal, scan_line, scan_lines
from playbooks.speakers import Installed, Voice, hardware_claim, installed, node_vouches, plugin_voice, voice_of

log = logging.getLogger(__name__)
T = TypeVar("T")

KARPENTER_COMPONENTS = ("karpenter", "eks-auto-mode")
# The most an uncorroborated hardware claim can be: never critical or error, so never an alert that pages
# and never a cordon offer.
CLAIM_CEILING = "warning"
# The most one speaker's word alone makes of a node's hardware: an error to look at, never critical.
ONE_VOICE_CEILING = "error"


@dataclass(frozen=True)
class Located:
    signal: Signal
    origin: str  # "event", "condition", "log", "karpenter", "device-plugin", "node-event", "owner-event", "lost-event"
    pod: PodFacts | None = None
    node: str | None = None
    component: str = ""  # the event's reporting component ("karpenter", "default-scheduler", ...)
    when: datetime | None = None  # when the event last happened
    about: frozenset[str] = frozenset()  # a NodeClaim event: the pods nominated to that claim
    # A hardware claim about a node: False when its writer cannot speak for the node and the node's status
    # does not bear it out (the signal is then capped); ``speaker`` names the writer ("namespace/component").
    vouched: bool = True
    speaker: str = ""
    by_speaker: bool = True  # a node event or device plugin log: written by one that may speak for the node
    # A speaker's hardware claim that no second reporter and no node status bears out (capped below critical):
    # nothing may be cordoned on it
    alone: bool = False
    claims: frozenset[str] = frozenset()  # the NodeClaims a Karpenter line or NodeClaim event is about
    # why the signal is history rather than the state now ("" when it is current): superseded by the same
    # reporter's newer event, or a start-up retry the container has run long past (analyzers/history.py)
    history: str = ""

    @property
    def from_karpenter(self) -> bool:
        """Karpenter's own words: its controller log, or an event it (or EKS Auto Mode) reported."""
        return self.origin == "karpenter" or any(c in self.component for c in KARPENTER_COMPONENTS)


def signals(facts: Facts) -> list[Located]:
    if "signals" not in facts.cache:
        facts.cache["signals"] = _second_voice(list(_scan(facts)), facts)
    return facts.cache["signals"]


def _scan(facts: Facts):
    owner_ref = f"{facts.owner_kind}/{facts.target.namespace}/{facts.target.name}"
    yield from _each(facts, facts.owner_events, lambda event: [
        Located(sig, "owner-event", component=event_component(event), when=event_time(event))
        for sig in scan_line(event.get("message", ""), source=event_source(owner_ref, event))],
        what=lambda event: f"an event about {owner_ref} ({_event_name(event)})")
    for pod in facts.pods:
        old = {id(event) for event in superseded(pod.events)}
        yield from _each(facts, pod.events, lambda event, pod=pod, old=old: [
            Located(sig, "event", pod=pod, component=event_component(event), when=event_time(event),
                    history="a newer event from the same reporter replaces it" if id(event) in old else "")
            for sig in scan_line(event.get("message", ""), source=event_source(pod.ref, event))],
            what=lambda event, pod=pod: f"an event about {pod.ref} ({_event_name(event)})")
        status = pod.pod.get("status") or {}
        if status.get("message"):
            yield from _each(facts, [status["message"]], lambda message, pod=pod: [
                Located(sig, "condition", pod=pod) for sig in scan_line(message, source=f"{pod.ref} status.message")],
                what=lambda _, pod=pod: f"the status message of {pod.ref}")
        logs = [(container, previous, text) for (container, previous), text in pod.logs.items()
                # a crash the container has run fine for an hour since: history (analyzers/history.py)
                if not (previous and recovered(pod.pod, container))]
        yield from _each(facts, logs, lambda entry, pod=pod: _log(pod, entry),
                         what=lambda entry, pod=pod: _log_source(pod, entry))
    # Pods of the job deleted since (evicted, garbage-collected with their node): what the kubelet said to them
    # is why they ended (an eviction for disk or memory pressure, an OOM kill). Karpenter's words to them are
    # read by the disruption and interruption analyzers (analyzers/lost.py).
    for name, events in sorted(facts.lost_pods.items()):
        kubelet = [e for e in events if event_component(e) == "kubelet"]
        yield from _each(facts, kubelet, lambda event, name=name: [
            Located(sig, "lost-event", component="kubelet", when=event_time(event))
            for sig in scan_line(event.get("message") or event.get("note") or "",
                                 source=event_source(f"pod/{facts.target.namespace}/{name} (deleted since)", event))],
            what=lambda event, name=name: f"an event about pod/{name} ({_event_name(event)})")
    for node, events in facts.node_events.items():
        yield from _each(facts, events, lambda event, node=node: _node_event(facts, node, event),
                         what=lambda event, node=node: f"an event about node/{node} ({_event_name(event)})")
    nominated = _nominated_pods(facts)
    for claim, events in facts.nodeclaim_events.items():
        yield from _each(facts, events, lambda event, claim=claim: [
            Located(sig, "nodeclaim-event", node=claim, component=event_component(event), when=event_time(event),
                    about=nominated.get(claim, frozenset()), claims=frozenset([claim]))
            for sig in scan_line(event.get("message") or event.get("note") or "",
                                 source=event_source(f"nodeclaim/{claim}", event))],
            what=lambda event, claim=claim: f"an event about nodeclaim/{claim} ({_event_name(event)})")
    yield from _conditions(facts)
    if facts.karpenter_log:
        for lineno, line in enumerate(facts.karpenter_log, start=1):
            # a launch failure names its NodeClaim, not the pod: the pods nominated to that claim are its subject
            claims = claims_named(line) if line else frozenset()
            about = frozenset(p for c in claims for p in nominated.get(c, ()))
            for sig in scan_line(line, source=facts.karpenter_source, lineno=lineno) if line else ():
                yield Located(sig, "karpenter", about=about, claims=claims)
    for node, entries in facts.device_plugin_logs.items():
        yield from _each(facts, entries, lambda entry, node=node: _plugin_log(facts, node, *entry),
                         what=lambda entry: f"the log of {entry[0]}")


STARTUP_RETRY = "a start-up retry the container has run long past"


def _log(pod: PodFacts, entry: tuple[str, bool, str]) -> list[Located]:
    """Signals of one container log; in the current log, start-up retries the container got past are history."""
    container, previous, text = entry
    lines = text.splitlines()
    out = []
    for sig in scan_lines(lines, source=_log_source(pod, entry)):
        line = lines[sig.lineno - 1] if sig.lineno else sig.line
        old = not previous and retry_is_history(pod.pod, container, line=line, lineno=sig.lineno, lines=lines)
        out.append(Located(sig, "log", pod=pod, history=STARTUP_RETRY if old else ""))
    return out


def _installed(facts: Facts) -> Installed:
    """Which speakers the cluster's DaemonSets show running where (gathered before any scan), and the
    namespaces the policy trusts: a namespace's name alone vouches for nobody (playbooks/speakers.py)."""
    if "installed" not in facts.cache:
        facts.cache["installed"] = installed(facts.daemonsets, trusted=facts.trusted_node_reporters)
    return facts.cache["installed"]


def _node_event(facts: Facts, node: str, event: dict) -> list[Located]:
    voice = voice_of(event, where=_installed(facts))
    return [_vouched(Located(sig, "node-event", node=node, when=event_time(event)), voice, facts)
            for sig in scan_line(event.get("message") or event.get("note") or "",
                                 source=event_source(f"node/{node}", event))]


def _plugin_log(facts: Facts, node: str, ref: str, text: str) -> list[Located]:
    _, namespace, name = (ref.split("/", 2) + ["", ""])[:3]
    voice = plugin_voice(namespace, name, where=_installed(facts))
    return [_vouched(Located(sig, "device-plugin", node=node), voice, facts)
            for sig in scan_lines(text.splitlines(), source=f"log {ref}")]


def _vouched(loc: Located, voice: Voice, facts: Facts) -> Located:
    """A hardware claim as far as its writer and the node's status bear it out: from a speaker for the
    node, as it is; from anyone else, as it is when the node's status shows the trouble too (that line is
    added to the title), else capped at a low-confidence warning that names who reported it."""
    sig = loc.signal
    loc = replace(loc, speaker=voice.label, by_speaker=voice.trusted)
    if voice.trusted or not hardware_claim(sig.code, sig.fields):
        return loc
    status = node_vouches(facts.nodes.get(loc.node or ""))
    if status is not None:
        return replace(loc, signal=replace(sig, title=f"{sig.title} (reported by {voice.label}; {status})"))
    ceiling = max(sig.severity, CLAIM_CEILING, key=SEVERITIES.index)
    capped = replace(sig, severity=ceiling, confidence="low", title=f"{sig.title} ({voice.caveat})")
    return replace(loc, signal=capped, vouched=False)


def _second_voice(found: list[Located], facts: Facts) -> list[Located]:
    """Speakers' hardware claims in node events, capped where they are one voice: a speaker's namespace
    ("default" too) can still be written by whoever may create events there, so a node turns critical
    only when a second, independent reporter (another namespace/component, or the device plugin's log)
    or the node's own status agrees."""
    voices: dict[str, set[str]] = {}
    for loc in found:
        if loc.node and loc.origin in ("node-event", "device-plugin") and loc.vouched \
                and hardware_claim(loc.signal.code, loc.signal.fields):
            voices.setdefault(loc.node, set()).add(loc.speaker)
    alone = {node for node, said in voices.items()
             if len(said) < 2 and node_vouches(facts.nodes.get(node)) is None}
    return [_alone(loc) if loc.origin == "node-event" and loc.node in alone and loc.vouched
            and hardware_claim(loc.signal.code, loc.signal.fields) else loc for loc in found]


def _alone(loc: Located) -> Located:
    sig = loc.signal
    ceiling = max(sig.severity, ONE_VOICE_CEILING, key=SEVERITIES.index)
    confidence = "medium" if sig.confidence == "high" else sig.confidence
    title = f"{sig.title} (reported by {loc.speaker} alone)"
    return replace(loc, signal=replace(sig, severity=ceiling, confidence=confidence, title=title), alone=True)


def _each(facts: Facts, items: Iterable[T], scan: Callable[[T], list[Located]], *,
          what: Callable[[T], str]) -> Iterator[Located]:
    """Scan items one by one: an item that cannot be read is a gap naming it, and the rest goes on."""
    for item in items:
        try:
            found = scan(item)
        except Exception as exc:  # noqa: BLE001 - any one item's failure, logged with its traceback
            log.warning("could not scan %s", what(item), exc_info=True)
            facts.gaps.append(f"Not checked: {what(item)} (could not read it: {type(exc).__name__}: "
                              f"{str(exc)[:200]}).")
            continue
        yield from found


def _log_source(pod: PodFacts, entry: tuple[str, bool, str]) -> str:
    container, previous, _ = entry
    return f"log {pod.ref} container {container}" + (" (previous)" if previous else "")


def _event_name(event: dict) -> str:
    meta = event.get("metadata") or {}
    return f"event {str(meta.get('namespace') or '')[:63]}/{str(meta.get('name') or '')[:253]}"


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
        # waiting for a device plugin is normal until the plugin is shown missing or failing past the grace
        # (karpenter/device_plugin_evidence.py)
        waiting = (launch_in_progress(claim) if unregistered_resource(claim) is None
                   else awaiting_device_plugin(claim, facts))
        for line, source in _condition_lines(claim, f"nodeclaim/{name}", skip_unknown=waiting):
            for sig in scan_line(line, source=source):
                yield Located(sig, "nodeclaim")
    classes: set[str] = set()
    for name in sorted(_nodepools_in_play(facts)):
        nodepool = facts.nodepools[name]
        ref = ((nodepool.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}
        for line, source in _condition_lines(nodepool, f"nodepool/{name}"):
            for sig in scan_line(line, source=source):
                yield Located(_naming(sig, ref.get("name")), "nodepool")
        classes.add(f"{ref.get('group', '')}/{ref.get('name', '')}")
    # aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass_status.go: AMIsReady, SubnetsReady,
    # SecurityGroupsReady, InstanceProfileReady, ValidationSucceeded; a NodeClass not Ready makes its
    # NodePools not Ready and Karpenter then ignores them without a word on the pod.
    for key in sorted(classes & set(facts.nodeclasses)):
        kind = "ec2nodeclass" if key.startswith("karpenter.k8s.aws/") else "nodeclass"
        for line, source in _condition_lines(facts.nodeclasses[key], f"{kind}/{key.split('/', 1)[1]}"):
            for sig in scan_line(line, source=source):
                yield Located(_naming(sig, key.split("/", 1)[1]), "nodeclass")


def _naming(sig: Signal, nodeclass: str | None) -> Signal:
    """A NodeClass condition names no object in its text: the fix must name the class the cluster has."""
    if sig.code != "karpenter.nodeclass_not_ready" or not nodeclass:
        return sig
    return replace(sig, fields={**sig.fields, "nodeclass": nodeclass})


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
