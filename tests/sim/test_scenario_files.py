"""The real scenario files (written alongside this package) load together and survive the typed client.

The typed client validates required fields when it deserialises (a Node without
status.nodeInfo.bootID, a Job without spec.template...), so an incomplete object in a scenario would
only fail later, deep inside a diagnosis. With no scenario files yet, these tests check nothing.
"""

import json

import pytest
from kubernetes import client

from sim.cluster import Cluster
from sim.scenarios import list_scenarios, load_into

TYPED_MODELS = {
    ("", "Namespace"): "V1Namespace",
    ("", "Node"): "V1Node",
    ("", "Pod"): "V1Pod",
    ("", "Event"): "CoreV1Event",
    ("", "Service"): "V1Service",
    ("", "ConfigMap"): "V1ConfigMap",
    ("apps", "DaemonSet"): "V1DaemonSet",
    ("apps", "Deployment"): "V1Deployment",
    ("batch", "Job"): "V1Job",
    ("coordination.k8s.io", "Lease"): "V1Lease",
}


class _Body:
    def __init__(self, obj: dict):
        self.data = json.dumps(obj)


@pytest.fixture(scope="module")
def loaded() -> Cluster:
    cluster = Cluster()
    load_into(cluster, None)
    return cluster


def test_every_scenario_is_listed_with_its_contract_fields():
    for info in list_scenarios():
        assert info.target.count("/") == 1, f"{info.name}: target must be kind/name"
        assert info.first_finding, f"{info.name}: expect.first_finding is required"


def test_typed_kinds_deserialise(loaded: Cluster):
    api = client.ApiClient()
    for rt in loaded.resource_types():
        model = TYPED_MODELS.get((rt.group, rt.kind))
        if model is None:
            continue
        for obj in loaded.list(rt).items:
            name = f"{rt.kind} {obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"
            try:
                api.deserialize(_Body(obj), model)
            except ValueError as exc:
                pytest.fail(f"{name} would break the typed kubernetes client: {exc}")
