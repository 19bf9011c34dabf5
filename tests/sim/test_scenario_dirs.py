"""Scenario directories from outside the package, the bases they stand on, and the loader's conveniences."""

from __future__ import annotations

import signal
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from kubernetes import client, config

from sim.cluster import Cluster
from sim.scenarios import ScenarioError, list_scenarios, load
from sim.serve import start_sim
from tests.sim.conftest import write_scenarios

REPO = Path(__file__).resolve().parents[2]

PENDING = """\
name: field-pending
source: https://github.com/kubernetes-sigs/karpenter/issues/1234
description: a pending pod on open-source Karpenter
region: us-east-1
karpenter: {version: "1.3.2", namespace: karpenter, replicas: 3, leader: 2}
target: pod/llama-0
namespace: ml-train
expect: {first_finding: karpenter.nodepool_limit_reached}
objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: llama-0}
    spec: {containers: [{name: trainer, image: trainer}]}
    status: {phase: Pending}
  - apiVersion: events.k8s.io/v1
    kind: Event
    metadata: {name: llama-0.17a1}
    regarding: {apiVersion: v1, kind: Pod, name: llama-0, namespace: ml-train}
    reason: FailedScheduling
    note: 'Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=gpu)'
    type: Warning
    action: Scheduling
    reportingController: karpenter
    reportingInstance: karpenter-6c9f7d9b8-p9s2t
    eventTime: "-40s"
    series: {count: 12, lastObservedTime: "-5s"}
logs:
  - {karpenter: leader, text: "leader line\\n"}
  - {karpenter: follower, text: "follower line\\n"}
"""

AUTO = """\
name: field-auto
source: https://docs.aws.amazon.com/eks/latest/userguide/automode.html
description: an Auto Mode cluster
base: auto-mode
region: us-east-1
target: pod/p
namespace: auto-ns
expect: {first_finding: scheduling.node_selector_mismatch}
objects:
  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}
"""


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _log(core: client.CoreV1Api, pod: str) -> str:
    response = core.read_namespaced_pod_log(pod, "karpenter", container="controller", _preload_content=False)
    return response.data.decode()


def _client(kubeconfig: Path) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(kubeconfig))


def test_karpenter_base_with_options_serves_controllers_lease_and_role_logs(tmp_path):
    directory = write_scenarios(tmp_path / "s", {"field-pending.yaml": PENDING})
    with start_sim(scenarios=None, ec2=False, directory=directory) as sim:
        assert sim.region == "us-east-1"
        assert sim.scenarios[0].source.startswith("https://github.com/")
        api = _client(sim.kubeconfig)
        core, coord = client.CoreV1Api(api), client.CoordinationV1Api(api)
        pods = core.list_namespaced_pod("karpenter", label_selector="app.kubernetes.io/name=karpenter").items
        assert len(pods) == 3
        assert {p.spec.containers[0].image for p in pods} == {"public.ecr.aws/karpenter/controller:1.3.2"}
        lease = coord.read_namespaced_lease("karpenter-leader-election", "karpenter")
        leader = lease.spec.holder_identity.split("_")[0]
        assert leader == sorted(p.metadata.name for p in pods)[2] == "karpenter-6c9f7d9b8-p9s2t"
        assert _log(core, leader) == "leader line\n"
        followers = [p.metadata.name for p in pods if p.metadata.name != leader]
        assert _log(core, followers[0]) == "follower line\n"
        node = core.list_node().items[0]
        assert node.metadata.labels["topology.kubernetes.io/zone"] == "us-east-1a"
        assert node.metadata.labels["eks.amazonaws.com/nodegroup"]
        nodeclass = client.CustomObjectsApi(api).get_cluster_custom_object(
            "karpenter.k8s.aws", "v1", "ec2nodeclasses", "default")
        assert [s["zone"] for s in nodeclass["status"]["subnets"]] == ["us-east-1a", "us-east-1b", "us-east-1c"]
        daemonsets = {d.metadata.name for d in client.AppsV1Api(api).list_namespaced_daemon_set("kube-system").items}
        assert daemonsets == {"nvidia-device-plugin-daemonset", "kube-proxy", "aws-node"}
        api.close()


