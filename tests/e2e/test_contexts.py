"""Several clusters in one kubeconfig, chosen per command with --context."""
from __future__ import annotations

import json

import yaml

from sim.serve import start_sim


def test_context_picks_the_cluster(sim_env, tmp_path, monkeypatch, cli):
    with start_sim(scenarios=["seed-memory-pressure"], context="train-east", ec2=False) as east:
        merged = yaml.safe_load(sim_env.kubeconfig.read_text())
        other = yaml.safe_load(east.kubeconfig.read_text())
        for key in ("clusters", "contexts", "users"):
            merged[key] += [e for e in other[key] if e["name"] not in {x["name"] for x in merged[key]}]
        path = tmp_path / "kubeconfig"
        path.write_text(yaml.safe_dump(merged))
        monkeypatch.setenv("KUBECONFIG", str(path))
        east.reset_requests()
        sim_env.reset_requests()
        result = cli("diagnose", "pod/llama-3-8b-zero3-0", "-n", "llm-zero3", "--context", "train-east", "--json")
        assert result.code == 0, result.err
        diagnosis = json.loads(result.out)
        assert diagnosis["target"]["cluster"] == "train-east"
        assert east.request_count() > 0 and sim_env.request_count() == 0
        missing = cli("diagnose", "pytorchjob/pytorch-dist-job", "-n", "t5-fsdp", "--context", "train-east")
        assert missing.code == 2  # that job lives in the other cluster only
