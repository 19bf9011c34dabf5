"""Every seed incident through `gpubot diagnose --json` with no AWS credentials at all: the expected
finding still comes first (instance-type facts from the embedded catalogue, the cluster's own words),
and where the diagnosis needed EC2 a gap says what was not checked and why."""
from __future__ import annotations

import json

import pytest
import yaml

from sim.scenarios import default_directory, list_scenarios

SCENARIOS = list_scenarios()

NO_CREDENTIALS_REASON = "no AWS credentials found"


def _pending_pods(scenario) -> list[str]:
    """Pods of the scenario's namespace that are Pending: the diagnoses that need instance-type facts."""
    doc = yaml.safe_load((default_directory() / f"{scenario.name}.yaml").read_text())
    return [o["metadata"]["name"] for o in doc.get("objects") or []
            if o.get("kind") == "Pod" and (o.get("metadata") or {}).get("namespace") == scenario.namespace
            and (o.get("status") or {}).get("phase") == "Pending"]


@pytest.fixture
def offline_env(seed_sim, monkeypatch):
    """The seed cluster (kubeconfig, which also names moto's endpoint and the region) and no way at all
    to find AWS credentials: no keys, no shared files, no instance metadata."""
    monkeypatch.setenv("KUBECONFIG", str(seed_sim.kubeconfig))
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION",
                "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EC2", "AWS_WEB_IDENTITY_TOKEN_FILE",
                "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                "GPUBOT_NAMESPACE", "GPUBOT_CONTEXT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    # a CI runner on EC2 would otherwise find its instance profile
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return seed_sim


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_first_finding_without_aws_credentials(scenario, offline_env, cli):
    result = cli("diagnose", scenario.target, "-n", scenario.namespace, "--json")
    assert result.code == 0, result.err
    diagnosis = json.loads(result.out)
    codes = [f["code"] for f in diagnosis["findings"]]
    assert codes and codes[0] == scenario.first_finding, (codes, diagnosis["summary"], diagnosis["gaps"])
    first = diagnosis["findings"][0]
    # a node on its way is the answer, not a problem: the one finding that may lead at info
    assert first["severity"] in ("critical", "error", "warning") or first["code"] == "karpenter.provisioning"
    assert first["evidence"] and all(e["text"] and e["source"] for e in first["evidence"])

    gaps = diagnosis["gaps"]
    if _pending_pods(scenario):
        # zone offerings need EC2: the gap names them and why they could not be had
        assert [g for g in gaps if "zone offerings not checked" in g.lower() and NO_CREDENTIALS_REASON in g], gaps
    # no gap may claim EC2 was reached
    assert not [g for g in gaps if "EC2" in g and NO_CREDENTIALS_REASON not in g
                and "embedded catalogue" not in g], gaps
