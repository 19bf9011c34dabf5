"""Every YAML fix the seed diagnoses produce is a merge patch that, applied to the live object, still
validates against the real schema (CRDs for Karpenter and Kubeflow, kubernetes-validate for core)."""
from __future__ import annotations

import json

import pytest
import yaml

from sim.scenarios import list_scenarios
from playbooks.validation import validate_object, validate_patch

SCENARIOS = list_scenarios()


def _live(gateway, doc: dict) -> dict | None:
    kind, meta = doc["kind"], doc.get("metadata") or {}
    name, ns = meta.get("name"), meta.get("namespace")
    getters = {
        "Pod": lambda: gateway.get_pod(ns, name), "Job": lambda: gateway.get_job(ns, name),
        "PyTorchJob": lambda: gateway.get_pytorchjob(ns, name), "NodePool": lambda: gateway.get_nodepool(name),
        "EC2NodeClass": lambda: gateway.get_nodeclass("karpenter.k8s.aws", name),
    }
    return getters[kind]() if kind in getters else None


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_fixes_validate(scenario, sim_env, cli):
    from bot.gateway import connect
    from bot.settings import load_settings

    result = cli("diagnose", scenario.target, "-n", scenario.namespace, "--json")
    assert result.code == 0, result.err
    gateway = connect(load_settings({"KUBECONFIG": str(sim_env.kubeconfig)}))
    checked = 0
    for finding in json.loads(result.out)["findings"]:
        fix = finding["fix"]
        if not fix:
            continue
        if fix["language"] == "json":
            json.loads(fix["snippet"])
        if fix["language"] != "yaml":
            continue
        for doc in yaml.safe_load_all(fix["snippet"]):
            if not isinstance(doc, dict) or "kind" not in doc:
                continue
            live = _live(gateway, doc)
            errors = validate_patch(live, doc) if live is not None else validate_object(doc)
            assert errors == [], (finding["code"], errors, fix["snippet"])
            checked += 1
    # a node on its way needs no patch: its fix is how to follow the NodeClaim
    if scenario.first_finding.startswith(("scheduling.", "karpenter.", "efa.")) and scenario.first_finding != "karpenter.provisioning":
        assert checked, "a scheduling fix must be a patch we can validate"
