"""The gateway's reads by reference and its patches, against the simulated API server over HTTP:
the exact Content-Type, dryRun=All, the resourceVersion precondition, the API's own refusals, and
which failures are retried (429, 503, no connection) and which never are (409, 422, 403, 404, timeout)."""
from __future__ import annotations

import json
import time
import urllib.request

import pytest

from bot.errors import ClusterUnreachable
from bot.gateway import connect
from bot.gateway.writes import WriteFailed
from bot.settings import load_settings
from playbooks.gather import ReadFailed
from playbooks.remediations.model import JSON_PATCH, MERGE_PATCH, Change, ObjectRef, escape, with_precondition
from sim.serve import start_sim
from tests.fakes.ports import refused_port
from tests.sim.conftest import write_scenarios

SCENARIO = """\
name: writes
base: none
target: pytorchjob/trainer
namespace: team-a
api:
  forbidden: [patch namespaces/locked/pods]
objects:
  - {apiVersion: v1, kind: Namespace, metadata: {name: locked}}
  - apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata: {name: trainer}
    spec:
      pytorchReplicaSpecs:
        Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: trainer}]}}}
  - apiVersion: kubeflow.org/v1
    kind: TFJob
    metadata: {name: tf}
    spec: {tfReplicaSpecs: {Worker: {replicas: 1}}}
  - apiVersion: kubeflow.org/v2beta1
    kind: MPIJob
    metadata: {name: mpi}
    spec: {mpiReplicaSpecs: {Worker: {replicas: 1}}}
  - apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata: {name: js}
    spec: {replicatedJobs: []}
  - apiVersion: batch/v1
    kind: Job
    metadata: {name: batch}
    spec: {template: {spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}}}
  - apiVersion: v1
    kind: Pod
    metadata: {name: trainer-worker-0, labels: {training.kubeflow.org/job-name: trainer}}
    spec: {nodeName: gpu-1, containers: [{name: pytorch, image: trainer}]}
    status: {phase: Running}
  - apiVersion: v1
    kind: Pod
    metadata: {name: trainer-worker-1, labels: {training.kubeflow.org/job-name: trainer}}
    spec: {nodeName: gpu-1, containers: [{name: pytorch, image: trainer}]}
    status: {phase: Running}
  - apiVersion: v1
    kind: Pod
    metadata: {name: other-0, labels: {training.kubeflow.org/job-name: other}}
    spec: {containers: [{name: main, image: x}]}
  - apiVersion: v1
    kind: Pod
    metadata: {name: guarded, namespace: locked}
    spec: {containers: [{name: main, image: x}]}
  - apiVersion: v1
    kind: Node
    metadata: {name: gpu-1, labels: {karpenter.sh/nodepool: gpu}}
    spec: {providerID: aws:///us-west-2a/i-0123456789abcdef0}
    status: {conditions: [{type: Ready, status: "True"}]}
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: gpu}
    spec:
      disruption: {budgets: [{nodes: 10%}], consolidateAfter: 0s, consolidationPolicy: WhenEmptyOrUnderutilized}
      template:
        spec:
          expireAfter: 720h
          nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
          requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [p5]}]
"""

ANNOTATION = "karpenter.sh/do-not-disrupt"
POD = ObjectRef("v1", "Pod", "pods", "trainer-worker-0", "team-a")
NODE = ObjectRef("v1", "Node", "nodes", "gpu-1")
NODEPOOL = ObjectRef("karpenter.sh/v1", "NodePool", "nodepools", "gpu")
PYTORCHJOB = ObjectRef("kubeflow.org/v1", "PyTorchJob", "pytorchjobs", "trainer", "team-a")
ANNOTATE = {"metadata": {"annotations": {ANNOTATION: "true"}}}


@pytest.fixture(scope="module")
def scenario_dir(tmp_path_factory):
    return write_scenarios(tmp_path_factory.mktemp("writes"), {"writes.yaml": SCENARIO})


@pytest.fixture
def sim(scenario_dir):
    # A fresh cluster per test: every test writes.
    with start_sim(scenarios=None, ec2=False, directory=scenario_dir) as handle:
        yield handle


@pytest.fixture
def gw(sim):
    gateway = connect(load_settings({"KUBECONFIG": str(sim.kubeconfig), "GPUBOT_RETRY_BACKOFF": "0.01"}))
    yield gateway
    gateway.close()


