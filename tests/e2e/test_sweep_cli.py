"""`gpubot sweep --once` against the simulated cluster over HTTP: the seed incidents, the sweep
scenarios (sim/scenarios/sweep: a sick fleet, a healthy one, one with reads refused), and bad input."""
from __future__ import annotations

import json

import pytest

from sim.serve import start_sim
from tests.conftest import REPO, SIM_ENV, run_cli
from tests.fakes.ports import refused_port

SWEEP_SCENARIOS = REPO / "sim" / "scenarios" / "sweep"


def _sweep(monkeypatch, kubeconfig, *args):
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EC2", "GPUBOT_CONTEXT",
                "AWS_PROFILE", "GPUBOT_SWEEP_PENDING_AFTER"):
        monkeypatch.delenv(key, raising=False)
    return run_cli("sweep", *args)


def _by_target(output: dict) -> dict[tuple[str, str], dict]:
    out = {}
    for p in output["problems"]:
        t = p["target"]
        out[(p["code"], "/".join(x for x in (t["kind"], t["namespace"], t["name"]) if x))] = p
    return out


@pytest.fixture(scope="module")
def seed_sweep(seed_sim):
    with pytest.MonkeyPatch.context() as mp:
        result = _sweep(mp, seed_sim.kubeconfig, "--once", "--json")
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_seed_cluster_problems(seed_sweep):
    found = _by_target(seed_sweep)
    for key in [
        ("gpu.unhealthy_device", "node/ip-10-0-5-89.ap-northeast-2.compute.internal"),  # seed-unhealthy-gpu
        ("node.not_ready", "node/ip-10-0-3-201.ap-northeast-2.compute.internal"),  # CNI never up while joining
        ("karpenter.nodepool_limit_reached", "nodepool/gpu-training-32"),  # seed-gpu-nodepool-near-limit
        ("karpenter.node_registration_failed", "nodepool/gpu"),  # NodeClaim gpu-7xk2p: NodeNotFound
        ("karpenter.disruption", "pytorchjob/llm-consolidation/llama-3-8b-fsdp"),  # seed-consolidation-disrupts-training
        ("karpenter.no_instance_type", "pod/llm-sizing/llama-3-8b-16gpu"),  # seed-gpu-request-exceeds-instance
        ("karpenter.offering_unavailable_in_zone", "pod/llm-zonal/llama-3-8b-zonal"),  # seed-zone-without-offering
    ]:
        assert key in found, (key, sorted(found))
    # pools that consolidate only when empty (gpu) or protect their pods (gpu-training-32) expose nothing
    assert not [k for k in found if k[0] == "karpenter.disruption" and k[1].startswith(("job/llm-oom", "job/llm-pull"))]
    for problem in seed_sweep["problems"]:
        assert set(problem) == {"fingerprint", "code", "severity", "target", "title"}
        assert len(problem["fingerprint"]) == 32 and problem["severity"] in ("critical", "error", "warning")
    assert len({p["fingerprint"] for p in seed_sweep["problems"]}) == len(seed_sweep["problems"])


def test_seed_cluster_diagnoses_are_bounded(seed_sweep):
    # nine pending GPU jobs or pods, eight diagnosed a sweep (oldest first); the youngest is named
    assert seed_sweep["diagnosed"] == 8
    [left] = [g for g in seed_sweep["not_checked"] if "not diagnosed this sweep" in g]
    assert "pytorchjob/t5-fsdp/pytorch-dist-job" in left


@pytest.fixture(scope="module")
def sick():
    with start_sim(scenarios=["sweep-sick-gpu-fleet"], directory=SWEEP_SCENARIOS) as sim:
        yield sim


