"""Clusters that differ from the seed cluster, replayed from tests/scenarios through the simulator over
HTTP: Karpenter served only at karpenter.sh/v1beta1, pods/log forbidden by RBAC, the controller in
kube-system with the leader on replica 1. The diagnosis completes, states what it could not read, and
never turns a version it did not read into a NodePool that does not exist."""
from __future__ import annotations

import pytest

from bot.gateway import connect
from bot.service import DiagnosisService
from bot.settings import load_settings
from playbooks.engine import resolve
from playbooks.gather import Limits, gather
from playbooks.model import Target
from sim.serve import start_sim

from tests.conftest import REPO, SIM_ENV

SCENARIO_DIR = REPO / "tests" / "scenarios"


@pytest.fixture
def replay(monkeypatch):
    """Start the simulator on one field scenario; yields (sim handle, scenario info)."""
    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    handles = []

    def start(name: str, *, directory=SCENARIO_DIR):
        ctx = start_sim(scenarios=[name], directory=directory)
        sim = ctx.__enter__()
        handles.append(ctx)
        return sim, next(i for i in sim.scenarios if i.name == name)

    yield start
    for ctx in handles:
        ctx.__exit__(None, None, None)


def _diagnose(sim, info):
    service = DiagnosisService(load_settings({"KUBECONFIG": str(sim.kubeconfig), **SIM_ENV}))
    try:
        return service.diagnose(info.target, namespace=info.namespace)
    finally:
        service.close()


def _facts(sim, info):
    gw = connect(load_settings({"KUBECONFIG": str(sim.kubeconfig), **SIM_ENV}))
    try:
        kind, name = info.target.split("/", 1)
        target, obj = resolve(Target(kind=kind, name=name, namespace=info.namespace), gateway=gw)
        return gather(target, owner=obj if kind in ("job", "pytorchjob") else None, pod=obj if kind == "pod" else None,
                      node=None, nodepool=None, gateway=gw, catalog=None, limits=Limits())
    finally:
        gw.close()


def _words(diagnosis) -> str:
    return " ".join([diagnosis.summary, *(f.title + " " + f.detail for f in diagnosis.findings)]).lower()


def test_cluster_serving_only_v1beta1(replay):
    sim, info = replay("field-v1beta1-cpu-limit-v037")
    diagnosis = _diagnose(sim, info)
    assert diagnosis.findings and diagnosis.findings[0].code == info.first_finding
    assert any(g.startswith("NodePools and NodeClaims read at karpenter.sh/v1beta1 (Karpenter v0.32 to v0.37, "
                            "before v1.0)") for g in diagnosis.gaps), diagnosis.gaps
    assert "does not exist" not in _words(diagnosis)
    assert not any(g.startswith("Not checked: NodePools") for g in diagnosis.gaps)

    facts = _facts(sim, info)
    assert facts.api_versions == {"karpenter.sh": "v1beta1", "karpenter.k8s.aws": "v1beta1"}
    assert "nodepools" not in facts.unread
    pool = facts.nodepools["g5-tts"]
    assert pool["apiVersion"] == "karpenter.sh/v1"
    assert pool["spec"]["template"]["spec"]["nodeClassRef"]["group"] == "karpenter.k8s.aws"
    assert facts.karpenter.version == "0.37.5"


def test_pods_log_forbidden(replay):
    sim, info = replay("field-pods-log-forbidden-gpu-limit-g6e")
    diagnosis = _diagnose(sim, info)
    assert diagnosis.findings and diagnosis.findings[0].code == info.first_finding
    # The pending pod never started (no log of its own to read); the controller's log is refused.
    gap = next(g for g in diagnosis.gaps if g.startswith("Not checked: the Karpenter controller log (forbidden: "))
    # The API's own words, not ours.
    assert 'cannot get resource "pods/log" in API group "" in the namespace "kube-system"' in gap, gap
    assert "does not exist" not in _words(diagnosis)

    facts = _facts(sim, info)
    assert "karpenter log" in facts.unread
    assert facts.karpenter_log is None and facts.karpenter.leader


def test_leader_log_in_kube_system(replay):
    sim, info = replay("field-leader-log-ice-kube-system")
    facts = _facts(sim, info)
    karpenter = facts.karpenter
    assert karpenter.namespace == "kube-system" and karpenter.replicas == 2
    assert karpenter.version == "1.3.2"
    pods = [p["metadata"]["name"] for p in _karpenter_pods(sim)]
    # The leader is replica 1, not the first pod a list returns.
    assert karpenter.leader in pods and karpenter.leader != pods[0]
    assert facts.karpenter_source == f"karpenter log kube-system/{karpenter.leader}"
    assert any("InsufficientInstanceCapacity" in line for line in facts.karpenter_log or [])

    diagnosis = _diagnose(sim, info)
    assert diagnosis.findings[0].code == info.first_finding


