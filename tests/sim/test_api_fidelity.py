"""Where the simulated API server answers as kube-apiserver does and later work depends on it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

NODEPOOL = "/apis/karpenter.sh/v1/nodepools/gpu"
VALID_NODEPOOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "gpu-new"},
    "spec": {
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s"},
        "template": {"spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
        }},
    },
}


def _request(sim, method: str, path: str, body: object = None, content_type: str = "application/json"):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(sim.url + path, data=data, method=method, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def _get(sim, path: str) -> dict:
    return _request(sim, "GET", path)[1]


def test_put_without_resource_version_on_a_lease_is_422(api_client):
    leases = client.CoordinationV1Api(api_client)
    body = client.V1Lease(metadata=client.V1ObjectMeta(name="holder"), spec=client.V1LeaseSpec(holder_identity="a"))
    created = leases.create_namespaced_lease("default", body)
    created.metadata.resource_version = None
    created.spec.holder_identity = "b"
    with pytest.raises(ApiException) as err:
        leases.replace_namespaced_lease("holder", "default", created)
    status = json.loads(err.value.body)
    assert (err.value.status, status["reason"]) == (422, "Invalid")
    assert status["message"] == ('Lease.coordination.k8s.io "holder" is invalid: metadata.resourceVersion: '
                                 "Invalid value: 0x0: must be specified for an update")
    assert status["details"]["causes"][0]["field"] == "metadata.resourceVersion"
    assert leases.read_namespaced_lease("holder", "default").spec.holder_identity == "a"


def test_put_without_resource_version_on_a_custom_resource_is_422_but_pods_may(sim):
    pool = _get(sim, NODEPOOL)
    del pool["metadata"]["resourceVersion"]
    status, body = _request(sim, "PUT", NODEPOOL, pool)
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"].startswith('NodePool.karpenter.sh "gpu" is invalid: metadata.resourceVersion: Invalid value: 0x0')
    pod_path = "/api/v1/namespaces/team-a/pods/trainer-master-0"
    pod = _get(sim, pod_path)
    del pod["metadata"]["resourceVersion"]
    assert _request(sim, "PUT", pod_path, pod)[0] == 200  # pods allow unconditional updates


def test_strategic_merge_patch_on_a_custom_resource_is_415(sim):
    patch = {"metadata": {"labels": {"a": "b"}}}
    status, body = _request(sim, "PATCH", NODEPOOL, patch, "application/strategic-merge-patch+json")
    assert (status, body["reason"], body["code"]) == (415, "UnsupportedMediaType", 415)
    assert "application/merge-patch+json" in body["message"]
    assert "labels" not in _get(sim, NODEPOOL)["metadata"]
    pod_path = "/api/v1/namespaces/team-a/pods/trainer-master-0"
    assert _request(sim, "PATCH", pod_path, patch, "application/strategic-merge-patch+json")[0] == 200


def test_dry_run_create_validates_enums_against_the_crd_and_stores_nothing(sim, custom):
    invalid = json.loads(json.dumps(VALID_NODEPOOL))
    invalid["spec"]["disruption"]["consolidationPolicy"] = "Sometimes"
    with pytest.raises(ApiException) as err:
        custom.create_cluster_custom_object("karpenter.sh", "v1", "nodepools", invalid, dry_run="All")
    status = json.loads(err.value.body)
    assert (err.value.status, status["reason"]) == (422, "Invalid")
    assert status["message"].startswith('NodePool.karpenter.sh "gpu-new" is invalid: '
                                        'spec.disruption.consolidationPolicy: Unsupported value: "Sometimes"')
    assert [c["field"] for c in status["details"]["causes"]] == ["spec.disruption.consolidationPolicy"]
    created = custom.create_cluster_custom_object("karpenter.sh", "v1", "nodepools", VALID_NODEPOOL, dry_run="All")
    assert created["metadata"]["name"] == "gpu-new"
    names = [p["metadata"]["name"] for p in custom.list_cluster_custom_object("karpenter.sh", "v1", "nodepools")["items"]]
    assert "gpu-new" not in names


def test_dry_run_patch_and_put_refuse_what_they_make_invalid(sim, custom):
    bad = {"spec": {"template": {"spec": {"requirements": [{"key": "k", "operator": "Near", "values": ["x"]}]}}}}
    with pytest.raises(ApiException) as err:
        custom.patch_cluster_custom_object("karpenter.sh", "v1", "nodepools", "gpu", bad, dry_run="All")
    assert err.value.status == 422
    assert "spec.template.spec.requirements[0].operator" in json.loads(err.value.body)["message"]
    # The fixture NodePool lacks fields its CRD requires; an update that leaves them alone passes
    # (validation ratcheting), so only the change is judged.
    fine = {"spec": {"disruption": {"consolidationPolicy": "WhenEmpty"}}}
    assert custom.patch_cluster_custom_object("karpenter.sh", "v1", "nodepools", "gpu", fine, dry_run="All")
    pool = _get(sim, NODEPOOL)
    pool["spec"]["disruption"]["consolidationPolicy"] = "Never"
    status, body = _request(sim, "PUT", NODEPOOL + "?dryRun=All", pool)
    assert status == 422 and "spec.disruption.consolidationPolicy" in body["message"]
    assert _get(sim, NODEPOOL)["spec"]["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"


def test_status_is_written_only_through_the_status_subresource(sim):
    patch = {"spec": {"disruption": {"consolidateAfter": "5m"}}, "status": {"nodes": 9}}
    status, main = _request(sim, "PATCH", NODEPOOL, patch, "application/merge-patch+json")
    assert status == 200 and main["spec"]["disruption"]["consolidateAfter"] == "5m" and "status" not in main
    status, through = _request(sim, "PATCH", NODEPOOL + "/status",
                               {"spec": {"disruption": {"consolidateAfter": "1h"}}, "status": {"nodes": 3}},
                               "application/merge-patch+json")
    assert status == 200 and through["status"] == {"nodes": 3}
    stored = _get(sim, NODEPOOL)
    assert stored["status"] == {"nodes": 3} and stored["spec"]["disruption"]["consolidateAfter"] == "5m"
    assert stored["metadata"]["generation"] == 2  # the /status write did not touch spec


def test_pod_status_through_the_main_resource_is_ignored(sim, core):
    path = "/api/v1/namespaces/team-a/pods/trainer-worker-1"
    _request(sim, "PATCH", path, {"status": {"phase": "Running"}, "metadata": {"labels": {"x": "y"}}},
             "application/merge-patch+json")
    pod = core.read_namespaced_pod("trainer-worker-1", "team-a")
    assert pod.status.phase == "Pending" and pod.metadata.labels["x"] == "y"
    current = _get(sim, path)
    current["status"]["phase"] = "Running"
    assert _request(sim, "PUT", path + "/status", current)[0] == 200
    assert core.read_namespaced_pod("trainer-worker-1", "team-a").status.phase == "Running"
