"""Reads that fail do not abort a diagnosis: against the simulated API server over HTTP, a 403 (or a
404 for an API that is not served) on one read becomes a gap quoting the API, and the rest runs."""
from __future__ import annotations

import json
import urllib.request

import pytest

from bot.gateway import connect
from bot.gateway.kube import ReadRefused
from bot.settings import load_settings
from playbooks.engine import analyze, resolve
from playbooks.gather import Limits, gather
from playbooks.model import Target
from playbooks.registry import default_registry
from sim.serve import start_sim

from tests.conftest import SIM_ENV

OOM = ("pytorchjob/bert-large-finetune", "nlp-train")  # seed-cuda-oom-a100-40gb: reads pod logs
PENDING = ("pytorchjob/llama3-70b-pretrain", "ml-research")
INJECTED = "injected fault: the simulated API server answered 403"


@pytest.fixture(scope="module")
def sim():
    with start_sim(scenarios=None) as handle:
        yield handle


@pytest.fixture
def gw(sim, monkeypatch):
    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    gateway = connect(load_settings({"KUBECONFIG": str(sim.kubeconfig), "GPUBOT_RETRY_BACKOFF": "0.01"}))
    yield gateway
    gateway.close()
    _post(sim, "DELETE", "/sim/faults")


def _post(sim, method: str, path: str, body: object = None, content_type: str = "application/json") -> dict:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"{sim.url}{path}", data=data, method=method, headers={"Content-Type": content_type})
    return json.loads(urllib.request.urlopen(req).read() or b"{}")


def _forbid(sim, path_contains: str) -> None:
    _post(sim, "POST", "/sim/faults", {"status": 403, "path_contains": path_contains, "times": 1000})


def _scenario(sim, name: str):
    return next(i for i in sim.scenarios if i.name == name)


def _facts(gw, target_text: str, namespace: str):
    kind, name = target_text.split("/", 1)
    target, obj = resolve(Target(kind=kind, name=name, namespace=namespace), gateway=gw)
    return gather(target, owner=obj if kind in ("pytorchjob", "job") else None, pod=obj if kind == "pod" else None,
                  node=None, nodepool=None, gateway=gw, catalog=None, limits=Limits())


def test_forbidden_pod_logs_leave_a_gap_and_the_rest_runs(sim, gw):
    info = _scenario(sim, "seed-cuda-oom-a100-40gb")
    _forbid(sim, "/log")
    facts = _facts(gw, info.target, info.namespace)
    assert "pod logs" in facts.unread
    assert f"Not checked: pod logs (forbidden: {INJECTED})." in facts.gaps
    assert facts.pods and all(not p.logs for p in facts.pods)
    assert facts.pods[0].events, "events are still read"
    # The Karpenter controller log is a pod log too: refused with the same answer.
    assert facts.karpenter_log is None
    diagnosis = analyze(facts, registry=default_registry())
    assert diagnosis.findings


def test_forbidden_reads_each_give_their_own_gap(sim, gw):
    info = _scenario(sim, "seed-nodepool-excludes-instance-type")
    for path in ("/events", "/daemonsets", "/nodepools"):
        _forbid(sim, path)
    facts = _facts(gw, info.target, info.namespace)
    assert {"events", "daemonsets", "nodepools"} <= facts.unread
    for label in ("events", "DaemonSets", "NodePools"):
        assert f"Not checked: {label} (forbidden: {INJECTED})." in facts.gaps
    assert facts.nodepools == {} and facts.daemonsets == [] and facts.pods
    diagnosis = analyze(facts, registry=default_registry())
    text = " ".join([diagnosis.summary, *(f.title for f in diagnosis.findings)]).lower()
    assert "does not exist" not in text and "not found" not in text


def test_a_refused_read_is_tried_once_not_per_object(sim, gw):
    info = _scenario(sim, "seed-nccl-efa-handshake")
    _forbid(sim, "/log")
    sim.reset_requests()
    _facts(gw, info.target, info.namespace)
    log_reads = [line for line in sim.request_log() if "/log" in line.split()[1]]
    job_logs = [line for line in log_reads if f"/namespaces/{info.namespace}/" in line]
    assert len(job_logs) == 1, log_reads


def test_leader_lease_names_the_pod_whose_log_is_read(sim, gw):
    info = _scenario(sim, "seed-nodepool-excludes-instance-type")
    facts = _facts(gw, info.target, info.namespace)
    karpenter = facts.karpenter
    assert karpenter.namespace == "karpenter"
    assert karpenter.leader == "karpenter-7d4f9c8b6-x2x9k"
    assert karpenter.version == "1.5.0" and karpenter.replicas == 1
    assert facts.karpenter_source == "karpenter log karpenter/karpenter-7d4f9c8b6-x2x9k"
    assert facts.karpenter_log, "the leader's controller log was read"


def test_unreadable_lease_falls_back_to_a_running_replica(sim, gw):
    info = _scenario(sim, "seed-nodepool-excludes-instance-type")
    _forbid(sim, "/leases/")
    facts = _facts(gw, info.target, info.namespace)
    assert "karpenter lease" in facts.unread
    assert any(g.startswith("Not checked: the Karpenter leader-election Lease (forbidden:") for g in facts.gaps)
    assert facts.karpenter.leader is None
    assert facts.karpenter_source == "karpenter log karpenter/karpenter-7d4f9c8b6-x2x9k"


