"""Building Evidence from objects and events: verbatim text plus where it came from."""
from __future__ import annotations

import json

from playbooks.facts import PodFacts
from playbooks.model import Evidence

MAX_TEXT = 600


def trim(text: str, limit: int = MAX_TEXT) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def event_source(ref: str, event: dict) -> str:
    component = (event.get("source") or {}).get("component") or event.get("reportingComponent") or ""
    count = event.get("count")
    times = f", x{count}" if count and int(count) > 1 else ""
    return f"event {ref} {event.get('reason', '')} ({component}{times})".replace(" ()", "")


def from_event(ref: str, event: dict) -> Evidence:
    return Evidence(source=event_source(ref, event), text=trim(event.get("message", "")))


def events(pod: PodFacts, *, reasons: tuple[str, ...] = (), components: tuple[str, ...] = ()) -> list[Evidence]:
    out = []
    for event in pod.events:
        component = (event.get("source") or {}).get("component") or event.get("reportingComponent") or ""
        if reasons and event.get("reason") not in reasons:
            continue
        if components and not any(c in component for c in components):
            continue
        out.append(from_event(pod.ref, event))
    return out


def field(ref: str, path: str, value: object) -> Evidence:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return Evidence(source=f"{ref} {path}", text=trim(f"{path}: {text}"))
