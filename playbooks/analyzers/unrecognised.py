"""The floor under every analyzer: what the cluster said about the target that no rule explains is a finding.

Every Warning event about a target pod (scheduled or not), a pending pod of the job, a pod of the job already
deleted, the workload the user named (the Job, PyTorchJob or JobSet controller's events), the claims of the
pods' volumes, the nodes the target pods run on and the NodeClaims they were nominated to is read. One the
signature catalogue recognises becomes (or joins) a finding of its analyzer; one it does not becomes
``cluster.unrecognised`` (docs/findings.md): quoted with its source and the component that wrote it, classed
by the cluster's vocabulary (playbooks/vocabulary) where an entry knows its reason or message, severity from
what it blocks (a pod that cannot be created or started, a job that stopped: ``error``; a running pod's or a
node's warning: ``warning``), confidence ``low``, and the next step for that component.

The same floor holds for a container's waiting or terminated reason and for a workload's ``Failed``
condition when no analyzer found anything above ``info``: the state is the evidence.

What happened is told apart from what is: a Warning older than the moment its pod became Ready (and the pod is
still Ready), or older than a node's return to Ready, is history and not a finding; the newest state of a
condition wins over an older event.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Iterator

from playbooks import vocabulary
from playbooks.codes import precedence
from playbooks.analyzers.evidence import event_component, event_source, event_time, newest_condition, parse_time, trim
from playbooks.explain import template_for
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.model import Evidence, Finding
from playbooks.signatures import scan_line
from playbooks.signatures.details import View, describe

CODE = "cluster.unrecognised"
MAX_QUOTED = 12  # Warnings quoted per diagnosis; the rest are counted in the detail
# Waiting reasons of a container on its way up (kubernetes/kubernetes pkg/kubelet/kuberuntime and
# pkg/kubelet/kubelet_pods.go): not a problem by themselves.
_STARTING = ("ContainerCreating", "PodInitializing")


@dataclass(frozen=True)
class Unmatched:
    about: str          # what the event is about: a pod name, "job x", "node y", a claim
    who: str            # the component that wrote it
    event: dict
    ref: str            # the object reference for the evidence's source
    pod: PodFacts | None = None
    node: str | None = None
    owner: bool = False
    why: str = ""        # why a rule's reading of it was ruled out, when one was


def warnings_about(facts: Facts) -> Iterator[tuple[str, str, dict, PodFacts | None, str | None, bool]]:
    """(what the event is about, ref, event, pod, node, is-owner) for every event about the target and what
    it rests on."""
    kind = facts.owner_kind or "job"
    for event in facts.owner_events:
        yield f"{kind} {facts.target.name}", f"{kind}/{facts.target.name}", event, None, None, True
    nodes: set[str] = set()
    for pod in facts.pods:
        if facts.is_target_pod(pod) or pod.is_pending_unscheduled():
            for event in pod.events:
                yield pod.name, pod.ref, event, pod, None, False
            if facts.is_target_pod(pod) and pod.node_name:
                nodes.add(pod.node_name)
    for name, events in sorted(facts.lost_pods.items()):
        for event in events:
            yield f"{name} (deleted since)", f"pod/{name}", event, None, None, False
    for key, events in sorted(facts.volume_events.items()):
        for event in events:
            yield key.split("/", 1)[1], key, event, None, None, False
    for node in sorted(nodes):
        for event in facts.node_events.get(node, []):
            yield f"node {node}", f"node/{node}", event, None, node, False
    for claim, events in sorted(facts.nodeclaim_events.items()):
        for event in events:
            yield f"nodeclaim {claim}", f"nodeclaim/{claim}", event, None, None, False


def note(facts: Facts) -> list[Unmatched]:
    """The Warnings no signature reads, once per diagnosis (``facts.cache["unrecognised"]``)."""
    if "unrecognised" in facts.cache:
        return facts.cache["unrecognised"]
    unmatched: list[Unmatched] = []
    seen: set[tuple[str, str]] = set()
    for about, ref, event, pod, node, owner in warnings_about(facts):
        message = str(event.get("message") or event.get("note") or "").strip()
        if event.get("type") != "Warning" or not message or (about, message) in seen:
            continue
        if scan_line(message, source=""):
            continue
        seen.add((about, message))
        unmatched.append(Unmatched(about, event_component(event) or "the cluster", event, ref, pod, node, owner))
    facts.cache["unrecognised"] = unmatched
    return unmatched


def ruled_out(facts: Facts) -> list[Unmatched]:
    """Warnings a rule read but an analyzer ruled that reading out (``facts.cache["ruled_out"]``: the line and
    why): the event stands, quoted by the floor with the reason."""
    why = facts.cache.get("ruled_out") or {}
    if not why:
        return []
    out, seen = [], set()
    for about, ref, event, pod, node, owner in warnings_about(facts):
        message = str(event.get("message") or event.get("note") or "").strip()
        if event.get("type") != "Warning" or (about, message) in seen:
            continue
        reasons = [r for line, r in why.items() if line.rstrip("…") and message.startswith(line.rstrip("…"))]
        if reasons:
            seen.add((about, message))
            out.append(Unmatched(about, event_component(event) or "the cluster", event, ref, pod, node, owner, reasons[0]))
    return out


def floor(facts: Facts, findings: list[Finding]) -> list[Finding]:
    """The floor findings for a diagnosis whose analyzers produced ``findings``."""
    items = note(facts) + ruled_out(facts)
    out = []
    cause = _cause(findings)
    for item in items:
        finding = _event_finding(item, facts)
        if finding is None:
            continue
        if item.owner and cause is not None:
            # The workload controller reporting its replicas failing or restarting: a symptom of whatever made
            # them fail, listed under that cause.
            finding = replace(finding, consequence_of=cause)
        out.append(finding)
    for pod, source, text, what in facts.cache.get("unexplained") or []:
        out.append(_state_finding(what, "", text, None, Evidence(source=source, text=trim(text)),
                                  {"pod": pod.name, "namespace": pod.namespace}, writer="kubelet"))
    serious = any(f.severity != "info" for f in findings + out)
    if not serious:
        out += list(_states(facts))
    return out


def _cause(findings: list[Finding]) -> str | None:
    """The code of the strongest finding the analyzers made that is not itself a consequence, or None."""
    causes = [f for f in findings if f.severity in ("critical", "error") and f.consequence_of is None and f.code != CODE]
    return min(causes, key=lambda f: (f.severity_rank, f.confidence_rank, precedence(f.code))).code if causes else None


# -- Warning events -------------------------------------------------------------------------------------

def _event_finding(item: Unmatched, facts: Facts) -> Finding | None:
    event = item.event
    reason = str(event.get("reason") or "")
    message = trim(str(event.get("message") or event.get("note") or ""))
    entry = vocabulary.by_reason(reason, message, component=item.who) if reason else None
    entry = entry or vocabulary.by_message(message, component=item.who)
    if entry is not None and entry.level == "normal":
        return None
    if _history(item, facts):
        return None
    severity = _severity(item, facts, entry)
    fields = {"writer": item.who, "message": message, "reason": reason}
    if entry is not None:
        fields.update({"meaning": entry.meaning, "next": entry.next, "owner": entry.owner, "upgrade": entry.upgrade,
                       "entry_component": entry.component})
    if item.pod is not None:
        fields.update({"pod": item.pod.name, "namespace": item.pod.namespace})
    elif item.node:
        fields["node"] = item.node
    view = View(code=CODE, fields=fields, values={}, count=1, confidence="low", codes=frozenset())
    if item.why:
        fields["meaning"] = f"{entry.meaning + ' ' if entry is not None else ''}Here: {item.why}."
    title = (f"{item.who} reported {reason} about {item.about}: {item.why}" if item.why
             else f"{item.who} reported {reason} about {item.about}: {entry.meaning}" if entry is not None
             else f"{item.who} reported {reason or 'a Warning'} about {item.about}, which no rule explains: "
                  f"{trim(message, 160)}")
    return Finding(
        code=CODE, severity=severity, confidence="low", title=title, detail=describe(view),
        evidence=[Evidence(source=event_source(item.ref, event), text=message)],
        fix=render_fix(template_for(CODE), **{k: v for k, v in fields.items() if k in ("pod", "namespace", "node")}),
    )


def _severity(item: Unmatched, facts: Facts, entry) -> str:
    """error when what the event is about cannot be created, started or has stopped; warning otherwise."""
    if item.pod is not None:
        return "warning" if _running(item.pod) else "error"
    if item.owner:
        running = [p for p in facts.pods if _running(p)]
        return "warning" if running and not _failed(facts.owner) else "error"
    if entry is not None and entry.level == "error" and item.node is None:
        return "error"
    return "warning"


def _running(pod: PodFacts) -> bool:
    status = pod.pod.get("status") or {}
    if status.get("phase") != "Running":
        return False
    return all((c.get("state") or {}).get("running") for c in status.get("containerStatuses") or [])


def _ready_since(conditions: list[dict], kind: str = "Ready") -> datetime | None:
    for condition in conditions or []:
        if condition.get("type") == kind and condition.get("status") == "True":
            return parse_time(condition.get("lastTransitionTime"))
    return None


def _history(item: Unmatched, facts: Facts) -> bool:
    """The event is older than the return to health of what it is about, which is healthy still."""
    when = event_time(item.event)
    if item.pod is not None:
        ready = _ready_since((item.pod.pod.get("status") or {}).get("conditions") or [])
        started = [parse_time(((c.get("state") or {}).get("running") or {}).get("startedAt"))
                   for c in (item.pod.pod.get("status") or {}).get("containerStatuses") or []]
        marks = [t for t in [ready, *started] if t is not None]
        return _running(item.pod) and ready is not None and bool(marks) and when < max(marks)
    if item.node:
        node = facts.nodes.get(item.node) or {}
        ready = _ready_since((node.get("status") or {}).get("conditions") or [])
        return ready is not None and when < ready
    if item.owner:
        pods = [p for p in facts.pods if facts.is_target_pod(p)]
        if _failed(facts.owner) or not pods or not all(_running(p) for p in pods):
            return _succeeded(facts.owner)
        ready = [_ready_since((p.pod.get("status") or {}).get("conditions") or []) for p in pods]
        return all(r is not None and when < r for r in ready)
    return False


def _failed(owner: dict | None) -> bool:
    condition = newest_condition(owner, "Failed")
    return condition is not None and condition.get("status") == "True"


def _succeeded(owner: dict | None) -> bool:
    for kind in ("Complete", "Succeeded"):
        condition = newest_condition(owner, kind)
        if condition is not None and condition.get("status") == "True":
            return True
    return False


# -- states no analyzer explained -----------------------------------------------------------------------

def _states(facts: Facts) -> Iterator[Finding]:
    """A workload's Failed condition, a container's waiting or terminated reason: the floor when nothing else
    above info was found about them."""
    failed = newest_condition(facts.owner, "Failed")
    if failed is not None and failed.get("status") == "True":
        reason, message = str(failed.get("reason") or "Failed"), str(failed.get("message") or "")
        kind = facts.owner_kind or "job"
        entry = vocabulary.by_reason(reason, message)
        yield _state_finding(
            f"{kind} {facts.target.name} has failed ({reason})", reason, message, entry,
            Evidence(source=f"{kind}/{facts.target.name} status.conditions[Failed]",
                     text=trim(f"Failed=True reason={reason}" + (f": {message}" if message else ""))),
            {"namespace": (facts.owner or {}).get("metadata", {}).get("namespace", "")}, writer=f"{kind} controller")
    for pod in facts.pods:
        if not facts.is_target_pod(pod):
            continue
        for status in pod.container_statuses():
            finding = _container_finding(pod, status)
            if finding is not None:
                yield finding
                break


def _container_finding(pod: PodFacts, status: dict) -> Finding | None:
    name = str(status.get("name") or "")
    state = status.get("state") or {}
    waiting, terminated = state.get("waiting") or {}, state.get("terminated") or {}
    last = (status.get("lastState") or {}).get("terminated") or {}
    if waiting.get("reason") and waiting.get("reason") not in _STARTING:
        reason, message, where = str(waiting["reason"]), str(waiting.get("message") or ""), "state.waiting"
    elif terminated.get("reason") and terminated.get("reason") != "Completed" and terminated.get("exitCode") not in (0, None):
        reason, message, where = str(terminated["reason"]), str(terminated.get("message") or ""), "state.terminated"
        message = message or f"exit code {terminated.get('exitCode')}"
    elif status.get("restartCount") and last.get("exitCode") not in (0, None) and not state.get("running"):
        reason, message, where = str(last.get("reason") or "Error"), f"exit code {last.get('exitCode')}", "lastState.terminated"
    else:
        return None
    entry = vocabulary.by_reason(reason, message, component="kubelet")
    if entry is not None and entry.level == "normal":
        return None
    return _state_finding(
        f"container {name} of pod {pod.name} is {reason}", reason, message, entry,
        Evidence(source=f"{pod.ref} containerStatuses[{name}].{where}",
                 text=trim(f"{where}.reason: {reason}" + (f", message: {message}" if message else ""))),
        {"pod": pod.name, "namespace": pod.namespace}, writer="kubelet")


def _state_finding(what: str, reason: str, message: str, entry, evidence: Evidence, names: dict[str, str], *,
                   writer: str) -> Finding:
    fields = {"writer": writer, "message": message or reason, "reason": reason, **names}
    if entry is not None:
        fields.update({"meaning": entry.meaning, "next": entry.next, "owner": entry.owner, "upgrade": entry.upgrade})
    view = View(code=CODE, fields=fields, values={}, count=1, confidence="low", codes=frozenset())
    title = f"{what[:1].upper()}{what[1:]}" + (f": {entry.meaning}" if entry is not None else
                                               (f": {trim(message, 160)}" if message else ""))
    return Finding(code=CODE, severity="error", confidence="low", title=title, detail=describe(view),
                   evidence=[evidence],
                   fix=render_fix(template_for(CODE), **{k: v for k, v in names.items() if k in ("pod", "namespace") and v}))