V1ALPHA5 = """# Karpenter v0.31: karpenter.sh served only at v1alpha5 (Provisioner, Machine), AWSNodeTemplate at v1alpha1.
name: field-v1alpha5-provisioner
source: https://github.com/aws/karpenter-provider-aws/blob/v0.31.4/pkg/apis/v1alpha1/awsnodetemplate.go
description: Karpenter v0.31 (karpenter.sh/v1alpha5 only), pod pending on Provisioner gpu
base: karpenter
karpenter: {version: 0.31.4, namespace: karpenter}
region: us-west-2
target: pod/old-trainer-0
namespace: legacy-train
expect: {first_finding: karpenter.provisioning}
api:
  serve: {karpenter.sh: v1alpha5, karpenter.k8s.aws: v1alpha1}
objects:
- apiVersion: karpenter.k8s.aws/v1alpha1
  kind: AWSNodeTemplate
  metadata: {name: gpu-template}
  spec:
    subnetSelector: {karpenter.sh/discovery: legacy}
    securityGroupSelector: {karpenter.sh/discovery: legacy}
    amiFamily: AL2
- apiVersion: karpenter.sh/v1alpha5
  kind: Provisioner
  metadata: {name: gpu}
  spec:
    providerRef: {name: gpu-template}
    requirements:
    - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}
    limits:
      resources: {nvidia.com/gpu: "4"}
    ttlSecondsAfterEmpty: 30
- apiVersion: v1
  kind: Pod
  metadata:
    name: old-trainer-0
    namespace: legacy-train
    creationTimestamp: -10m
  spec:
    nodeSelector: {karpenter.sh/provisioner-name: gpu}
    containers:
    - name: main
      image: busybox
      resources:
        limits: {nvidia.com/gpu: "1"}
  status:
    phase: Pending
    conditions:
    - {type: PodScheduled, status: "False", reason: Unschedulable, lastTransitionTime: -9m}
"""


def test_cluster_serving_only_v1alpha5(replay, tmp_path):
    (tmp_path / "field-v1alpha5-provisioner.yaml").write_text(V1ALPHA5)
    sim, info = replay("field-v1alpha5-provisioner", directory=tmp_path)
    facts = _facts(sim, info)
    assert facts.api_versions == {"karpenter.sh": "v1alpha5", "karpenter.k8s.aws": "v1alpha1"}
    assert any(g.startswith("Provisioners and Machines read at karpenter.sh/v1alpha5 (Karpenter before v0.32)")
               for g in facts.gaps), facts.gaps
    pool = facts.nodepools["gpu"]
    assert pool["kind"] == "NodePool" and pool["spec"]["limits"] == {"nvidia.com/gpu": "4"}
    assert pool["spec"]["template"]["metadata"]["labels"]["karpenter.sh/provisioner-name"] == "gpu"
    # The pod selects its Provisioner by name: its AWSNodeTemplate is read as the NodeClass.
    nodeclass = facts.nodeclasses["karpenter.k8s.aws/gpu-template"]
    assert nodeclass["spec"]["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "legacy"}}]
    assert not facts.unread

    diagnosis = _diagnose(sim, info)
    assert "does not exist" not in _words(diagnosis)
    assert "provisioner-name, which no node" not in _words(diagnosis)


def _karpenter_pods(sim) -> list[dict]:
    gw = connect(load_settings({"KUBECONFIG": str(sim.kubeconfig), **SIM_ENV}))
    try:
        return list(gw.karpenter_pods("kube-system"))
    finally:
        gw.close()


def test_pending_pod_volumes_and_peers_are_read_by_name_and_selector(replay):
    sim, info = replay("field-pvc-other-zone-g6e")
    facts = _facts(sim, info)
    pvc_key = next(k for k in facts.volumes if k.startswith(f"pvc/{info.namespace}/"))
    bound = facts.volumes[pvc_key]["spec"]["volumeName"]
    assert facts.volumes[f"pv/{bound}"]["spec"]["nodeAffinity"], "the PV's zone is what the model needs"
    assert facts.daemonsets and all(d["kind"] == "DaemonSet" for d in facts.daemonsets)

    sim, info = replay("field-topology-spread-mindomains-g5")
    facts = _facts(sim, info)
    assert list(facts.peer_pods) == ["search-rerank|app=reranker"]
    assert all(p["metadata"]["labels"]["app"] == "reranker" for p in facts.peer_pods["search-rerank|app=reranker"])
