"""Warnings no signature knows, about anything the diagnosis is about: never dropped, quoted as they are.

Every Warning event about a target pod (scheduled or not), a pending pod of the job, the workload the
user named (the Job, PyTorchJob or JobSet controller's events), the claims of the pods' volumes and the
nodes the target pods run on is read. One the signature catalogue recognises becomes (or joins) a finding;
one it does not is kept in ``facts.cache["unrecognised"]`` and quoted as a gap, so that "No known problem
found" is never said over a Warning the cluster wrote.
"""
from __future__ import annotations

from typing import Iterator

from playbooks.analyzers.evidence import event_component
from playbooks.facts import Facts
from playbooks.signatures import scan_line

MAX_QUOTED = 12  # gaps quoted per diagnosis; the rest are counted


def warnings_about(facts: Facts) -> Iterator[tuple[str, dict]]:
    """(what the event is about, event) for every Warning event about the target and what it rests on."""
    for event in facts.owner_events:
        yield f"{facts.owner_kind or 'job'} {facts.target.name}", event
    nodes: set[str] = set()
    for pod in facts.pods:
        if facts.is_target_pod(pod) or pod.is_pending_unscheduled():
            for event in pod.events:
                yield pod.name, event
            if facts.is_target_pod(pod) and pod.node_name:
                nodes.add(pod.node_name)
    for key, events in sorted(facts.volume_events.items()):
        for event in events:
            yield key.split("/", 1)[1], event
    for node in sorted(nodes):
        for event in facts.node_events.get(node, []):
            yield f"node {node}", event


def note(facts: Facts) -> None:
    unmatched: list[tuple[str, str, str]] = facts.cache.setdefault("unrecognised", [])
    seen: set[tuple[str, str]] = set()
    left = 0
    for about, event in warnings_about(facts):
        message = (event.get("message") or event.get("note") or "").strip()
        if event.get("type") != "Warning" or not message or (about, message) in seen or scan_line(message, source=""):
            continue
        seen.add((about, message))
        who = event_component(event) or "the cluster"
        unmatched.append((about, who, message))
        if len(unmatched) > MAX_QUOTED:
            left += 1
            continue
        facts.gaps.append(f"{who} said something about {about} that gpubot does not recognise, quoted as it is: "
                          f"{event.get('reason', '')}: {message[:300]}")
    if left:
        facts.gaps.append(f"{left} more Warning event{'s' if left > 1 else ''} gpubot does not recognise were not quoted.")
