"""Events are stored once and served in both shapes, as kube-apiserver converts them
(kubernetes/kubernetes pkg/apis/events/v1/conversion.go)."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

import pytest
from kubernetes import client, config

from sim.serve import start_sim
from tests.sim.conftest import write_scenarios

SCENARIO = """\
name: events
base: none
target: pod/llama-0
namespace: ml
objects:
  - {apiVersion: v1, kind: Pod, metadata: {name: llama-0}, spec: {containers: [{name: c, image: i}]}}
  - apiVersion: events.k8s.io/v1
    kind: Event
    metadata: {name: llama-0.new}
    regarding: {apiVersion: v1, kind: Pod, name: llama-0, namespace: ml}
    reason: FailedScheduling
    note: 'Failed to schedule pod, no instance type has enough resources'
    type: Warning
    action: Scheduling
    reportingController: karpenter
    reportingInstance: karpenter-6c9f7d9b8-2k7xq
    eventTime: "-40s"
    series: {count: 12, lastObservedTime: "-5s"}
  - apiVersion: v1
    kind: Event
    metadata: {name: llama-0.old}
    involvedObject: {apiVersion: v1, kind: Pod, name: llama-0, namespace: ml}
    reason: FailedScheduling
    message: '0/3 nodes are available'
    type: Warning
    source: {component: default-scheduler}
    firstTimestamp: "-10m"
    lastTimestamp: "-1m"
    count: 4
  - apiVersion: v1
    kind: Event
    metadata: {name: other.1}
    involvedObject: {apiVersion: v1, kind: Node, name: node-a}
    reason: NodeReady
    message: ready
    type: Normal
    source: {component: kubelet}
"""


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    directory = write_scenarios(tmp_path_factory.mktemp("events"), {"events.yaml": SCENARIO})
    with start_sim(scenarios=None, ec2=False, directory=directory) as handle:
        yield handle


def _get(sim, path: str, **query: str) -> dict:
    url = sim.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def _by_name(items: list[dict]) -> dict[str, dict]:
    return {i["metadata"]["name"]: i for i in items}


def test_new_event_through_core_v1_is_converted(sim):
    listed = _get(sim, "/api/v1/namespaces/ml/events", fieldSelector="involvedObject.kind=Pod,involvedObject.name=llama-0")
    events = _by_name(listed["items"])
    assert set(events) == {"llama-0.new", "llama-0.old"}
    new = events["llama-0.new"]
    assert new["apiVersion"] == "v1"
    assert new["involvedObject"] == {"apiVersion": "v1", "kind": "Pod", "name": "llama-0", "namespace": "ml"}
    assert new["message"].startswith("Failed to schedule pod")
    assert new["reportingComponent"] == "karpenter" and new["reportingInstance"] == "karpenter-6c9f7d9b8-2k7xq"
    assert new["source"] == {} and new["firstTimestamp"] is None and new["lastTimestamp"] is None
    assert "count" not in new and "note" not in new and "regarding" not in new
    assert new["eventTime"].endswith("Z") and new["series"]["count"] == 12
    assert new["action"] == "Scheduling"


def test_legacy_event_through_events_v1_is_converted(sim):
    listed = _get(sim, "/apis/events.k8s.io/v1/namespaces/ml/events")
    assert listed["kind"] == "EventList" and listed["apiVersion"] == "events.k8s.io/v1"
    events = _by_name(listed["items"])
    old = events["llama-0.old"]
    assert old["apiVersion"] == "events.k8s.io/v1"
    assert old["regarding"]["name"] == "llama-0" and old["note"] == "0/3 nodes are available"
    assert old["deprecatedSource"] == {"component": "default-scheduler"} and old["deprecatedCount"] == 4
    assert old["deprecatedFirstTimestamp"] and old["eventTime"] is None
    assert events["llama-0.new"]["note"].startswith("Failed to schedule pod")


def test_field_selectors_on_both_apis(sim):
    nodes = _get(sim, "/api/v1/events", fieldSelector="involvedObject.kind=Node")
    assert [e["metadata"]["name"] for e in nodes["items"]] == ["other.1"]
    karpenter = _get(sim, "/api/v1/events", fieldSelector="reportingComponent=karpenter")
    assert [e["metadata"]["name"] for e in karpenter["items"]] == ["llama-0.new"]
    scheduler = _get(sim, "/api/v1/events", fieldSelector="source=default-scheduler")
    assert [e["metadata"]["name"] for e in scheduler["items"]] == ["llama-0.old"]
    via_new_api = _get(sim, "/apis/events.k8s.io/v1/events", fieldSelector="involvedObject.name=llama-0")
    assert sorted(e["metadata"]["name"] for e in via_new_api["items"]) == ["llama-0.new", "llama-0.old"]


def test_official_client_reads_both(sim):
    api = config.new_client_from_config(config_file=str(sim.kubeconfig))
    core = client.CoreV1Api(api).list_namespaced_event("ml", field_selector="involvedObject.name=llama-0")
    assert {e.message for e in core.items} == {"0/3 nodes are available",
                                               "Failed to schedule pod, no instance type has enough resources"}
    new = client.EventsV1Api(api).read_namespaced_event("llama-0.new", "ml")
    assert new.series.count == 12 and new.reporting_controller == "karpenter"
    api.close()
    discovery = _get(sim, "/apis/events.k8s.io/v1")
    assert [r["name"] for r in discovery["resources"] if r["name"] == "events"] == ["events"]