def test_sick_fleet_json(sick, monkeypatch):
    result = _sweep(monkeypatch, sick.kubeconfig, "--once", "--json")
    assert result.code == 0, result.err
    output = json.loads(result.out)
    assert sorted(_by_target(output)) == [
        ("gpu.unhealthy_device", "node/ip-10-20-1-11.ec2.internal"),
        ("gpu.xid_error", "node/ip-10-20-1-11.ec2.internal"),
        ("gpu.xid_error", "node/ip-10-20-2-31.ec2.internal"),
        ("karpenter.disruption", "pytorchjob/sft/llama-70b-sft"),
        ("karpenter.insufficient_capacity", "nodepool/h100-train"),
        ("karpenter.nodepool_limit_reached", "nodepool/g6e-batch"),
        ("karpenter.nodepool_limit_reached", "pod/bench/vllm-bench-0"),
    ]
    assert output["not_checked"] == [] and output["diagnosed"] == 1
    severities = [p["severity"] for p in output["problems"]]
    assert severities == sorted(severities, key=("critical", "error", "warning", "info").index)


def test_sick_fleet_text(sick, monkeypatch):
    result = _sweep(monkeypatch, sick.kubeconfig, "--once")
    assert result.code == 0, result.err
    out = result.out
    assert out.startswith("cluster gpubot-sim: 7 problems")
    assert "CRITICAL gpu.xid_error  node/ip-10-20-1-11.ec2.internal" in out
    assert "NvidiaXID79Error" in out
    assert "offers: annotate-do-not-disrupt pytorchjob/sft/llama-70b-sft" in out
    assert "offers: nodepool-consolidation nodepool/h100-train" in out
    assert "report-builder" not in out and "vllm-smoke" not in out and "ip-10-20-9-40" not in out


def test_pending_threshold_comes_from_settings(sick, monkeypatch):
    monkeypatch.setenv("GPUBOT_SWEEP_PENDING_AFTER", "3600")
    monkeypatch.setenv("KUBECONFIG", str(sick.kubeconfig))
    result = run_cli("sweep", "--once", "--json")
    output = json.loads(result.out)
    assert output["diagnosed"] == 0
    assert not [p for p in output["problems"] if p["target"]["kind"] == "pod"]


def test_healthy_fleet_has_no_problems(monkeypatch):
    with start_sim(scenarios=["sweep-healthy-gpu-fleet"], directory=SWEEP_SCENARIOS) as sim:
        result = _sweep(monkeypatch, sim.kubeconfig, "--once", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["problems"] == [] and json.loads(result.out)["not_checked"] == []


def test_refused_reads_are_named_and_the_rest_is_swept(monkeypatch):
    with start_sim(scenarios=["sweep-restricted-reads"], directory=SWEEP_SCENARIOS) as sim:
        result = _sweep(monkeypatch, sim.kubeconfig, "--once", "--json")
    assert result.code == 0, result.err
    output = json.loads(result.out)
    assert [p["code"] for p in output["problems"]] == ["gpu.unhealthy_device"]
    gaps = output["not_checked"]
    assert any(g.startswith("not checked: NodeClaims (forbidden: ") and "nodeclaims" in g for g in gaps), gaps
    assert any(g.startswith("not checked: warning events of GPU nodes (forbidden: ") for g in gaps), gaps


def test_without_once_points_at_serve(cli):
    result = cli("sweep")
    assert result.code == 2
    assert "gpubot serve" in result.err and "--once" in result.err and "Traceback" not in result.err


def test_bad_context_is_bad_input(sim_env, cli):
    result = cli("sweep", "--once", "--context", "bad context;")
    assert result.code == 2 and "not a valid kubeconfig context" in result.err


def test_unreachable_cluster_is_one_line(tmp_path, monkeypatch, cli):
    from sim.kubeconfig import write_kubeconfig

    with refused_port() as port:
        write_kubeconfig(tmp_path / "kc", server_url=f"http://127.0.0.1:{port}", context="prod-east")
        monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kc"))
        monkeypatch.setenv("GPUBOT_MAX_RETRIES", "0")
        result = cli("sweep", "--once", "--json")
    assert result.code == 3
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert lines == ["gpubot: cannot reach cluster prod-east (connection refused)"]
