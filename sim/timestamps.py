"""Timestamps in scenario files: relative to load time ("-20s", "-5m", "-2h", "-1d") or RFC 3339."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

_RELATIVE = re.compile(r"^-(\d+)([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
# metav1.MicroTime fields carry microseconds on the wire; metav1.Time fields are whole seconds.
_MICRO_TIME_FIELDS = frozenset({"eventTime", "lastObservedTime", "acquireTime", "renewTime"})


def format_time(moment: datetime, *, micro: bool = False) -> str:
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")


def relative(text: str, *, now: datetime, micro: bool = False) -> str | None:
    """RFC 3339 for a relative timestamp such as "-5m"; None when `text` is not one."""
    match = _RELATIVE.match(text)
    if match is None:
        return None
    amount, unit = int(match.group(1)), match.group(2)
    return format_time(now - timedelta(**{_UNITS[unit]: amount}), micro=micro)


def resolve(node: object, *, now: datetime, key: str = "") -> object:
    """A copy of `node` with every relative timestamp string replaced; other values unchanged."""
    if isinstance(node, dict):
        return {k: resolve(v, now=now, key=k) for k, v in node.items()}
    if isinstance(node, list):
        return [resolve(v, now=now, key=key) for v in node]
    if isinstance(node, str) and node[:1] == "-":
        resolved = relative(node, now=now, micro=key in _MICRO_TIME_FIELDS)
        return node if resolved is None else resolved
    return node
