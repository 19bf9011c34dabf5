"""A crash-looping training pod in the simulated cluster (sim/scenarios/crash-loop-missing-dataset.yaml),
diagnosed over real HTTP with `gpubot diagnose --json`: training.crash_loop first, with the container's
exit code and the previous container's last error line as evidence; and a crash loop whose previous log
names the cause (the CUDA OOM seed) is answered by that cause, not by a generic crash loop."""
from __future__ import annotations

import json


def test_crash_loop_quotes_the_previous_container(sim_env, cli):
    result = cli("diagnose", "pod/tokenize-worker-0", "-n", "crash-loop", "--json")
    assert result.code == 0, result.err
    findings = json.loads(result.out)["findings"]
    first = findings[0]
    assert first["code"] == "training.crash_loop" and first["severity"] == "error", [f["code"] for f in findings]
    texts = [e["text"] for e in first["evidence"]]
    assert any("FileNotFoundError" in t for t in texts), texts
    assert any('"exitCode": 1' in t and "CrashLoopBackOff" in t for t in texts), texts
    assert any("(previous)" in e["source"] for e in first["evidence"])
    assert [f["code"] for f in findings].count("training.crash_loop") == 1


def test_crash_loop_with_a_known_cause_is_answered_by_the_cause(sim_env, cli):
    result = cli("diagnose", "pod/llama-3-8b-node-0-3", "-n", "llm-oom", "--json")
    assert result.code == 0, result.err
    found = [f["code"] for f in json.loads(result.out)["findings"]]
    assert found[0] == "training.cuda_oom" and "training.crash_loop" not in found, found
