"""SelfSubjectReview on the simulator, through the official client: each kubeconfig's token is its
own user, as kube-apiserver answers `kubectl auth whoami`."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from sim.kubeconfig import SIM_USERS

BODY = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


@pytest.fixture(scope="module")
def served():
    from sim.serve import start_sim

    with start_sim(scenarios=["seed-consolidation-disrupts-training"], ec2=False) as sim:
        yield sim


def _review(path) -> dict:
    api = config.new_client_from_config(config_file=str(path))
    try:
        return client.AuthenticationV1Api(api).create_self_subject_review(BODY).to_dict()
    finally:
        api.close()


@pytest.mark.parametrize("user", SIM_USERS, ids=lambda u: u.name)
def test_each_kubeconfig_is_its_own_user(served, user):
    answer = _review(served.kubeconfig_for(user.name))
    info = answer["status"]["user_info"]
    assert info["username"] == user.username
    assert info["groups"] == [*user.groups, "system:authenticated"]


def test_the_kubeconfig_written_before_is_still_the_admin(served):
    assert served.kubeconfig_for("admin") == served.kubeconfig
    assert _review(served.kubeconfig)["status"]["user_info"]["username"] == "gpubot-sim-admin"


def _post(served, *, token: str | None, version: str = "v1", method: str = "POST"):
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    request = urllib.request.Request(f"{served.url}/apis/authentication.k8s.io/{version}/selfsubjectreviews",
                                     data=json.dumps(BODY).encode() if method == "POST" else None,
                                     method=method, headers=headers)
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_unknown_token_is_401_and_no_token_is_anonymous(served):
    status, body = _post(served, token="nobody-was-given-this")
    assert status == 401 and body["reason"] == "Unauthorized"
    status, body = _post(served, token=None)
    assert status == 201
    assert body["status"]["userInfo"] == {"username": "system:anonymous", "groups": ["system:unauthenticated"]}


def test_create_only_and_served_versions(served):
    assert _post(served, token="sim-alice", method="GET")[0] == 405
    assert _post(served, token="sim-alice", version="v1beta1")[0] == 404  # a 1.33 cluster: v1 only
    served.cluster.authentication.versions = ("v1beta1",)
    try:
        status, body = _post(served, token="sim-alice", version="v1beta1")
        assert status == 201 and body["apiVersion"] == "authentication.k8s.io/v1beta1"
        assert _post(served, token="sim-alice")[0] == 404
    finally:
        served.cluster.authentication.versions = ("v1",)


def test_rbac_can_refuse_it(served):
    forbidden = served.cluster.forbidden
    served.cluster.forbid(["create authentication.k8s.io/selfsubjectreviews"])
    try:
        status, body = _post(served, token="sim-alice")
        assert status == 403 and body["reason"] == "Forbidden"
        with pytest.raises(ApiException) as refused:
            _review(served.kubeconfig_for("alice"))
        assert refused.value.status == 403
    finally:
        served.cluster.forbidden = forbidden
