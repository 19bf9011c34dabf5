"""Writes through the official kubernetes client over HTTP."""

import json
import urllib.error
import urllib.request

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

ANNOTATION = "karpenter.sh/do-not-disrupt"


def test_merge_patch_persists_and_bumps_resource_version_not_generation(core):
    before = core.read_namespaced_pod("trainer-master-0", "team-a")
    patched = core.patch_namespaced_pod(
        "trainer-master-0", "team-a", {"metadata": {"annotations": {ANNOTATION: "true"}}},
        _content_type="application/merge-patch+json",
    )
    assert patched.metadata.annotations == {ANNOTATION: "true"}
    assert int(patched.metadata.resource_version) > int(before.metadata.resource_version)
    assert patched.metadata.generation == before.metadata.generation
    assert core.read_namespaced_pod("trainer-master-0", "team-a").metadata.annotations == {ANNOTATION: "true"}


def test_default_client_patch_is_strategic_merge(custom):
    body = {"spec": {"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30m"}}}
    patched = custom.patch_cluster_custom_object("karpenter.sh", "v1", "nodepools", "gpu", body)
    assert patched["spec"]["disruption"] == body["spec"]["disruption"]
    assert patched["metadata"]["generation"] == 2  # spec changed


def test_dry_run_returns_the_result_without_storing(custom):
    body = {"spec": {"disruption": {"consolidationPolicy": "WhenEmpty"}}}
    dry = custom.patch_cluster_custom_object("karpenter.sh", "v1", "nodepools", "gpu", body, dry_run="All")
    assert dry["spec"]["disruption"]["consolidationPolicy"] == "WhenEmpty"
    stored = custom.get_cluster_custom_object("karpenter.sh", "v1", "nodepools", "gpu")
    assert stored["spec"]["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"
    assert stored["metadata"]["resourceVersion"] == dry["metadata"]["resourceVersion"]


def test_json_patch_with_escaped_pointer_and_dry_run(core):
    ops = [{"op": "add", "path": "/metadata/annotations", "value": {}},
           {"op": "add", "path": "/metadata/annotations/karpenter.sh~1do-not-disrupt", "value": "true"}]
    dry = core.patch_namespaced_pod("trainer-worker-1", "team-a", ops, dry_run="All")
    assert dry.metadata.annotations == {ANNOTATION: "true"}
    assert core.read_namespaced_pod("trainer-worker-1", "team-a").metadata.annotations is None
    core.patch_namespaced_pod("trainer-worker-1", "team-a", ops, _content_type="application/json-patch+json")
    assert core.read_namespaced_pod("trainer-worker-1", "team-a").metadata.annotations == {ANNOTATION: "true"}


def test_json_patch_failed_test_op_is_422(core):
    ops = [{"op": "test", "path": "/status/phase", "value": "Succeeded"},
           {"op": "replace", "path": "/status/phase", "value": "Failed"}]
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_pod("trainer-worker-1", "team-a", ops)
    assert err.value.status == 422
    assert core.read_namespaced_pod("trainer-worker-1", "team-a").status.phase == "Pending"


def _raw(sim, method, path, body, content_type):
    request = urllib.request.Request(f"{sim.url}{path}", data=json.dumps(body).encode(), method=method,
                                     headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


def test_json_patch_content_type_with_object_body_is_400(sim):
    status, body = _raw(sim, "PATCH", "/api/v1/namespaces/team-a/pods/trainer-master-0",
                        {"metadata": {"labels": {"x": "y"}}}, "application/json-patch+json")
    assert status == 400 and body["kind"] == "Status" and body["reason"] == "BadRequest"


def test_create_conflict_and_delete(core):
    event = client.CoreV1Event(
        metadata=client.V1ObjectMeta(name="gpubot.1", namespace="team-a"),
        involved_object=client.V1ObjectReference(kind="Pod", name="trainer-master-0", namespace="team-a"),
        reason="GpubotDiagnosis", message="diagnosed", type="Normal",
    )
    created = core.create_namespaced_event("team-a", event)
    assert created.metadata.uid and created.metadata.creation_timestamp and created.metadata.resource_version
    with pytest.raises(ApiException) as err:
        core.create_namespaced_event("team-a", event)
    assert err.value.status == 409 and json.loads(err.value.body)["reason"] == "AlreadyExists"
    core.delete_namespaced_event("gpubot.1", "team-a")
    with pytest.raises(ApiException) as err:
        core.read_namespaced_event("gpubot.1", "team-a")
    assert err.value.status == 404


def test_lease_replace_with_stale_resource_version_conflicts(api_client):
    leases = client.CoordinationV1Api(api_client)
    body = client.V1Lease(metadata=client.V1ObjectMeta(name="gpubot-leader"),
                          spec=client.V1LeaseSpec(holder_identity="replica-a", lease_duration_seconds=15))
    first = leases.create_namespaced_lease("default", body)
    first.spec.holder_identity = "replica-b"
    second = leases.replace_namespaced_lease("gpubot-leader", "default", first)
    assert second.spec.holder_identity == "replica-b"
    first.spec.holder_identity = "replica-c"  # still carries the old resourceVersion
    with pytest.raises(ApiException) as err:
        leases.replace_namespaced_lease("gpubot-leader", "default", first)
    assert err.value.status == 409 and json.loads(err.value.body)["reason"] == "Conflict"


def test_delete_pod_returns_the_pod(core):
    deleted = core.delete_namespaced_pod("trainer-worker-1", "team-a")
    assert deleted.metadata.name == "trainer-worker-1"
    names = [p.metadata.name for p in core.list_namespaced_pod("team-a").items]
    assert names == ["trainer-master-0", "trainer-worker-0"]


def test_merge_patch_with_stale_resource_version_conflicts(core):
    pod = core.read_namespaced_pod("trainer-master-0", "team-a")
    stale = pod.metadata.resource_version
    core.patch_namespaced_pod("trainer-master-0", "team-a", {"metadata": {"labels": {"a": "1"}}})
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_pod("trainer-master-0", "team-a",
                                  {"metadata": {"resourceVersion": stale, "labels": {"a": "2"}}})
    assert err.value.status == 409


def test_delete_config_map_returns_a_success_status(core):
    core.create_namespaced_config_map(
        "team-a", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm"), data={"a": "1"}))
    status = core.delete_namespaced_config_map("cm", "team-a")
    assert status.status == "Success" and status.details.name == "cm"
