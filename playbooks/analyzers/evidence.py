"""Building Evidence from objects and events: verbatim text plus where it came from."""
from __future__ import annotations

import json
from datetime import datetime, timezone

from playbooks.facts import PodFacts
from playbooks.model import Evidence

MAX_TEXT = 600


def trim(text: str, limit: int = MAX_TEXT) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def event_component(event: dict) -> str:
    """Who wrote the event, in either shape: legacy core/v1 ``source.component``, or events.k8s.io/v1
    ``reportingController`` (``reportingComponent`` when read through core/v1).

    kubernetes/kubernetes pkg/apis/core/v1 Event and pkg/apis/events/v1 conversion: ``reportingController``
    is stored as ``reportingComponent``; new-style recorders leave ``source`` empty.
    """
    return str((event.get("source") or {}).get("component") or event.get("reportingComponent")
               or event.get("reportingController") or "")


def event_count(event: dict) -> int:
    """How many times it happened: legacy ``count``, or events.k8s.io/v1 ``series.count`` (a new-style
    event seen once has no series and no count)."""
    for value in (event.get("count"), (event.get("series") or {}).get("count")):
        try:
            if value:
                return int(value)
        except (TypeError, ValueError):
            continue
    return 1


def parse_time(value: object) -> datetime | None:
    """A Kubernetes timestamp (RFC 3339, ``Z`` or offset) as an aware datetime; None if absent or bad."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


_EPOCH = datetime.min.replace(tzinfo=timezone.utc)


def event_time(event: dict) -> datetime:
    """When the event last happened, in either shape: ``lastTimestamp``, else events.k8s.io/v1
    ``series.lastObservedTime``, else ``eventTime``, else ``firstTimestamp`` / creation. Parsed, since
    ``eventTime`` is a MicroTime ("...:33.000000Z") that does not sort as text against "...:33Z"."""
    for value in (event.get("lastTimestamp"), (event.get("series") or {}).get("lastObservedTime"),
                  event.get("eventTime"), event.get("firstTimestamp"),
                  (event.get("metadata") or {}).get("creationTimestamp")):
        parsed = parse_time(value)
        if parsed is not None:
            return parsed
    return _EPOCH


def event_source(ref: str, event: dict) -> str:
    component = event_component(event)
    count = event_count(event)
    times = f", x{count}" if count > 1 else ""
    return f"event {ref} {event.get('reason', '')} ({component}{times})".replace(" ()", "")


def from_event(ref: str, event: dict) -> Evidence:
    return Evidence(source=event_source(ref, event), text=trim(event.get("message", "")))


def events(pod: PodFacts, *, reasons: tuple[str, ...] = (), components: tuple[str, ...] = ()) -> list[Evidence]:
    out = []
    for event in pod.events:
        component = event_component(event)
        if reasons and event.get("reason") not in reasons:
            continue
        if components and not any(c in component for c in components):
            continue
        out.append(from_event(pod.ref, event))
    return out


def field(ref: str, path: str, value: object) -> Evidence:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return Evidence(source=f"{ref} {path}", text=trim(f"{path}: {text}"))


# Who decides where a pod goes: kube-scheduler, open-source Karpenter, EKS Auto Mode's Karpenter.
SCHEDULING_REPORTERS = ("default-scheduler", "karpenter", "eks-auto-mode")


def newest(events: list[dict]) -> dict | None:
    """The event that happened last (event_time), or None for no events."""
    return max(events, key=event_time) if events else None


def superseded(events: list[dict]) -> list[dict]:
    """The events about one object that a newer event from the same scheduling reporter with the same reason
    replaces: each FailedScheduling is that reporter's verdict of one scheduling attempt
    (kubernetes/kubernetes pkg/scheduler/schedule_one.go handleSchedulingFailure records one event per
    attempt; kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/events.go
    PodFailedToScheduleEvent, one per provisioning loop), so only the newest says why the pod waits now.
    An older one with the same message is the same verdict (the event's count), not history. The kubelet's
    events are not ranked this way: its older "Failed to pull image ..." is the cause its newer
    "Error: ImagePullBackOff" only repeats."""
    latest: dict[tuple[str, str], dict] = {}
    for event in events:
        component = event_component(event)
        if not any(r in component for r in SCHEDULING_REPORTERS):
            continue
        key = (component, str(event.get("reason") or ""))
        if key not in latest or event_time(event) > event_time(latest[key]):
            latest[key] = event
    out = []
    for event in events:
        last = latest.get((event_component(event), str(event.get("reason") or "")))
        if last is not None and last is not event and event_time(event) < event_time(last) \
                and _message(event) != _message(last):
            out.append(event)
    return out


def _message(event: dict) -> str:
    return " ".join(str(event.get("message") or event.get("note") or "").split())


def newest_condition(obj: dict | None, kind: str) -> dict | None:
    """The object's condition of that type with the latest transition, or None: the newest state wins over an
    older event (a job resumed is no longer suspended, a node Ready again is no longer NotReady)."""
    matching = [c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c.get("type") == kind]
    return max(matching, key=lambda c: str(c.get("lastTransitionTime") or "")) if matching else None
