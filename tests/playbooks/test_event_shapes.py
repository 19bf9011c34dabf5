"""Events in both shapes the API serves: legacy core/v1 (source, count, lastTimestamp) and
events.k8s.io/v1 read through core/v1 (reportingComponent, series, eventTime, no count)."""
from __future__ import annotations

from playbooks.analyzers import evidence
from playbooks.facts import PodFacts

LEGACY = {
    "reason": "FailedScheduling", "message": "0/3 nodes are available", "type": "Warning",
    "source": {"component": "default-scheduler"}, "count": 4,
    "firstTimestamp": "2026-01-01T10:00:00Z", "lastTimestamp": "2026-01-01T10:05:00Z",
}
# What kube-apiserver returns on /api/v1 for an event written through events.k8s.io/v1 by Karpenter.
MODERN = {
    "reason": "FailedScheduling", "message": "Failed to schedule pod, no instance type has enough resources",
    "type": "Warning", "source": {}, "reportingComponent": "karpenter", "reportingInstance": "karpenter-abc",
    "eventTime": "2026-01-01T10:01:00.123456Z", "series": {"count": 7, "lastObservedTime": "2026-01-01T10:07:00.000001Z"},
    "firstTimestamp": None, "lastTimestamp": None, "count": None,
}
ONCE = {"reason": "Nominated", "message": "Pod should schedule on: nodeclaim/gpu-x", "type": "Normal",
        "reportingController": "karpenter", "eventTime": "2026-01-01T10:06:00.000000Z"}


def test_component_from_either_shape():
    assert evidence.event_component(LEGACY) == "default-scheduler"
    assert evidence.event_component(MODERN) == "karpenter"
    assert evidence.event_component(ONCE) == "karpenter"


def test_count_from_series():
    assert evidence.event_count(LEGACY) == 4
    assert evidence.event_count(MODERN) == 7
    assert evidence.event_count(ONCE) == 1


def test_source_names_the_component_and_the_series_count():
    assert evidence.event_source("pod/ns/p", MODERN) == "event pod/ns/p FailedScheduling (karpenter, x7)"
    assert evidence.event_source("pod/ns/p", ONCE) == "event pod/ns/p Nominated (karpenter)"


def test_time_orders_micro_times_against_legacy_timestamps():
    # As text, "10:05:00Z" > "10:07:00.000001Z" ('Z' sorts after '.'), which would put the newest first.
    ordered = sorted([MODERN, LEGACY, ONCE], key=evidence.event_time)
    assert ordered == [LEGACY, ONCE, MODERN]
    assert evidence.event_time({}) < evidence.event_time(LEGACY)


def test_component_filter_keeps_modern_karpenter_events():
    pod = PodFacts(pod={"metadata": {"name": "p", "namespace": "ns"}}, events=[LEGACY, MODERN, ONCE])
    found = evidence.events(pod, reasons=("FailedScheduling",), components=("karpenter",))
    assert [e.text for e in found] == [MODERN["message"]]