def test_karpenter_namespace_setting_is_the_only_place_looked(sim, monkeypatch):
    gateway = connect(load_settings({"KUBECONFIG": str(sim.kubeconfig), "GPUBOT_KARPENTER_NAMESPACE": "elsewhere"}))
    try:
        info = _scenario(sim, "seed-nodepool-excludes-instance-type")
        facts = _facts(gateway, info.target, info.namespace)
    finally:
        gateway.close()
    assert facts.karpenter.namespace is None and facts.karpenter_log is None
    assert any("no pod labelled app.kubernetes.io/name=karpenter in elsewhere" in g for g in facts.gaps)


def test_forbidden_target_is_one_line_not_a_traceback(sim, gw, cli, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(sim.kubeconfig))
    info = _scenario(sim, "seed-cuda-oom-a100-40gb")
    kind, name = info.target.split("/", 1)
    _forbid(sim, f"/{kind}s/{name}")
    result = cli("diagnose", info.target, "-n", info.namespace)
    assert result.code == 3
    assert "Traceback" not in result.err
    line = result.err.strip()
    assert "\n" not in line
    what = {"pod": "pod", "job": "job", "pytorchjob": "PyTorchJob"}[kind]
    assert f"did not let gpubot read {what} {info.namespace}/{name} (403 forbidden: {INJECTED})" in line
    assert "RBAC" in line


def test_refusal_carries_the_read_and_the_api_message(sim, gw):
    _forbid(sim, "/nodepools")
    with pytest.raises(ReadRefused) as err:
        gw.list_nodepools()
    assert err.value.read == "nodepools" and err.value.status == 403
    assert err.value.reason == "forbidden" and err.value.detail == INJECTED


def _pod(name: str, phase: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "big-job", "labels": {"job-name": "sweep"}},
            "spec": {"containers": [{"name": "main", "image": "busybox"}]},
            "status": {"phase": phase}}


def test_truncated_job_pods_are_reported_and_troubled_pods_come_first(sim, gw):
    _post(sim, "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "big-job"}})
    # Names sort the pending and failed pods last: a plain capped list would never reach them.
    for name, phase in [("sweep-a", "Running"), ("sweep-b", "Running"), ("sweep-c", "Running"),
                        ("sweep-d", "Succeeded"), ("sweep-y", "Failed"), ("sweep-z", "Pending")]:
        _post(sim, "POST", "/api/v1/namespaces/big-job/pods", _pod(name, phase))
    everything = gw.job_pods("big-job", "sweep", max_items=10)
    assert len(everything) == 6 and everything.more == 0
    capped = gw.job_pods("big-job", "sweep", max_items=3)
    assert [p["metadata"]["name"] for p in capped] == ["sweep-y", "sweep-z", "sweep-a"]
    # A list with a label selector carries no remainingItemCount: a continue token says "at least one more".
    assert capped.more >= 1

    job = {"metadata": {"name": "sweep", "namespace": "big-job"}, "spec": {}}
    facts = gather(Target(kind="job", name="sweep", namespace="big-job"), owner=job, pod=None, node=None,
                   nodepool=None, gateway=gw, catalog=None, limits=Limits(max_pods=1))
    assert "Pods of job sweep: read 4 of at least 5; the pods not running were read first." in facts.gaps
    assert [p.name for p in facts.pods] == ["sweep-y"]


def test_cluster_without_karpenter_crds(monkeypatch, cli):
    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    with start_sim(scenarios=["seed-nodepool-excludes-instance-type"]) as bare:
        # Serve the Karpenter groups at no version: discovery lists neither, and their paths answer 404.
        bare.cluster.serve_only(group="karpenter.sh", version="none")
        bare.cluster.serve_only(group="karpenter.k8s.aws", version="none")
        gateway = connect(load_settings({"KUBECONFIG": str(bare.kubeconfig)}))
        try:
            info = _scenario(bare, "seed-nodepool-excludes-instance-type")
            facts = _facts(gateway, info.target, info.namespace)
        finally:
            gateway.close()
        assert facts.api_versions == {}
        assert {"nodepools", "nodeclaims"} <= facts.unread
        assert ("Karpenter CRDs are not installed: NodePools were not checked (the cluster serves no karpenter.sh "
                "API).") in facts.gaps
        diagnosis = analyze(facts, registry=default_registry())
        text = " ".join([diagnosis.summary, *(f.title + " " + f.detail for f in diagnosis.findings)]).lower()
        assert "does not exist" not in text

        monkeypatch.setenv("KUBECONFIG", str(bare.kubeconfig))
        result = cli("diagnose", "nodepool/gpu")
        assert result.code == 3 and "Traceback" not in result.err
        assert "could not answer a read of nodepools (404 not installed: the cluster serves no karpenter.sh API)" \
            in result.err


def test_an_unreachable_reason_never_carries_the_api_server_address():
    """The reason reaches chat; the EKS endpoint is kubeconfig contents and stays in the log."""
    import urllib3

    from bot.gateway.kube import _reason

    endpoint = "https://0A1B2C3D4E5F.gr7.us-west-2.eks.amazonaws.com"
    for exc in (urllib3.exceptions.MaxRetryError(None, f"{endpoint}/api/v1/pods", "CERTIFICATE_VERIFY_FAILED"),
                OSError("HTTPSConnectionPool(host='0A1B2C3D4E5F.gr7.us-west-2.eks.amazonaws.com', port=443): "
                        "Max retries exceeded")):
        reason = _reason(exc, 10)
        assert "0A1B2C3D4E5F" not in reason and "<api server>" in reason
