"""Bad input gets one clear line on stderr, exit status 2, and changes nothing in the cluster."""
from __future__ import annotations

import json

import pytest

from tests.fakes.ports import refused_port


def _one_line(result):
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1, result.err
    assert "Traceback" not in result.err
    return lines[0]


@pytest.mark.parametrize("args", [
    ["diagnose", "pod/Bad_Name"],
    ["diagnose", "deployment/foo"],
    ["diagnose", "pod/x;rm -rf /"],
    ["diagnose", "$(reboot)"],
    ["diagnose", "pod/x", "-n", "NOT_A_NAMESPACE"],
    ["diagnose", "pod/x", "--context", "bad context;ls"],
    ["diagnose"],
    ["frobnicate"],
    ["sim", "serve", "--scale", "nodes=lots"],
])
def test_invalid_input(args, sim_env, cli):
    result = cli(*args)
    assert result.code == 2
    assert _one_line(result).startswith("gpubot: ")


def test_invalid_names_never_reach_the_cluster(sim_env, cli):
    before = sim_env.request_count()
    result = cli("diagnose", "pod/x;rm -rf /", "-n", "llm-gpu")
    assert result.code == 2
    assert sim_env.request_count() == before


def test_unknown_job_suggests_close_names(sim_env, cli):
    result = cli("diagnose", "pytorchjob/pytorch-dist-jbo", "-n", "t5-fsdp")
    assert result.code == 2
    line = _one_line(result)
    assert "pytorch-dist-job" in line


def test_missing_namespace(sim_env, cli):
    result = cli("diagnose", "pod/x", "-n", "no-such-namespace")
    assert result.code == 2
    assert "namespace no-such-namespace does not exist" in _one_line(result)


def test_json_errors_are_json(sim_env, cli):
    result = cli("diagnose", "pod/Bad_Name", "--json")
    assert result.code == 2
    assert "error" in json.loads(result.out)


def test_bare_name_is_resolved_across_namespaces(sim_env, cli):
    result = cli("diagnose", "pytorch-dist-job", "--json")
    assert result.code == 0, result.err
    diagnosis = json.loads(result.out)
    assert diagnosis["target"]["kind"] == "pytorchjob" and diagnosis["target"]["namespace"] == "t5-fsdp"


def test_ask_in_plain_words(sim_env, cli):
    result = cli("ask", "why is my job pytorch-dist-job pending?", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["findings"][0]["code"] == "karpenter.provisioning"


def test_ask_unknown_job_lists_pending_jobs(sim_env, cli):
    result = cli("ask", "why is my job llama-99 pending?", "-n", "t5-fsdp")
    assert result.code == 2
    line = _one_line(result)
    assert "llama-99" in line and "Pending in t5-fsdp: pytorch-dist-job" in line


def test_ask_without_a_target_lists_pending_jobs(sim_env, cli):
    result = cli("ask", "why is my job pending?", "-n", "t5-fsdp")
    assert result.code == 2
    assert "pytorch-dist-job" in _one_line(result)


def test_unreachable_cluster_is_one_line(tmp_path, monkeypatch, cli):

    from sim.kubeconfig import write_kubeconfig

    with refused_port() as port:
        write_kubeconfig(tmp_path / "kc", server_url=f"http://127.0.0.1:{port}", context="prod-east")
        monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kc"))
        monkeypatch.setenv("GPUBOT_MAX_RETRIES", "0")
        result = cli("diagnose", "pod/x")
        assert result.code == 3
        assert _one_line(result) == "gpubot: cannot reach cluster prod-east (connection refused)"


def test_explain_rejects_empty_and_binary(tmp_path, cli):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"  \n")
    binary = tmp_path / "core.bin"
    binary.write_bytes(bytes(range(256)) * 100)
    for path in (empty, binary):
        result = cli("explain", str(path))
        assert result.code == 2
        _one_line(result)
    assert cli("explain", str(tmp_path / "missing.log")).code == 2


def test_explain_rejects_input_over_the_limit(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("GPUBOT_EXPLAIN_MAX_BYTES", "1000")
    big = tmp_path / "big.log"
    big.write_bytes(b"NCCL INFO ok\n" * 200)
    result = cli("explain", str(big))
    assert result.code == 2
    assert "at most" in _one_line(result)