def test_karpenter_defaults_two_replicas_in_kube_system(tmp_path):
    text = PENDING.replace('karpenter: {version: "1.3.2", namespace: karpenter, replicas: 3, leader: 2}\n', "")
    directory = write_scenarios(tmp_path / "s", {"field-pending.yaml": text})
    cluster = Cluster()
    loaded = load(cluster, None, directory)
    pods = cluster.resolve(group="", version="v1", plural="pods")
    controllers = [p["metadata"]["name"] for p in cluster.list(pods, namespace="kube-system").items
                   if p["metadata"]["labels"].get("app.kubernetes.io/name") == "karpenter"]
    assert len(controllers) == 2 and loaded.base == "karpenter"
    leases = cluster.resolve(group="coordination.k8s.io", version="v1", plural="leases")
    lease = cluster.get(leases, namespace="kube-system", name="karpenter-leader-election")
    assert lease["spec"]["holderIdentity"].startswith(controllers[0] + "_")


def test_karpenter_env_reaches_the_controller_pods_and_deployment(tmp_path):
    text = PENDING.replace('karpenter: {version: "1.3.2", namespace: karpenter, replicas: 3, leader: 2}',
                           'karpenter: {version: "1.7.1", env: {MIN_VALUES_POLICY: BestEffort}}')
    directory = write_scenarios(tmp_path / "s", {"field-pending.yaml": text})
    cluster = Cluster()
    load(cluster, None, directory)
    pods = cluster.resolve(group="", version="v1", plural="pods")
    controllers = [p for p in cluster.list(pods, namespace="kube-system").items
                   if p["metadata"]["labels"].get("app.kubernetes.io/name") == "karpenter"]
    deployments = cluster.resolve(group="apps", version="v1", plural="deployments")
    deployment = cluster.get(deployments, namespace="kube-system", name="karpenter")
    for spec in [p["spec"] for p in controllers] + [deployment["spec"]["template"]["spec"]]:
        env = {e["name"]: e["value"] for e in spec["containers"][0]["env"]}
        assert env["MIN_VALUES_POLICY"] == "BestEffort" and env["CLUSTER_NAME"] == "training-on-eks"
    with pytest.raises(ScenarioError, match="karpenter.env must map"):
        bad = PENDING.replace('karpenter: {version: "1.3.2", namespace: karpenter, replicas: 3, leader: 2}',
                              'karpenter: {env: [MIN_VALUES_POLICY]}')
        load(Cluster(), None, write_scenarios(tmp_path / "bad", {"field-pending.yaml": bad}))


def test_auto_mode_base_has_builtin_nodepools_and_no_controller(tmp_path):
    directory = write_scenarios(tmp_path / "s", {"field-auto.yaml": AUTO})
    with start_sim(scenarios=["field-auto"], ec2=False, directory=directory) as sim:
        api = _client(sim.kubeconfig)
        custom = client.CustomObjectsApi(api)
        pools = custom.list_cluster_custom_object("karpenter.sh", "v1", "nodepools")["items"]
        assert sorted(p["metadata"]["name"] for p in pools) == ["general-purpose", "system"]
        nodes = client.CoreV1Api(api).list_node().items
        assert [n.metadata.labels["eks.amazonaws.com/compute-type"] for n in nodes] == ["auto"]
        all_pods = client.CoreV1Api(api).list_pod_for_all_namespaces().items
        assert [p.metadata.name for p in all_pods] == ["p"]
        assert client.CoreV1Api(api).read_namespace("auto-ns").status.phase == "Active"
        api.close()


def test_scenarios_on_different_bases_are_refused_in_one_line(tmp_path):
    directory = write_scenarios(tmp_path / "s", {"field-pending.yaml": PENDING, "field-auto.yaml": AUTO})
    with pytest.raises(ScenarioError) as err:
        load(Cluster(), None, directory)
    message = str(err.value)
    assert "\n" not in message
    assert "field-auto" in message and "field-pending" in message and "--scenario" in message
    load(Cluster(), ["field-auto"], directory)  # each alone loads