def _fault(sim, **spec):
    req = urllib.request.Request(f"{sim.url}/sim/faults", data=json.dumps(spec).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()


def _patches(sim):
    return [r for r in sim.request_details() if r["method"] == "PATCH"]


# -- reads by reference ------------------------------------------------------------------------------

@pytest.mark.parametrize("ref", [POD, NODE, NODEPOOL, PYTORCHJOB,
                                 ObjectRef("batch/v1", "Job", "jobs", "batch", "team-a"),
                                 ObjectRef("kubeflow.org/v1", "TFJob", "tfjobs", "tf", "team-a"),
                                 ObjectRef("kubeflow.org/v2beta1", "MPIJob", "mpijobs", "mpi", "team-a"),
                                 ObjectRef("jobset.x-k8s.io/v1alpha2", "JobSet", "jobsets", "js", "team-a")],
                         ids=str)
def test_read_object_of_each_kind(gw, sim, ref):
    sim.reset_requests()
    obj = gw.read_object(ref)
    assert (obj["kind"], obj["metadata"]["name"], obj["metadata"].get("namespace")) == (ref.kind, ref.name,
                                                                                         ref.namespace)
    assert obj["metadata"]["resourceVersion"]
    assert sim.request_log() == [f"GET {_path(ref)} 200"]


def _path(ref: ObjectRef) -> str:
    base = f"/apis/{ref.api_version}" if ref.group else f"/api/{ref.api_version}"
    scope = f"/namespaces/{ref.namespace}" if ref.namespace else ""
    return f"{base}{scope}/{ref.plural}/{ref.name}"


@pytest.mark.parametrize("ref", [
    ObjectRef("v1", "Pod", "pods", "nope", "team-a"), ObjectRef("v1", "Node", "nodes", "nope"),
    ObjectRef("karpenter.sh/v1", "NodePool", "nodepools", "nope"),
    ObjectRef("kubeflow.org/v1", "PyTorchJob", "pytorchjobs", "nope", "team-a"),
], ids=str)
def test_read_object_missing_is_none(gw, ref):
    assert gw.read_object(ref) is None


def test_read_object_of_an_api_not_served_is_a_failed_read(gw):
    with pytest.raises(ReadFailed) as err:
        gw.read_object(ObjectRef("example.com/v1", "Widget", "widgets", "w", "team-a"))
    assert err.value.status == 404 and "could not find the requested resource" in str(err.value)


def test_read_object_refused_is_a_failed_read(scenario_dir, tmp_path):
    directory = write_scenarios(tmp_path / "s", {"writes.yaml": SCENARIO.replace(
        "forbidden: [patch namespaces/locked/pods]", "forbidden: [karpenter.sh/nodepools]")})
    with start_sim(scenarios=None, ec2=False, directory=directory) as sim:
        gw = connect(load_settings({"KUBECONFIG": str(sim.kubeconfig)}))
        with pytest.raises(ReadFailed) as err:
            gw.read_object(NODEPOOL)
        assert err.value.status == 403 and err.value.reason == "forbidden"
        assert 'cannot get resource "nodepools"' in err.value.detail


def test_read_object_timeout_is_unreachable(sim):
    gw = connect(load_settings({"KUBECONFIG": str(sim.kubeconfig), "GPUBOT_REQUEST_TIMEOUT": "0.3",
                                "GPUBOT_MAX_RETRIES": "0"}))
    _fault(sim, delay_seconds=1.0, path_contains="/pods/trainer-worker-0")
    with pytest.raises(ClusterUnreachable, match="timeout"):
        gw.read_object(POD)


def test_pods_matching_selects_by_label_and_caps(gw):
    pods = gw.pods_matching("team-a", "training.kubeflow.org/job-name=trainer")
    assert sorted(p["metadata"]["name"] for p in pods) == ["trainer-worker-0", "trainer-worker-1"]
    capped = gw.pods_matching("team-a", "training.kubeflow.org/job-name=trainer", max_items=1)
    assert len(capped) == 1 and capped.more == 1


# -- patches ------------------------------------------------------------------------------------------

def test_merge_patch_annotates_and_returns_the_object(gw, sim):
    before = gw.read_object(POD)
    sim.reset_requests()
    after = gw.patch_object(POD, ANNOTATE, patch_type=MERGE_PATCH)
    assert after["metadata"]["annotations"] == {ANNOTATION: "true"}
    assert int(after["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
    assert gw.read_object(POD)["metadata"]["annotations"] == {ANNOTATION: "true"}
    patches = _patches(sim)
    assert [(p["target"], p["status"], p["contentType"]) for p in patches] == [
        ("/api/v1/namespaces/team-a/pods/trainer-worker-0", 200, MERGE_PATCH)]


@pytest.mark.parametrize("ref", [
    NODE, NODEPOOL, PYTORCHJOB, ObjectRef("batch/v1", "Job", "jobs", "batch", "team-a"),
    ObjectRef("kubeflow.org/v1", "TFJob", "tfjobs", "tf", "team-a"),
    ObjectRef("kubeflow.org/v2beta1", "MPIJob", "mpijobs", "mpi", "team-a"),
    ObjectRef("jobset.x-k8s.io/v1alpha2", "JobSet", "jobsets", "js", "team-a"),
], ids=str)
def test_json_patch_of_each_kind_is_sent_as_json_patch(gw, sim, ref):
    live = gw.read_object(ref)
    change = Change(ref, JSON_PATCH, [{"op": "add", "path": "/metadata/annotations", "value": {ANNOTATION: "true"}}],
                    resource_version=live["metadata"]["resourceVersion"])
    sim.reset_requests()
    after = gw.patch_object(ref, with_precondition(change), patch_type=JSON_PATCH)
    assert after["metadata"]["annotations"] == {ANNOTATION: "true"}
    assert [(p["status"], p["contentType"]) for p in _patches(sim)] == [(200, JSON_PATCH)]


def test_cordon_is_a_merge_patch_on_the_node(gw):
    after = gw.patch_object(NODE, {"spec": {"unschedulable": True}}, patch_type=MERGE_PATCH)
    assert after["spec"] == {"providerID": "aws:///us-west-2a/i-0123456789abcdef0", "unschedulable": True}


def test_failed_test_op_is_422_invalid_and_changes_nothing(gw, sim):
    ops = [{"op": "test", "path": "/metadata/resourceVersion", "value": "1"},
           {"op": "add", "path": "/metadata/annotations", "value": {ANNOTATION: "true"}}]
    sim.reset_requests()
    with pytest.raises(WriteFailed) as err:
        gw.patch_object(POD, ops, patch_type=JSON_PATCH)
    # kube-apiserver's words for any failed JSON patch operation (apiserver handlers/patch.go).
    assert (err.value.status, err.value.reason) == (422, "Invalid")
    assert err.value.message == "the server rejected our request due to an error in our request"
    assert str(err.value) == ("patch Pod team-a/trainer-worker-0: Invalid (422): "
                              "the server rejected our request due to an error in our request")
    assert len(_patches(sim)) == 1  # never retried
    assert "annotations" not in gw.read_object(POD)["metadata"]


def test_stale_resource_version_in_a_merge_patch_is_409_conflict(gw, sim):
    stale = gw.read_object(NODEPOOL)["metadata"]["resourceVersion"]
    gw.patch_object(NODEPOOL, {"metadata": {"labels": {"team": "ml"}}}, patch_type=MERGE_PATCH)  # someone else
    change = Change(NODEPOOL, MERGE_PATCH, {"spec": {"disruption": {"consolidationPolicy": "WhenEmpty"}}},
                    resource_version=stale)
    sim.reset_requests()
    with pytest.raises(WriteFailed) as err:
        gw.patch_object(NODEPOOL, with_precondition(change), patch_type=MERGE_PATCH)
    assert (err.value.status, err.value.reason) == (409, "Conflict")
    assert err.value.message.startswith('Operation cannot be fulfilled on nodepools "gpu": the object has been '
                                        "modified")
    assert len(_patches(sim)) == 1
    assert gw.read_object(NODEPOOL)["spec"]["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"


def test_a_failed_test_op_in_a_json_patch_is_a_generic_422(gw):
    # What an undo patch meets when someone changed the object since gpubot wrote it.
    ops = [{"op": "test", "path": "/metadata/name", "value": "someone-else"},
           {"op": "add", "path": "/metadata/annotations", "value": {}}]
    with pytest.raises(WriteFailed) as err:
        gw.patch_object(POD, ops, patch_type=JSON_PATCH)
    assert err.value.status == 422


def test_with_precondition_guards_a_json_patch_with_a_409(gw):
    stale = gw.read_object(POD)["metadata"]["resourceVersion"]
    gw.patch_object(POD, {"metadata": {"labels": {"x": "y"}}}, patch_type=MERGE_PATCH)
    change = Change(POD, JSON_PATCH, [{"op": "add", "path": "/metadata/annotations", "value": {}}],
                    resource_version=stale)
    with pytest.raises(WriteFailed) as err:
        gw.patch_object(POD, with_precondition(change), patch_type=JSON_PATCH)
    assert (err.value.status, err.value.reason) == (409, "Conflict")


def test_stale_resource_version_replaced_in_a_json_patch_is_409_conflict(gw):
    # The patched object carries the stale version into the store's update, which compares it.
    stale = gw.read_object(POD)["metadata"]["resourceVersion"]
    gw.patch_object(POD, {"metadata": {"labels": {"x": "y"}}}, patch_type=MERGE_PATCH)
    ops = [{"op": "replace", "path": "/metadata/resourceVersion", "value": stale},
           {"op": "add", "path": "/metadata/annotations", "value": {ANNOTATION: "true"}}]
    with pytest.raises(WriteFailed) as err:
        gw.patch_object(POD, ops, patch_type=JSON_PATCH)
    assert (err.value.status, err.value.reason) == (409, "Conflict")


def test_dry_run_answers_the_would_be_object_and_stores_nothing(gw, sim):
    before = gw.read_object(NODEPOOL)
    body = {"spec": {"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m"}}}
    sim.reset_requests()
    dry = gw.patch_object(NODEPOOL, body, patch_type=MERGE_PATCH, dry_run=True)
    assert dry["spec"]["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert gw.read_object(NODEPOOL) == before
    assert [(p["target"], p["contentType"]) for p in _patches(sim)] == [
        ("/apis/karpenter.sh/v1/nodepools/gpu?dryRun=All", MERGE_PATCH)]


@pytest.mark.parametrize("dry_run", [True, False])
def test_schema_invalid_patch_is_422_with_the_schema_message(gw, dry_run):
    body = {"spec": {"disruption": {"consolidationPolicy": "Sometimes"}}}
    with pytest.raises(WriteFailed) as err:
        gw.patch_object(NODEPOOL, body, patch_type=MERGE_PATCH, dry_run=dry_run)
    assert (err.value.status, err.value.reason) == (422, "Invalid")
    assert err.value.message.startswith('NodePool.karpenter.sh "gpu" is invalid: ')
    assert 'Unsupported value: "Sometimes"' in err.value.message
    assert err.value.verb == ("dry-run patch" if dry_run else "patch")
    assert gw.read_object(NODEPOOL)["spec"]["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"


def test_forbidden_patch_is_refused_with_the_rbac_message(gw, sim):
    ref = ObjectRef("v1", "Pod", "pods", "guarded", "locked")
    assert gw.read_object(ref) is not None  # reading is allowed, patching is not
    sim.reset_requests()
    with pytest.raises(WriteFailed) as err:
        gw.patch_object(ref, ANNOTATE, patch_type=MERGE_PATCH)
    assert (err.value.status, err.value.reason) == (403, "Forbidden")
    assert err.value.message == ('pods "guarded" is forbidden: User "system:serviceaccount:gpubot:gpubot" cannot '
                                 'patch resource "pods" in API group "" in the namespace "locked"')
    assert len(_patches(sim)) == 1


def test_missing_object_is_404_not_found(gw, sim):
    ref = ObjectRef("v1", "Pod", "pods", "gone", "team-a")
    with pytest.raises(WriteFailed) as err:
        gw.patch_object(ref, ANNOTATE, patch_type=MERGE_PATCH)
    assert (err.value.status, err.value.reason, err.value.message) == (404, "NotFound", 'pods "gone" not found')
    assert str(err.value) == 'patch Pod team-a/gone: NotFound (404): pods "gone" not found'


def test_a_json_patch_path_is_escaped_as_a_pointer(gw):
    gw.patch_object(POD, [{"op": "add", "path": "/metadata/annotations", "value": {}}], patch_type=JSON_PATCH)
    after = gw.patch_object(POD, [{"op": "add", "path": f"/metadata/annotations/{escape(ANNOTATION)}",
                                   "value": "true"}], patch_type=JSON_PATCH)
    assert after["metadata"]["annotations"] == {ANNOTATION: "true"}


@pytest.mark.parametrize("patch_type, body", [(JSON_PATCH, ANNOTATE), (MERGE_PATCH, []),
                                              ("application/strategic-merge-patch+json", ANNOTATE)])
def test_a_body_that_does_not_fit_its_patch_type_is_a_bug_and_sends_nothing(gw, sim, patch_type, body):
    sim.reset_requests()
    with pytest.raises(ValueError):
        gw.patch_object(POD, body, patch_type=patch_type)
    assert sim.request_log() == []


# -- retries ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("status", [429, 503])
def test_refused_before_acting_is_retried(gw, sim, status):
    _fault(sim, status=status, times=2, path_contains="/pods/trainer-worker-0")
    sim.reset_requests()
    after = gw.patch_object(POD, ANNOTATE, patch_type=MERGE_PATCH)
    assert after["metadata"]["annotations"] == {ANNOTATION: "true"}
    assert [p["status"] for p in _patches(sim)] == [status, status, 200]


@pytest.mark.parametrize("status", [500, 504])
def test_errors_that_may_follow_a_write_are_not_retried(gw, sim, status):
    _fault(sim, status=status, times=1, path_contains="/pods/trainer-worker-0")
    sim.reset_requests()
    with pytest.raises(WriteFailed) as err:
        gw.patch_object(POD, ANNOTATE, patch_type=MERGE_PATCH)
    assert err.value.status == status
    assert len(_patches(sim)) == 1


def test_retries_are_bounded(sim):
    gw = connect(load_settings({"KUBECONFIG": str(sim.kubeconfig), "GPUBOT_RETRY_BACKOFF": "0.01",
                                "GPUBOT_MAX_RETRIES": "1"}))
    _fault(sim, status=503, times=5, path_contains="/pods/trainer-worker-0")
    sim.reset_requests()
    with pytest.raises(WriteFailed) as err:
        gw.patch_object(POD, ANNOTATE, patch_type=MERGE_PATCH)
    assert (err.value.status, err.value.reason) == (503, "ServiceUnavailable")
    assert len(_patches(sim)) == 2


def test_timeout_is_reported_not_retried(sim):
    gw = connect(load_settings({"KUBECONFIG": str(sim.kubeconfig), "GPUBOT_REQUEST_TIMEOUT": "0.3",
                                "GPUBOT_RETRY_BACKOFF": "0.01"}))
    # The delay passes, then the sim applies the patch: the client gave up, the write happened anyway.
    _fault(sim, delay_seconds=0.8, path_contains="/pods/trainer-worker-0")
    sim.reset_requests()
    with pytest.raises(WriteFailed) as err:
        gw.patch_object(POD, ANNOTATE, patch_type=MERGE_PATCH)
    assert (err.value.status, err.value.reason) == (None, "timeout")
    assert "read the object back" in err.value.message
    assert str(err.value).startswith("patch Pod team-a/trainer-worker-0: timeout: no answer within 0.3 s")
    _wait_for(lambda: len(_patches(sim)) == 1)
    assert len(_patches(sim)) == 1
    assert gw.read_object(POD)["metadata"]["annotations"] == {ANNOTATION: "true"}


def _wait_for(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_no_connection_is_retried_then_unreachable(tmp_path):
    from sim.kubeconfig import write_kubeconfig

    with refused_port() as port:
        path = tmp_path / "kubeconfig"
        write_kubeconfig(path, server_url=f"http://127.0.0.1:{port}", context="dead")
        gw = connect(load_settings({"KUBECONFIG": str(path), "GPUBOT_RETRY_BACKOFF": "0.01",
                                    "GPUBOT_MAX_RETRIES": "2"}))
        waits = []
        gw._sleep = waits.append  # count the pauses between attempts: nothing was sent
        with pytest.raises(ClusterUnreachable) as err:
            gw.patch_object(POD, ANNOTATE, patch_type=MERGE_PATCH)
        assert str(err.value) == "cannot reach cluster dead (connection refused)"
        assert waits == [0.01, 0.02]
