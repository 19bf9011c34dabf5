"""One event store, two APIs: events.k8s.io/v1 and core/v1 show the same Event in their own shape.

kube-apiserver stores the internal (core) Event and converts on the way out; the field mapping is
kubernetes/kubernetes pkg/apis/events/v1/conversion.go (Convert_v1_Event_To_core_Event and back):
regarding <-> involvedObject, note <-> message, deprecatedSource <-> source,
deprecatedFirstTimestamp / deprecatedLastTimestamp / deprecatedCount <-> firstTimestamp /
lastTimestamp / count; reportingController is core's reportingComponent; eventTime, series, action,
related, reason, type and reportingInstance carry over unchanged.
"""

from __future__ import annotations

CORE = "v1"
EVENTS_V1 = "events.k8s.io/v1"

# (events.k8s.io/v1 field, core/v1 field)
_RENAMED = (
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
    ("reportingController", "reportingComponent"),
)
_SHARED = ("metadata", "eventTime", "series", "action", "related", "reason", "type", "reportingInstance")


def _convert(obj: dict, *, api_version: str, renames: tuple[tuple[str, str], ...]) -> dict:
    out: dict = {"kind": "Event", "apiVersion": api_version}
    for key in _SHARED:
        if key in obj:
            out[key] = obj[key]
    for source, target in renames:
        if obj.get(source) is not None:
            out[target] = obj[source]
    return out


def to_core(obj: dict) -> dict:
    out = _convert(obj, api_version=CORE, renames=_RENAMED)
    # Go zero values as the core/v1 JSON shows them: an empty source, null Time fields, eventTime
    # null when unset; count is omitempty.
    out.setdefault("involvedObject", {})
    out.setdefault("source", {})
    out.setdefault("firstTimestamp", None)
    out.setdefault("lastTimestamp", None)
    out.setdefault("eventTime", None)
    out.setdefault("reportingComponent", "")
    out.setdefault("reportingInstance", "")
    return out


def to_events_v1(obj: dict) -> dict:
    out = _convert(obj, api_version=EVENTS_V1, renames=tuple((b, a) for a, b in _RENAMED))
    out.setdefault("regarding", {})
    out.setdefault("eventTime", None)
    return out


def present(obj: dict, api_version: str) -> dict:
    """The stored event as the API at `api_version` shows it."""
    if obj.get("apiVersion") == api_version:
        return obj
    return to_core(obj) if api_version == CORE else to_events_v1(obj)


def core_field_path(path: str) -> str:
    """events.k8s.io field selectors name the events.k8s.io fields; they are matched on the core shape."""
    for source, target in _RENAMED:
        if path == source or path.startswith(source + "."):
            return target + path[len(source):]
    return path
