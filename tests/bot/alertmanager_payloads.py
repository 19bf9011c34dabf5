"""Alertmanager webhook bodies for tests: the fixtures under tests/fixtures/alertmanager (each file
starts with `//` lines saying where its shape and labels come from) and small bodies built here."""
from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "alertmanager"


def fixture(name: str) -> bytes:
    """The fixture's JSON as Alertmanager would post it: its `//` header lines left out."""
    lines = (FIXTURES / name).read_text().splitlines()
    return "\n".join(line for line in lines if not line.startswith("//")).encode()


def alert(labels: dict, *, status: str = "firing", annotations: dict | None = None, **fields) -> dict:
    body = {"status": status, "labels": {"alertname": "TestAlert", **labels}, "annotations": annotations or {},
            "startsAt": "2026-05-14T09:00:00.123456789Z", "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus:9090/graph?g0.expr=up", "fingerprint": "0123456789abcdef"}
    return {**body, **fields}


def webhook(*alerts: dict, **fields) -> dict:
    statuses = {a.get("status") for a in alerts if isinstance(a, dict)}
    body = {"version": "4", "groupKey": "{}:{}", "truncatedAlerts": 0,
            "status": "firing" if "firing" in statuses or not statuses else "resolved",
            "receiver": "gpubot", "groupLabels": {}, "commonLabels": {}, "commonAnnotations": {},
            "externalURL": "http://alertmanager:9093", "alerts": list(alerts)}
    return {**body, **fields}


def encode(body) -> bytes:
    return json.dumps(body).encode()
