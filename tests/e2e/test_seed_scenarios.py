"""Every seed incident, diagnosed through `gpubot diagnose` against the simulated cluster over HTTP
(the official kubernetes client, boto3 to moto): the expected finding must come first."""
from __future__ import annotations

import json

import pytest

from bot.render.wording import KIND_NAMES
from sim.scenarios import list_scenarios

SCENARIOS = list_scenarios()


def test_every_seed_scenario_is_present():
    names = {s.name for s in SCENARIOS}
    assert names == {
        "seed-pod-affinity-deadlock", "seed-gpu-request-exceeds-instance", "seed-zone-without-offering",
        "seed-efa-on-non-efa-instance", "seed-nodepool-excludes-instance-type", "seed-auto-mode-label-prefix",
        "seed-untolerated-gpu-taint", "seed-nccl-efa-handshake", "seed-cuda-oom-a100-40gb", "seed-unhealthy-gpu",
        "seed-consolidation-disrupts-training", "seed-gpu-nodepool-near-limit", "seed-slow-image-pull",
        "seed-memory-pressure",
        "crash-loop-missing-dataset",  # not from the field notes: a training pod crash-looping on a missing dataset
    }


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_first_finding(scenario, sim_env, cli):
    result = cli("diagnose", scenario.target, "-n", scenario.namespace, "--json")
    assert result.code == 0, result.err
    diagnosis = json.loads(result.out)
    codes = [f["code"] for f in diagnosis["findings"]]
    assert codes and codes[0] == scenario.first_finding, (codes, diagnosis["summary"])
    first = diagnosis["findings"][0]
    # a node on its way is the answer, not a problem: the one finding that may lead at info
    assert first["severity"] in ("critical", "error", "warning") or first["code"] == "karpenter.provisioning"
    assert first["evidence"], "a finding must quote the evidence it rests on"
    assert all(e["text"] and e["source"] for e in first["evidence"])
    assert first["fix"] and first["fix"]["snippet"].strip() and first["fix"]["summary"].strip()
    assert diagnosis["target"]["namespace"] == scenario.namespace
    assert not [g for g in diagnosis["gaps"] if "EC2" in g], diagnosis["gaps"]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_terminal_output_leads_with_the_first_finding(scenario, sim_env, cli):
    result = cli("diagnose", scenario.target, "-n", scenario.namespace)
    assert result.code == 0, result.err
    kind, name = scenario.target.split("/", 1)
    assert result.out.splitlines()[0].startswith(f"{KIND_NAMES[kind]} {name} ")  # the answer, in words
    assert scenario.first_finding in result.out.split("2. ")[0]
