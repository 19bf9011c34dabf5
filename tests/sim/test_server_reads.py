"""Reads through the official kubernetes client over HTTP."""

import json
import urllib.request

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException


def test_get_pod_and_list_with_label_selectors(core):
    pod = core.read_namespaced_pod("trainer-master-0", "team-a")
    assert pod.spec.node_name == "node-a" and pod.metadata.resource_version
    workers = core.list_namespaced_pod("team-a", label_selector="job-name=trainer,role in (worker)")
    assert [p.metadata.name for p in workers.items] == ["trainer-worker-0", "trainer-worker-1"]
    not_spot = core.list_namespaced_pod("team-a", label_selector="role=worker,!tier")
    assert [p.metadata.name for p in not_spot.items] == ["trainer-worker-0"]


def test_cluster_wide_list_and_field_selectors(core):
    everywhere = core.list_pod_for_all_namespaces()
    assert {p.metadata.name for p in everywhere.items} >= {"karpenter-0", "trainer-master-0"}
    on_node = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=node-a")
    assert sorted(p.metadata.name for p in on_node.items) == ["trainer-master-0", "trainer-worker-0"]
    pending = core.list_namespaced_pod("team-a", field_selector="status.phase!=Running")
    assert [p.metadata.name for p in pending.items] == ["trainer-worker-1"]


def test_events_by_involved_object(core):
    events = core.list_namespaced_event("team-a", field_selector="involvedObject.name=trainer-worker-1")
    assert [(e.reason, e.type) for e in events.items] == [("FailedScheduling", "Warning")]
    kubelet = core.list_event_for_all_namespaces(field_selector="source=kubelet,type=Warning")
    assert [e.reason for e in kubelet.items] == ["BackOff"]


def test_unknown_field_label_is_400(core):
    with pytest.raises(ApiException) as err:
        core.list_namespaced_event("team-a", field_selector="spec.nodeName=x")
    assert err.value.status == 400
    assert "field label not supported" in json.loads(err.value.body)["message"]


def test_pagination_returns_every_item_once(sim, core):
    metadata = {"namespace": "bulk", "labels": {"bulk": "yes"}}
    sim.cluster.add_all(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {**metadata, "name": f"p-{i:04d}"},
         "spec": {"containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Running"}}
        for i in range(1050)
    )
    names, pages, token = [], 0, None
    while True:
        page = core.list_namespaced_pod("bulk", limit=500, _continue=token)
        pages += 1
        names += [p.metadata.name for p in page.items]
        token = page.metadata._continue
        if not token:
            break
    assert pages == 3
    assert names == [f"p-{i:04d}" for i in range(1050)]
    filtered = core.list_pod_for_all_namespaces(limit=500, label_selector="bulk=yes")
    assert len(filtered.items) == 500 and filtered.metadata._continue


def test_bad_continue_token_is_400(core):
    with pytest.raises(ApiException) as err:
        core.list_namespaced_pod("team-a", limit=1, _continue="not-a-token")
    assert err.value.status == 400


def test_not_found_is_a_status_404(core):
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod("nope", "team-a")
    assert err.value.status == 404
    status = json.loads(err.value.body)
    assert status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'pods "nope" not found', "reason": "NotFound",
        "details": {"name": "nope", "kind": "pods"}, "code": 404,
    }
    assert err.value.headers["Content-Type"] == "application/json"


def test_custom_objects_cluster_and_namespaced(custom):
    pool = custom.get_cluster_custom_object("karpenter.sh", "v1", "nodepools", "gpu")
    assert pool["spec"]["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"
    pools = custom.list_cluster_custom_object("karpenter.sh", "v1", "nodepools")
    assert pools["kind"] == "NodePoolList" and [p["metadata"]["name"] for p in pools["items"]] == ["gpu"]
    assert pools["items"][0]["apiVersion"] == "karpenter.sh/v1" and pools["items"][0]["kind"] == "NodePool"
    jobs = custom.list_namespaced_custom_object("kubeflow.org", "v1", "team-a", "pytorchjobs")
    assert [j["metadata"]["name"] for j in jobs["items"]] == ["trainer"]
    everywhere = custom.list_cluster_custom_object("kubeflow.org", "v1", "pytorchjobs")
    assert len(everywhere["items"]) == 1


def test_kinds_outside_the_table_are_served_generically(custom):
    widget = custom.get_namespaced_custom_object("example.com", "v1", "team-a", "widgets", "w1")
    assert widget["spec"] == {"size": 1}


def test_typed_objects_from_other_groups(api_client):
    job = client.BatchV1Api(api_client).read_namespaced_job("beta-job", "team-b")
    assert job.spec.parallelism == 1
    nodes = client.CoreV1Api(api_client).list_node(label_selector="karpenter.sh/nodepool=gpu")
    assert [n.metadata.name for n in nodes.items] == ["node-a"]


def test_discovery_and_version(sim, api_client):
    version = client.VersionApi(api_client).get_code()
    assert (version.major, version.minor, version.git_version) == ("1", "33", "v1.33.3-sim")
    groups = client.ApisApi(api_client).get_api_versions()
    assert "karpenter.sh" in {g.name for g in groups.groups}
    with urllib.request.urlopen(f"{sim.url}/api/v1") as response:
        resources = json.load(response)["resources"]
    log = next(r for r in resources if r["name"] == "pods/log")
    assert (log["kind"], log["namespaced"]) == ("Pod", True)
