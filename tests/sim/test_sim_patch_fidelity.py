"""What kube-apiserver does on the patches remediations send: verb-scoped RBAC refusals, the CRD
schema checked on every write (dry run or not), a failed JSON patch in apimachinery's words, the
Content-Type of each request on record, and job kinds served namespaced when a scenario holds one."""

import json
import urllib.error
import urllib.request

import pytest

from sim.access import parse_rule
from sim.serve import start_sim
from tests.sim.conftest import write_scenarios

SCENARIO = """\
name: patches
base: none
target: pod/x
namespace: ml
api:
  forbidden: ["patch,update namespaces/ml/pods", "patch karpenter.sh/nodepools"]
objects:
  - {apiVersion: v1, kind: Pod, metadata: {name: x}, spec: {containers: [{name: c, image: i}]}}
  - {apiVersion: v1, kind: Pod, metadata: {name: y, namespace: other}, spec: {containers: [{name: c, image: i}]}}
  - apiVersion: kubeflow.org/v1
    kind: TFJob
    metadata: {name: tf}
    spec: {tfReplicaSpecs: {Worker: {replicas: 1}}}
  - apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata: {name: js}
    spec: {replicatedJobs: []}
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: gpu}
    spec:
      disruption: {consolidateAfter: 0s, consolidationPolicy: WhenEmptyOrUnderutilized}
      template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}, requirements: []}}
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: broken}
    spec:
      disruption: {consolidateAfter: 0s, consolidationPolicy: Never}
      template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}, requirements: []}}
"""
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


@pytest.fixture
def sim(tmp_path):
    directory = write_scenarios(tmp_path / "s", {"patches.yaml": SCENARIO})
    with start_sim(scenarios=None, ec2=False, directory=directory) as handle:
        yield handle


@pytest.fixture
def open_sim(tmp_path):
    directory = write_scenarios(tmp_path / "o", {"patches.yaml": SCENARIO.replace(
        'forbidden: ["patch,update namespaces/ml/pods", "patch karpenter.sh/nodepools"]', "forbidden: []")})
    with start_sim(scenarios=None, ec2=False, directory=directory) as handle:
        yield handle


def _request(sim, method, path, body=None, content_type=MERGE):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{sim.url}{path}", data=data, method=method,
                                     headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


ANNOTATE = {"metadata": {"annotations": {"karpenter.sh/do-not-disrupt": "true"}}}


def test_a_verb_scoped_rule_refuses_that_verb_only(sim):
    assert _request(sim, "GET", "/api/v1/namespaces/ml/pods/x")[0] == 200
    status, body = _request(sim, "PATCH", "/api/v1/namespaces/ml/pods/x", ANNOTATE)
    assert (status, body["reason"]) == (403, "Forbidden")
    assert body["message"] == ('pods "x" is forbidden: User "system:serviceaccount:gpubot:gpubot" cannot patch '
                               'resource "pods" in API group "" in the namespace "ml"')
    assert _request(sim, "PATCH", "/api/v1/namespaces/other/pods/y", ANNOTATE)[0] == 200
    status, body = _request(sim, "PATCH", "/apis/karpenter.sh/v1/nodepools/gpu", ANNOTATE)
    assert status == 403 and 'cannot patch resource "nodepools" in API group "karpenter.sh" at the cluster scope' \
        in body["message"]
    assert _request(sim, "GET", "/apis/karpenter.sh/v1/nodepools/gpu")[0] == 200


@pytest.mark.parametrize("text, verbs", [("patch pods", {"patch"}), ("patch,update karpenter.sh/nodepools",
                                                                     {"patch", "update"}), ("pods/log", None)])
def test_rule_verbs(text, verbs):
    assert parse_rule(text).verbs == (frozenset(verbs) if verbs else None)


@pytest.mark.parametrize("text", ["poke pods", "patch pods extra", ", pods"])
def test_a_rule_with_unknown_verbs_says_what_to_write(text):
    with pytest.raises(ValueError, match="patch pods"):
        parse_rule(text)


@pytest.mark.parametrize("query", ["", "?dryRun=All"])
def test_a_schema_invalid_patch_is_422_dry_run_or_not(open_sim, query):
    body = {"spec": {"disruption": {"consolidationPolicy": "Sometimes"}}}
    status, answer = _request(open_sim, "PATCH", f"/apis/karpenter.sh/v1/nodepools/gpu{query}", body)
    assert (status, answer["reason"]) == (422, "Invalid")
    assert answer["message"].startswith('NodePool.karpenter.sh "gpu" is invalid: spec.disruption.consolidationPolicy: '
                                        'Unsupported value: "Sometimes"')
    stored = _request(open_sim, "GET", "/apis/karpenter.sh/v1/nodepools/gpu")[1]
    assert stored["spec"]["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"


def test_an_already_invalid_object_can_still_be_patched_elsewhere(open_sim):
    # CRD validation ratcheting (KEP-4008): only what the update makes invalid is refused.
    status, answer = _request(open_sim, "PATCH", "/apis/karpenter.sh/v1/nodepools/broken", ANNOTATE)
    assert status == 200 and answer["metadata"]["annotations"] == ANNOTATE["metadata"]["annotations"]


@pytest.mark.parametrize("ops", [
    [{"op": "test", "path": "/metadata/name", "value": "not-x"}],
    [{"op": "remove", "path": "/metadata/annotations/absent"}],
])
def test_a_failed_json_patch_is_apimachinerys_generic_422(open_sim, ops):
    status, body = _request(open_sim, "PATCH", "/api/v1/namespaces/ml/pods/x", ops, JSON_PATCH)
    assert (status, body["reason"], body["message"], body["details"]) == (
        422, "Invalid", "the server rejected our request due to an error in our request", {})


def test_each_request_has_its_content_type_on_record(open_sim):
    open_sim.reset_requests()
    _request(open_sim, "PATCH", "/api/v1/namespaces/ml/pods/x", ANNOTATE, MERGE)
    _request(open_sim, "PATCH", "/api/v1/namespaces/ml/pods/x?dryRun=All",
             [{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}], JSON_PATCH)
    assert open_sim.request_details() == [
        {"method": "PATCH", "target": "/api/v1/namespaces/ml/pods/x", "status": 200, "contentType": MERGE},
        {"method": "PATCH", "target": "/api/v1/namespaces/ml/pods/x?dryRun=All", "status": 200,
         "contentType": JSON_PATCH},
    ]
    with urllib.request.urlopen(f"{open_sim.url}/sim/requests/details", timeout=10) as response:
        assert json.load(response)["requests"] == open_sim.request_details()
    assert open_sim.request_log() == ["PATCH /api/v1/namespaces/ml/pods/x 200",
                                      "PATCH /api/v1/namespaces/ml/pods/x?dryRun=All 200"]


@pytest.mark.parametrize("path", ["/apis/kubeflow.org/v1/namespaces/ml/tfjobs/tf",
                                  "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/js"])
def test_job_kinds_written_without_a_namespace_are_namespaced(open_sim, path):
    status, body = _request(open_sim, "GET", path)
    assert (status, body["metadata"]["namespace"]) == (200, "ml")
    assert _request(open_sim, "PATCH", path, ANNOTATE)[0] == 200
