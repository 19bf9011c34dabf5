"""Karpenter's failed launch recorded only as an event on the NodeClaim it nominated the pod to.

Karpenter publishes an InsufficientCapacityError event on the NodeClaim and deletes the claim
(kubernetes-sigs/karpenter pkg/controllers/nodeclaim/lifecycle/launch.go and events.go: "NodeClaim %s
event: %s"). On EKS Auto Mode, or where the controller's log cannot be read, that event is the only record
of EC2's refusal: the pod just shows Karpenter's Nominated event. The event line is the one
tests/playbooks/lines.py holds for karpenter.insufficient_capacity (Karpenter's event format with EC2's
InsufficientInstanceCapacity text). Without the event the same cluster gets no such finding, so the test
rests on the NodeClaim's events being read."""
from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import point_cli_at
from tests.e2e import live_signals as live

CLAIM = "gpu-x8k2p"
CODE = "karpenter.insufficient_capacity"


def _scenario(name: str, *, with_event: bool) -> dict:
    claim = CLAIM if with_event else "gpu-q4m7z"  # NodeClaims and their events are cluster-wide
    said = live.described(live.line_for(CODE), reason="InsufficientCapacityError", component="karpenter")
    scenario = live.pending_pod_event(CODE, "Normal  Nominated  3m  karpenter  Pod should schedule on: "
                                      f"nodeclaim/{claim}")
    document = scenario.document()
    document["name"] = document["namespace"] = name
    for obj in document["objects"]:
        obj["metadata"]["namespace"] = name
        if obj.get("involvedObject", {}).get("namespace"):
            obj["involvedObject"]["namespace"] = name
    if with_event:
        document["objects"].append(live.event(None, "NodeClaim", CLAIM, said, suffix="17b3c9", last="-2m"))
    return document


@pytest.fixture(scope="module")
def claim_sim(tmp_path_factory):
    from sim.serve import start_sim

    directory = tmp_path_factory.mktemp("nodeclaim-events")
    for name, with_event in (("claim-event", True), ("claim-silent", False)):
        (directory / f"{name}.yaml").write_text(yaml.safe_dump(_scenario(name, with_event=with_event), sort_keys=False))
    with start_sim(directory=directory, scenarios=["claim-event", "claim-silent"]) as sim:
        yield sim


@pytest.fixture
def claim_env(claim_sim, monkeypatch):
    return point_cli_at(claim_sim, monkeypatch)


def _codes(cli, namespace: str) -> dict[str, dict]:
    result = cli("diagnose", "pod/train-0", "-n", namespace, "--json")
    assert result.code == 0, result.err
    return {f["code"]: f for f in json.loads(result.out)["findings"]}


def test_the_nodeclaims_own_event_is_the_evidence(claim_env, cli):
    found = _codes(cli, "claim-event")
    assert CODE in found, list(found)
    finding = found[CODE]
    assert finding["severity"] != "info"
    assert any(e["source"].startswith(f"event nodeclaim/{CLAIM}") for e in finding["evidence"]), finding["evidence"]


def test_without_the_event_there_is_no_such_finding(claim_env, cli):
    assert CODE not in _codes(cli, "claim-silent")
