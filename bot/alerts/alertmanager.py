"""Alertmanager's webhook body (version 4) read into typed data, each alert as a ``Problem``.

The shape is Alertmanager's own: ``Message`` in prometheus/alertmanager notify/webhook/webhook.go
(``version`` "4", ``groupKey``, ``truncatedAlerts``) around ``template.Data`` in template/template.go
(``receiver``, ``status``, ``alerts``, ``groupLabels``, ``commonLabels``, ``commonAnnotations``,
``externalURL``; each alert ``status``, ``labels``, ``annotations``, ``startsAt``, ``endsAt``,
``generatorURL``, ``fingerprint``). Times are Go ``time.Time`` in JSON: RFC 3339 with up to nine
fractional digits, and the zero time ``0001-01-01T00:00:00Z`` for an alert that has not ended.

Anything else is refused with ``MalformedAlert``, whose message is one line saying what is wrong.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Mapping

from bot.alerts.labels import code_for, group_for, severity_for, target_for, workload_namespace
from playbooks import linear
from playbooks.model import Evidence
from playbooks.problems import Problem
from playbooks.redact import redact

MAX_BODY = 1024 * 1024
MAX_ALERTS = 1000  # set the receiver's max_alerts to this: Alertmanager then truncates and says so
STATUSES = ("firing", "resolved")
TITLE_LIMIT = 200

# Go's time.Time MarshalJSON writes RFC 3339 with nanoseconds at most; datetime.fromisoformat would
# also take forms Alertmanager never sends (dates alone, week dates), so the shape is checked first.
_RFC3339 = linear.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")
_GO_ZERO_TIME = datetime(1, 1, 1, tzinfo=timezone.utc)


class MalformedAlert(ValueError):
    """A webhook body gpubot cannot read; the message is one line saying what is wrong."""


class PayloadTooLarge(MalformedAlert):
    """A body over MAX_BODY bytes or with more than MAX_ALERTS alerts."""


@dataclass(frozen=True)
class IncomingAlert:
    status: str  # "firing" | "resolved"
    problem: Problem
    starts_at: datetime  # UTC
    ends_at: datetime | None  # UTC; None while Alertmanager has no end for it (Go's zero time)
    generator_url: str
    am_fingerprint: str  # Alertmanager's fingerprint of the alert's labels
    annotations: dict[str, str] = field(default_factory=dict)  # redacted

    @property
    def alertname(self) -> str:
        return self.problem.labels["alertname"]


@dataclass(frozen=True)
class AlertBatch:
    receiver: str
    status: str  # "firing" when any alert of the group fires
    group_key: str
    truncated: int  # alerts Alertmanager left out (the receiver's max_alerts)
    alerts: list[IncomingAlert]
    external_url: str = ""
    body: bytes = field(default=b"", repr=False, compare=False)  # as received, for the inbox to store

    @property
    def dedupe_key(self) -> str:
        """Equal for the same notification sent again: Alertmanager retries a webhook whose answer it did
        not get (notify/webhook/webhook.go), with the same group and the same alerts in the same states."""
        alerts = sorted((a.am_fingerprint, a.status, a.starts_at.isoformat()) for a in self.alerts)
        key = json.dumps([self.group_key, self.status, self.truncated, alerts])
        return hashlib.sha256(key.encode()).hexdigest()

    def by_problem(self) -> list[IncomingAlert]:
        """One alert per problem fingerprint, firing when any alert for it fires.

        Several alerts can be one problem: an Xid on GPUs 0 and 3 of one node is gpu.xid_error on that
        node. Reading them one by one, a resolved GPU 0 after a firing GPU 3 would resolve a problem
        that is still there."""
        chosen: dict[str, IncomingAlert] = {}
        for alert in self.alerts:
            seen = chosen.get(alert.problem.fingerprint)
            if seen is None or (seen.status == "resolved" and alert.status == "firing"):
                chosen[alert.problem.fingerprint] = alert
        return list(chosen.values())


def parse_webhook(body: bytes, *, cluster: str = "") -> AlertBatch:
    """``body`` as sent by Alertmanager's webhook receiver; ``cluster`` names the cluster the alerts
    are about (the one this gpubot serves), so they share fingerprints with the sweep's problems."""
    if len(body) > MAX_BODY:
        raise PayloadTooLarge(f"body of {len(body):,} bytes is over the {MAX_BODY:,}-byte limit: "
                              f"set max_alerts: {MAX_ALERTS} on the gpubot webhook receiver")
    try:
        data = json.loads(body)
    except RecursionError:
        raise MalformedAlert("body is not JSON gpubot can read: nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise MalformedAlert(f"body is not JSON: {_one_line(str(exc))}") from None
    if not isinstance(data, dict):
        raise MalformedAlert(f"body must be a JSON object, not {_json_type(data)}")
    if data.get("version") != "4":
        raise MalformedAlert(f"webhook version {data.get('version')!r} is not supported: gpubot reads version '4'")
    alerts = data.get("alerts")
    if not isinstance(alerts, list):
        raise MalformedAlert(f"alerts must be a list, not {_json_type(alerts)}")
    if len(alerts) > MAX_ALERTS:
        raise PayloadTooLarge(f"{len(alerts)} alerts in one body, over the limit of {MAX_ALERTS}: "
                              f"set max_alerts: {MAX_ALERTS} on the gpubot webhook receiver")
    truncated = data.get("truncatedAlerts", 0)  # absent before Alertmanager 0.22
    if not isinstance(truncated, int) or isinstance(truncated, bool) or truncated < 0:
        raise MalformedAlert(f"truncatedAlerts must be a count, not {truncated!r}")
    return AlertBatch(
        receiver=_string(data, "receiver", where=""),
        status=_status(data, where=""),
        group_key=_string(data, "groupKey", where=""),
        truncated=truncated,
        alerts=[_alert(a, index=i, cluster=cluster) for i, a in enumerate(alerts)],
        external_url=_string(data, "externalURL", where="", required=False),
        body=body,
    )


def _alert(raw: Any, *, index: int, cluster: str) -> IncomingAlert:
    where = f"alerts[{index}]."
    if not isinstance(raw, dict):
        raise MalformedAlert(f"alerts[{index}] must be an object, not {_json_type(raw)}")
    labels = _string_map(raw, "labels", where=where)
    if not labels.get("alertname"):
        raise MalformedAlert(f"{where}labels.alertname is missing: every Prometheus alert has one")
    annotations = _string_map(raw, "annotations", where=where, required=False)
    status = _status(raw, where=where)
    starts_at = _time(raw, "startsAt", where=where)
    ends_at = _time(raw, "endsAt", where=where, required=False)
    am_fingerprint = _string(raw, "fingerprint", where=where, required=False) or _label_hash(labels)
    problem = _problem(labels, annotations, am_fingerprint=am_fingerprint, cluster=cluster)
    return IncomingAlert(status=status, problem=problem, starts_at=starts_at, ends_at=ends_at,
                         generator_url=_string(raw, "generatorURL", where=where, required=False),
                         am_fingerprint=am_fingerprint,
                         annotations={k: _redact_value(k, v) for k, v in annotations.items()})


def _problem(labels: dict[str, str], annotations: dict[str, str], *, am_fingerprint: str, cluster: str) -> Problem:
    code = code_for(labels)
    target = target_for(labels, code=code, am_fingerprint=am_fingerprint)
    summary = _first_line(annotations.get("summary", ""))
    description = annotations.get("description", "").strip()
    title = summary or _first_line(description) or labels["alertname"]
    if target.kind != "alert" and target.name not in title:
        title = f"{title} ({target})"
    return Problem(
        code=code, severity=severity_for(labels), target=target, cluster=cluster,
        title=_cut(redact(title), TITLE_LIMIT),
        detail=redact(description) if summary else "",
        evidence=_evidence(labels, annotations),
        source="alertmanager",
        group=group_for(labels, code=code, target=target),
        nodepool=labels.get("nodepool") or None,
        labels={k: _redact_value(k, v) for k, v in labels.items()},
        workload_namespace=workload_namespace(labels) if target.namespace is None else None,
    )


def _evidence(labels: dict[str, str], annotations: dict[str, str]) -> tuple[Evidence, ...]:
    """The alert as Alertmanager holds it, one ``name=value`` line each, alertname first and the rest
    sorted, as template.KV.SortedPairs orders them."""
    name = labels["alertname"]
    items = [Evidence(source=f"alertmanager labels {name}", text=redact(_pairs(labels)))]
    if annotations:
        items.append(Evidence(source=f"alertmanager annotations {name}", text=redact(_pairs(annotations))))
    return tuple(items)


def _pairs(kv: Mapping[str, str]) -> str:
    keys = sorted(kv, key=lambda k: (k != "alertname", k))
    return "\n".join(f"{k}={kv[k]}" for k in keys)


def _redact_value(key: str, value: str) -> str:
    """A label or annotation value redacted as the ``key=value`` line it appears in would be."""
    line = redact(f"{key}={value}")
    return line[len(key) + 1:] if line.startswith(f"{key}=") else redact(value)


def _string(obj: dict, key: str, *, where: str, required: bool = True) -> str:
    value = obj.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise MalformedAlert(f"{where}{key} must be a string, not {_json_type(value)}")
    return value


def _status(obj: dict, *, where: str) -> str:
    status = obj.get("status")
    if status not in STATUSES:
        raise MalformedAlert(f"{where}status must be 'firing' or 'resolved', not {_show(status)}")
    return status


def _string_map(obj: dict, key: str, *, where: str, required: bool = True) -> dict[str, str]:
    value = obj.get(key)
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise MalformedAlert(f"{where}{key} must be an object of strings, not {_json_type(value)}")
    for k, v in value.items():
        if not isinstance(v, str):
            raise MalformedAlert(f"{where}{key}.{_one_line(k)[:100]} must be a string, not {_json_type(v)}")
    return value


def _time(obj: dict, key: str, *, where: str, required: bool = True) -> datetime | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not _RFC3339.match(value):
        raise MalformedAlert(f"{where}{key} is not an RFC 3339 timestamp: {_show(value)}")
    try:
        parsed = datetime.fromisoformat(value).astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise MalformedAlert(f"{where}{key} is not a valid time: {_show(value)}") from None
    if parsed == _GO_ZERO_TIME:
        if required:
            raise MalformedAlert(f"{where}{key} is Go's zero time: the alert has no start")
        return None
    return parsed


def _label_hash(labels: Mapping[str, str]) -> str:
    """Stands in for Alertmanager's fingerprint (a hash of the label set) where an old version sent none."""
    return hashlib.sha256(_pairs(labels).encode()).hexdigest()[:16]


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _show(value: Any) -> str:
    shown = repr(value) if isinstance(value, str) else _json_type(value)
    return _one_line(shown if len(shown) <= 60 else shown[:57] + "...")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)
