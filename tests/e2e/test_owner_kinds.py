"""A Kubeflow Trainer v2 TrainJob in the simulated cluster (sim/scenarios/owners/), diagnosed over real
HTTP with `gpubot diagnose --json`: found by its bare name (a TrainJob before the JobSet of the same
name it owns), its pods found through the JobSet's labels, their do-not-disrupt "2h" read as expired
(Karpenter v1.12), and a fix that patches the workload that really owns the pods, with nothing the
cluster injected into the live pods."""
from __future__ import annotations

import json

import pytest

from playbooks.engine import diagnose
from playbooks.model import Target
from tests.conftest import REPO, point_cli_at

SCENARIO_DIR = REPO / "sim" / "scenarios" / "owners"
NAMESPACE = "ml-train"


@pytest.fixture(scope="module")
def owners_sim():
    from sim.serve import start_sim

    with start_sim(directory=SCENARIO_DIR, scenarios=["owner-trainjob-consolidated"]) as sim:
        yield sim


@pytest.fixture
def owners_env(owners_sim, monkeypatch):
    return point_cli_at(owners_sim, monkeypatch)


def test_a_trainjob_by_bare_name_is_diagnosed_as_the_trainjob(owners_env, cli):
    result = cli("diagnose", "llama-ft", "-n", NAMESPACE, "--json")
    assert result.code == 0, result.err
    diagnosis = json.loads(result.out)
    assert diagnosis["target"]["kind"] == "trainjob", diagnosis["target"]
    first = diagnosis["findings"][0]
    assert first["code"] == "karpenter.disruption", [f["code"] for f in diagnosis["findings"]]
    assert 'karpenter.sh/do-not-disrupt: "2h", which ran out' in first["detail"], first["detail"]
    assert "TrainJob ml-train/llama-ft" in first["fix"]["summary"]
    assert "kind: JobSet" in first["fix"]["snippet"] and "kind: PyTorchJob" not in first["fix"]["snippet"]
    # the remediation annotates the JobSet the TrainJob runs on: its pods carry the JobSet's label
    [annotate] = [r for r in first["remediations"] if r["kind"] == "annotate-do-not-disrupt"]
    assert annotate["params"] == {"kind": "jobset", "namespace": NAMESPACE, "name": "llama-ft"}


def test_trainjob_and_jobset_kinds_by_name(owners_env, cli):
    result = cli("diagnose", "trainjob/llama-ft", "-n", NAMESPACE, "--json")
    assert result.code == 0, result.err
    diagnosis = json.loads(result.out)
    assert diagnosis["target"]["kind"] == "trainjob" and diagnosis["findings"][0]["code"] == "karpenter.disruption"
    missing = cli("diagnose", "tfjob/llama-ft", "-n", NAMESPACE)
    assert missing.code == 2 and "tfjob" in missing.err and "\n" not in missing.err.strip(), missing.err


def test_a_pod_of_the_trainjob_gets_a_fix_for_the_trainjob_without_injected_fields(owners_env):
    from bot.gateway.kube import connect
    from bot.settings import load_settings
    from playbooks.analyzers.fixes import owner_patch
    from playbooks.analyzers import register_all
    from playbooks.registry import Registry
    from playbooks.gather import gather

    gateway = connect(load_settings())
    pod = gateway.get_pod(NAMESPACE, "llama-ft-node-0-0")
    facts = gather(Target(kind="pod", name="llama-ft-node-0-0", namespace=NAMESPACE), owner=None, pod=pod, node=None,
                   nodepool=None, gateway=gateway, catalog=None)
    ctx = owner_patch(facts.pods[0], {"tolerations": pod["spec"]["tolerations"], "containers": pod["spec"]["containers"]})
    assert ctx["patch"]["kind"] == "TrainJob" and ctx["patch"]["metadata"]["name"] == "llama-ft"
    [override] = ctx["patch"]["spec"]["podTemplateOverrides"]
    assert override["targetJobs"] == [{"name": "node"}]
    assert "kube-api-access" not in json.dumps(ctx["patch"]) and "tolerationSeconds" not in json.dumps(ctx["patch"])
    registry = Registry()
    register_all(registry)
    explicit = diagnose(Target(kind="trainjob", name="llama-ft", namespace=NAMESPACE), gateway=gateway, catalog=None,
                        registry=registry)
    assert explicit.findings[0].code == "karpenter.disruption"
