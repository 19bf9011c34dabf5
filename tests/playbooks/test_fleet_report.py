"""The GPU nodes and NodePools reports: GPUs requested per node counted as the scheduler counts a pod's
requests, read with one bounded request per GPU node from the simulated API server, and both reports
ordered for a reader at night (trouble first, then the fullest; NodePools at or near their limit first)."""
from __future__ import annotations

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from bot.render.blocks.fleet import nodepools_blocks, nodes_blocks
from bot.service import DiagnosisService
from bot.settings import load_settings
from playbooks.fleet import GPU, gpu_requests, nodepools_report, nodes_report
from sim.serve import start_sim
from tests.conftest import SIM_ENV

SCENARIO = "seed-gpu-nodepool-near-limit"  # 32 GPUs of a NodePool in use on four p4d nodes


def _container(name: str, gpus: int | None = None, *, limits_only: bool = False, restart: str | None = None) -> dict:
    container: dict = {"name": name, "image": "train"}
    if gpus is not None:
        amounts = {GPU: str(gpus)}
        container["resources"] = {"limits": amounts} if limits_only else {"requests": amounts, "limits": amounts}
    if restart:
        container["restartPolicy"] = restart
    return container


def _pod(node: str | None, containers: list[dict], *, init: list[dict] = (), phase: str = "Running",
         overhead: dict | None = None) -> dict:
    spec: dict = {"containers": containers, "initContainers": list(init)}
    if node:
        spec["nodeName"] = node
    if overhead:
        spec["overhead"] = overhead
    return {"metadata": {"name": "p", "namespace": "ml"}, "spec": spec, "status": {"phase": phase}}


def _node(name: str, *, capacity: int = 8, allocatable: int = 8, ready: bool = True) -> dict:
    return {"metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "gpu"}},
            "status": {"capacity": {GPU: str(capacity)}, "allocatable": {GPU: str(allocatable)},
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                       "reason": "KubeletReady" if ready else "KubeletNotReady"}]}}


def _pool(name: str, used: int, limit: int | None) -> dict:
    spec: dict = {"template": {"spec": {"taints": [{"key": GPU, "effect": "NoSchedule"}]}}}
    if limit is not None:
        spec["limits"] = {GPU: str(limit)}
    return {"metadata": {"name": name}, "spec": spec, "status": {"resources": {GPU: str(used)}}}


# -- a pod's GPUs, as kube-scheduler counts them -----------------------------------------------------

def test_containers_add_up_and_an_init_container_counts_only_when_larger():
    assert gpu_requests(_pod("n", [_container("a", 2), _container("b", 1), _container("log")])) == 3
    assert gpu_requests(_pod("n", [_container("a", 1)], init=[_container("warm", 4)])) == 4
    assert gpu_requests(_pod("n", [_container("a", 4)], init=[_container("warm", 2)])) == 4


def test_sidecars_run_alongside_and_count_for_later_init_containers():
    # PodRequests: restartable init containers add to the total and to every later init step.
    pod = _pod("n", [_container("train", 2)],
               init=[_container("side", 1, restart="Always"), _container("prep", 3)])
    assert gpu_requests(pod) == 4  # max(2 + 1, 1 + 3)


def test_a_limit_alone_is_the_request_and_overhead_counts():
    assert gpu_requests(_pod("n", [_container("a", 2, limits_only=True)])) == 2
    assert gpu_requests(_pod("n", [_container("a", 2)], overhead={GPU: "1"})) == 3


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_terminated_pods_hold_no_gpus(phase):
    assert gpu_requests(_pod("n", [_container("a", 8)], phase=phase)) == 0


# -- order for 3 a.m. -------------------------------------------------------------------------------

