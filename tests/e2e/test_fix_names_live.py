"""Fixes name the cluster's own objects and follow the cause, read over HTTP from the simulated API server
serving field scenarios (tests/scenarios/)."""
from __future__ import annotations

import json

import pytest
import yaml

from playbooks.validation import validate_patch
from tests.conftest import REPO, SIM_ENV

SCENARIO_DIR = REPO / "tests" / "scenarios"


@pytest.fixture
def diagnose(monkeypatch, cli):
    """Serve one field scenario, diagnose its target with the in-process CLI; the JSON and the live objects."""
    from sim.serve import start_sim

    def run(name: str, target: str, namespace: str, *, kinds: tuple[tuple[str, str], ...] = ()):
        with start_sim(directory=SCENARIO_DIR, scenarios=[name]) as sim:
            monkeypatch.setenv("KUBECONFIG", str(sim.kubeconfig))
            for key, value in SIM_ENV.items():
                monkeypatch.setenv(key, value)
            for key in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EC2",
                        "GPUBOT_NAMESPACE", "GPUBOT_CONTEXT", "AWS_PROFILE"):
                monkeypatch.delenv(key, raising=False)
            result = cli("diagnose", target, "-n", namespace, "--json")
            from bot.gateway import connect
            from bot.settings import load_settings

            gateway = connect(load_settings({"KUBECONFIG": str(sim.kubeconfig)}))
            live = {name: gateway.get_nodeclass(group, name) for group, name in kinds}
        assert result.code == 0, result.err
        return json.loads(result.out), live

    return run


def test_a_gpu_node_on_the_standard_ami_gets_the_ami_fix_not_tolerations(diagnose):
    diagnosis, live = diagnose("field-standard-ami-gpu-g4dn", "pod/whisper-finetune-0", "speech-asr",
                               kinds=(("karpenter.k8s.aws", "g4dn-asr"),))
    first = diagnosis["findings"][0]
    assert first["code"] == "gpu.device_plugin_missing", [f["code"] for f in diagnosis["findings"]]
    assert "amazon-eks-node-al2023-x86_64-standard-1.32-v20251016" in first["title"]
    assert "tolerat" not in first["fix"]["snippet"].lower().replace("no device plugin toleration", "")
    patch = yaml.safe_load(first["fix"]["snippet"])
    # the same release, the NVIDIA build: an alias pinned to the standard image's version
    assert patch["metadata"]["name"] == "g4dn-asr"
    assert patch["spec"]["amiSelectorTerms"] == [{"alias": "al2023@v20251016"}]
    assert validate_patch(live["g4dn-asr"], patch) == []
    assert "kubectl delete nodeclaim g4dn-asr-w2k9d" in first["fix"]["snippet"]
    sources = " ".join(e["source"] for e in first["evidence"])
    assert "status.imageID" in sources and "spec.amiSelectorTerms" in sources


def test_a_capacity_fix_names_the_pods_nodepool(diagnose):
    diagnosis, _ = diagnose("field-h100-train-ice-named-pool-p5", "pod/llama3-sft-0", "llm-sft")
    first = diagnosis["findings"][0]
    assert first["code"] == "karpenter.insufficient_capacity"
    assert "NodePool h100-train" in first["fix"]["summary"]
    assert yaml.safe_load(first["fix"]["snippet"])["metadata"]["name"] == "h100-train"
    for finding in diagnosis["findings"]:
        text = (finding["fix"] or {}).get("snippet", "")
        assert "<nodepool-name>" not in text and "name: gpu\n" not in text, finding


def test_a_gpu_node_initializing_on_the_nvidia_alias_is_waiting_not_failing(diagnose):
    diagnosis, _ = diagnose("field-arm64-nvidia-alias-initializing-g5g", "pod/mobile-sr-infer-0", "games-infer")
    assert [f for f in diagnosis["findings"] if f["severity"] != "info"] == []
    assert "gpu.device_plugin_missing" not in [f["code"] for f in diagnosis["findings"]]
