"""Per-scenario API differences: reads refused with 403, and API groups served at one older version."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from sim.cluster import Cluster
from sim.scenarios import ScenarioError, load
from sim.serve import start_sim
from tests.sim.conftest import write_scenarios

FORBIDDEN = """\
name: locked-down
base: karpenter
target: pod/x
namespace: ml
api:
  forbidden: [pods/log, daemonsets, namespaces/kube-system/pods, karpenter.sh/nodeclaims, coordination.k8s.io/leases]
objects:
  - {apiVersion: v1, kind: Pod, metadata: {name: x}, spec: {containers: [{name: c, image: i}]}}
"""

V1BETA1 = """\
name: old-karpenter
base: none
target: pod/x
namespace: ml
api:
  serve: {karpenter.sh: v1beta1, karpenter.k8s.aws: v1beta1}
objects:
  - apiVersion: karpenter.sh/v1beta1
    kind: NodePool
    metadata: {name: gpu}
    spec: {template: {spec: {nodeClassRef: {name: default}, requirements: []}}}
  - apiVersion: karpenter.sh/v1beta1
    kind: NodeClaim
    metadata: {name: gpu-abcde}
    spec: {nodeClassRef: {name: default}, requirements: []}
"""

V1ALPHA5 = """\
name: ancient-karpenter
base: none
target: pod/x
namespace: ml
api:
  serve: {karpenter.sh: v1alpha5, karpenter.k8s.aws: v1alpha1}
objects:
  - apiVersion: karpenter.sh/v1alpha5
    kind: Provisioner
    metadata: {name: default}
    spec: {providerRef: {name: default}, limits: {resources: {cpu: "1000"}}}
  - apiVersion: karpenter.sh/v1alpha5
    kind: Machine
    metadata: {name: default-x7k2p}
    spec: {machineTemplateRef: {name: default}}
  - apiVersion: karpenter.k8s.aws/v1alpha1
    kind: AWSNodeTemplate
    metadata: {name: default}
    spec: {subnetSelector: {karpenter.sh/discovery: training}}