def test_nodes_show_trouble_first_then_the_fullest():
    nodes = [_node("idle"), _node("full"), _node("half"), _node("sick", allocatable=7), _node("down", ready=False),
             _node("a-half")]
    pods = [_pod("full", [_container("t", 8)]), _pod("half", [_container("t", 4)]),
            _pod("a-half", [_container("t", 4)]), _pod("idle", [_container("t", 8)], phase="Succeeded"),
            _pod(None, [_container("t", 8)], phase="Pending")]
    report = nodes_report(nodes, cluster="c", pods=pods)
    assert [n.name for n in report.nodes] == ["down", "sick", "full", "a-half", "half", "idle"]
    assert {n.name: n.gpu_allocated for n in report.nodes}["full"] == 8
    assert report.allocated_gpus == 16 and report.nodes[-1].free_gpus == 8


def test_nodepools_at_or_near_their_limit_come_first_then_by_name():
    pools = [_pool("roomy", 4, 64), _pool("unlimited", 90, None), _pool("full", 32, 32), _pool("near", 30, 32),
             _pool("b-near", 60, 64), _pool("over", 40, 32), _pool("zero", 0, 0)]
    report = nodepools_report(pools, cluster="c")
    assert [p.name for p in report.nodepools] == ["over", "full", "zero", "b-near", "near", "roomy", "unlimited"]


def test_the_nodes_table_shows_gpus_in_use():
    nodes = [_node(f"n{i}") for i in range(30)]
    pods = [_pod(f"n{i}", [_container("t", i % 9)]) for i in range(30)]
    report = nodes_report(nodes, cluster="c", pods=pods)
    text = str(nodes_blocks(report))
    assert "GPU used" in text and f"{report.allocated_gpus} of 240 healthy" in text
    assert "and 10 more nodes" in text  # the rows past the table are counted, not dropped
    table = nodes_blocks(report)[2]["text"]["text"].split("\n")
    assert table[3].split()[:2] == [report.nodes[0].name, "gpu"] and report.nodes[0].gpu_allocated == 8
    pools = nodepools_blocks(nodepools_report([_pool(f"p{i}", i, 20) for i in range(20)], cluster="c"))
    assert "p19" in pools[2]["text"]["text"] and "and 8 more NodePools" in str(pools)


# -- over HTTP, against the simulated API server ---------------------------------------------------

@pytest.fixture(scope="module")
def sim():
    with start_sim(scenarios=[SCENARIO]) as handle:
        yield handle


@pytest.fixture
def service(sim, monkeypatch):
    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    service = DiagnosisService(load_settings({"KUBECONFIG": str(sim.kubeconfig), **SIM_ENV}))
    yield service
    service.close()


def _all_pods(sim) -> list[dict]:
    api = k8s.CoreV1Api(k8s_config.new_client_from_config(config_file=str(sim.kubeconfig)))
    try:
        return api.api_client.sanitize_for_serialization(api.list_pod_for_all_namespaces().items)
    finally:
        api.api_client.close()


def test_allocated_gpus_match_the_pods_on_each_node(sim, service):
    report = service.nodes()
    expected: dict[str, int] = {}
    for pod in _all_pods(sim):  # every pod, read whole: the report must agree while reading far less
        node = pod["spec"].get("nodeName")
        if node and pod["status"].get("phase") not in ("Succeeded", "Failed"):
            expected[node] = expected.get(node, 0) + sum(
                int((c.get("resources") or {}).get("requests", {}).get(GPU, 0)) for c in pod["spec"]["containers"])
    assert sum(expected.values()) > 0
    assert {n.name: n.gpu_allocated for n in report.nodes} == {n.name: expected.get(n.name, 0) for n in report.nodes}


def test_the_report_reads_each_gpu_node_once_and_no_other_pods(sim, service):
    service.nodes()  # discovery and connection set-up out of the count
    sim.reset_requests()
    report = service.nodes()
    log = sim.request_log()
    pod_reads = [line for line in log if line.startswith("GET /api/v1/pods?")]
    assert len(pod_reads) == len(report.nodes)
    assert all("spec.nodeName%3D" in line and "status.phase%21%3DSucceeded" in line for line in pod_reads)
    assert len(log) == len(pod_reads) + 3  # the three GPU node selectors