def test_loader_fills_metadata_resolves_relative_times_and_creates_the_namespace(tmp_path):
    directory = write_scenarios(tmp_path / "s", {"field-pending.yaml": PENDING})
    now = datetime.now(timezone.utc)
    cluster = Cluster()
    load(cluster, None, directory, now=now)
    events = cluster.resolve(group="events.k8s.io", version="v1", plural="events")
    event = cluster.get(events, namespace="ml-train", name="llama-0.17a1")
    assert abs(_parse(event["eventTime"]) - (now - timedelta(seconds=40))) < timedelta(seconds=1)
    assert abs(_parse(event["series"]["lastObservedTime"]) - (now - timedelta(seconds=5))) < timedelta(seconds=1)
    pod = cluster.get(cluster.resolve(group="", version="v1", plural="pods"), namespace="ml-train", name="llama-0")
    assert pod["metadata"]["uid"] and pod["metadata"]["resourceVersion"] and pod["metadata"]["creationTimestamp"]
    namespaces = cluster.resolve(group="", version="v1", plural="namespaces")
    assert cluster.get(namespaces, namespace=None, name="ml-train")["status"]["phase"] == "Active"
    assert cluster.get(namespaces, namespace=None, name="karpenter")


def test_list_names_source_base_and_region(tmp_path):
    directory = write_scenarios(tmp_path / "s", {"field-pending.yaml": PENDING, "field-auto.yaml": AUTO})
    infos = {i.name: i for i in list_scenarios(directory)}
    assert (infos["field-auto"].base, infos["field-auto"].region) == ("auto-mode", "us-east-1")
    assert infos["field-pending"].base == "karpenter"
    assert infos["field-pending"].source == "https://github.com/kubernetes-sigs/karpenter/issues/1234"


@pytest.mark.parametrize("text, expected", [
    ("name: bad\nbase: fargate\n", "base 'fargate' is not one of"),
    ("name: bad\nbase: auto-mode\nkarpenter: {replicas: 2}\n", "karpenter settings need base: karpenter"),
    ("name: bad\nkarpenter: {replicas: 2, leader: 2}\n", "karpenter.leader must index"),
    ("name: bad\ntarget: pod/x\nobject: []\n", "unknown key(s) object"),
    ("name: bad\nlogs: [{karpenter: boss, text: x}]\n", "must be leader or follower"),
])
def test_malformed_scenarios_name_the_fix(tmp_path, text, expected):
    directory = write_scenarios(tmp_path / "s", {"bad.yaml": text})
    with pytest.raises(ScenarioError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        load(Cluster(), None, directory)


def test_seed_directory_still_loads_on_its_own_base():
    cluster = Cluster()
    loaded = load(cluster, ["seed-memory-pressure"])
    assert (loaded.base, loaded.region) == ("_base", "ap-northeast-2")
    pods = cluster.resolve(group="", version="v1", plural="pods")
    assert cluster.get(pods, namespace="karpenter", name="karpenter-7d4f9c8b6-x2x9k")


def test_cli_serves_a_scenario_directory_through_its_kubeconfig(tmp_path):
    directory = write_scenarios(tmp_path / "s", {"field-pending.yaml": PENDING})
    kubeconfig = tmp_path / "out" / "kubeconfig"
    listed = subprocess.run([str(REPO / ".venv/bin/gpubot"), "sim", "list", "--scenario-dir", str(directory)],
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and "field-pending" in listed.stdout, listed.stderr
    proc = subprocess.Popen(
        [str(REPO / ".venv/bin/gpubot"), "sim", "serve", "--no-ec2", "--scenario-dir", str(directory),
         "--kubeconfig-out", str(kubeconfig)],
        stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 60
        while not kubeconfig.exists():
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "no kubeconfig"
            time.sleep(0.05)
        api = _client(kubeconfig)
        pod = client.CoreV1Api(api).read_namespaced_pod("llama-0", "ml-train")
        assert pod.status.phase == "Pending"
        api.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