"""


def _raw(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


@pytest.fixture(scope="module")
def locked(tmp_path_factory):
    directory = write_scenarios(tmp_path_factory.mktemp("locked"), {"locked-down.yaml": FORBIDDEN})
    with start_sim(scenarios=None, ec2=False, directory=directory) as handle:
        yield handle


def test_forbidden_pod_log_is_a_403_with_the_apiservers_words(locked):
    api = config.new_client_from_config(config_file=str(locked.kubeconfig))
    core = client.CoreV1Api(api)
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod_log("x", "ml")
    assert err.value.status == 403
    body = json.loads(err.value.body)
    assert body["kind"] == "Status" and body["reason"] == "Forbidden" and body["code"] == 403
    assert body["message"] == ('pods "x" is forbidden: User "system:serviceaccount:gpubot:gpubot" cannot get '
                               'resource "pods/log" in API group "" in the namespace "ml"')
    assert body["details"] == {"name": "x", "kind": "pods"}
    assert core.read_namespaced_pod("x", "ml").metadata.name == "x"  # the pod itself stays readable
    api.close()


@pytest.mark.parametrize("path, message", [
    ("/apis/apps/v1/daemonsets",
     'daemonsets.apps is forbidden: User "system:serviceaccount:gpubot:gpubot" cannot list resource "daemonsets" '
     'in API group "apps" at the cluster scope'),
    ("/api/v1/namespaces/kube-system/pods",
     'pods is forbidden: User "system:serviceaccount:gpubot:gpubot" cannot list resource "pods" '
     'in API group "" in the namespace "kube-system"'),
    ("/apis/karpenter.sh/v1/nodeclaims",
     'nodeclaims.karpenter.sh is forbidden: User "system:serviceaccount:gpubot:gpubot" cannot list resource '
     '"nodeclaims" in API group "karpenter.sh" at the cluster scope'),
    ("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/karpenter-leader-election",
     'leases.coordination.k8s.io "karpenter-leader-election" is forbidden: User "system:serviceaccount:gpubot:gpubot" '
     'cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "kube-system"'),
])
def test_each_forbidden_form(locked, path, message):
    status, body = _raw(locked.url + path)
    assert (status, body["reason"], body["message"]) == (403, "Forbidden", message)


def test_what_is_not_forbidden_still_answers(locked):
    assert _raw(locked.url + "/api/v1/namespaces/ml/pods")[0] == 200
    assert _raw(locked.url + "/apis/karpenter.sh/v1/nodepools")[0] == 200


def test_v1beta1_only_is_served_and_discovered(tmp_path):
    directory = write_scenarios(tmp_path, {"old-karpenter.yaml": V1BETA1})
    with start_sim(scenarios=None, ec2=False, directory=directory) as sim:
        status, pools = _raw(sim.url + "/apis/karpenter.sh/v1beta1/nodepools")
        assert status == 200 and [p["metadata"]["name"] for p in pools["items"]] == ["gpu"]
        assert pools["items"][0]["apiVersion"] == "karpenter.sh/v1beta1"
        assert _raw(sim.url + "/apis/karpenter.sh/v1beta1/nodeclaims/gpu-abcde")[0] == 200
        assert _raw(sim.url + "/apis/karpenter.sh/v1/nodepools")[0] == 404
        assert _raw(sim.url + "/apis/karpenter.sh/v1")[0] == 404
        _, group = _raw(sim.url + "/apis/karpenter.sh")
        assert [v["version"] for v in group["versions"]] == ["v1beta1"]
        assert group["preferredVersion"]["groupVersion"] == "karpenter.sh/v1beta1"
        _, groups = _raw(sim.url + "/apis")
        karpenter = [g for g in groups["groups"] if g["name"] == "karpenter.sh"][0]
        assert [v["version"] for v in karpenter["versions"]] == ["v1beta1"]
        _, resources = _raw(sim.url + "/apis/karpenter.sh/v1beta1")
        assert {r["name"] for r in resources["resources"]} >= {"nodepools", "nodeclaims"}
        _, aws = _raw(sim.url + "/apis/karpenter.k8s.aws")
        assert [v["version"] for v in aws["versions"]] == ["v1beta1"]
        api = config.new_client_from_config(config_file=str(sim.kubeconfig))
        custom = client.CustomObjectsApi(api)
        assert custom.get_cluster_custom_object("karpenter.sh", "v1beta1", "nodepools", "gpu")["spec"]
        with pytest.raises(ApiException) as err:
            custom.get_cluster_custom_object("karpenter.sh", "v1", "nodepools", "gpu")
        assert err.value.status == 404
        api.close()


def test_v1alpha5_serves_provisioners_machines_and_awsnodetemplates(tmp_path):
    directory = write_scenarios(tmp_path, {"ancient-karpenter.yaml": V1ALPHA5})
    with start_sim(scenarios=None, ec2=False, directory=directory) as sim:
        _, provisioners = _raw(sim.url + "/apis/karpenter.sh/v1alpha5/provisioners")
        assert [p["metadata"]["name"] for p in provisioners["items"]] == ["default"]
        _, machines = _raw(sim.url + "/apis/karpenter.sh/v1alpha5/machines")
        assert [m["metadata"]["name"] for m in machines["items"]] == ["default-x7k2p"]
        _, templates = _raw(sim.url + "/apis/karpenter.k8s.aws/v1alpha1/awsnodetemplates")
        assert [t["metadata"]["name"] for t in templates["items"]] == ["default"]
        _, resources = _raw(sim.url + "/apis/karpenter.sh/v1alpha5")
        assert {r["name"] for r in resources["resources"] if "/" not in r["name"]} == {"provisioners", "machines"}
        assert _raw(sim.url + "/apis/karpenter.sh/v1/nodepools")[0] == 404
        assert _raw(sim.url + "/apis/karpenter.sh/v1beta1/nodepools")[0] == 404


@pytest.mark.parametrize("api, expected", [
    ("serve: {karpenter.sh: v2}", "not a version the sim knows"),
    ("forbidden: [a/b/c/d]", "api.forbidden: cannot read"),
])
def test_bad_api_settings_are_refused(tmp_path, api, expected):
    text = f"name: bad\nbase: none\napi: {{{api}}}\n"
    directory = write_scenarios(tmp_path, {"bad.yaml": text})
    with pytest.raises(ScenarioError, match=expected):
        load(Cluster(), None, directory)
