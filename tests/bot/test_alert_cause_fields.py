"""The cause travels as structured fields, from the analyzer that found it to the message that tells it.

A real sweep (bot.alerts.sweep, the official kubernetes client against the simulated API server, moto
for EC2) of the sick GPU fleet (sim/scenarios/sweep/sweep-sick-gpu-fleet.yaml) finds NodePool g6e-batch
at 15 of its 16 GPUs with a pod Pending on it, and a p5.48xlarge NodeClaim that failed to launch for lack
of on-demand capacity in us-east-1a. Their findings carry what the titles say in prose as labels named
like Karpenter's metrics (Finding.labels / Problem.labels); the alert store keeps the limit's numbers
for the headline, and a sweep's capacity finding and Karpenter's alert about the same offering are one
message, whichever comes first (the fake Slack Web API over HTTP, SQLite and PostgreSQL)."""
from __future__ import annotations

import json

import pytest

from bot.alerts.alertmanager import parse_webhook
from bot.alerts.causes import Cause, cause_of, usage_of
from bot.alerts.sweep import sweep
from bot.service import DiagnosisService
from bot.settings import load_settings
from sim.serve import start_sim
from tests.bot.alertmanager_payloads import alert, encode, webhook
from tests.bot.test_notifier import make, slack  # noqa: F401 - the fake Slack fixture
from tests.conftest import REPO, SIM_ENV
from tests.fakes.block_kit_limits import problems as block_problems
from tests.store.conftest import clock, engine  # noqa: F401 - fixtures: a migrated database per backend, a clock

OFFERING = {"instance_type": "p5.48xlarge", "zone": "us-east-1a", "capacity_type": "on-demand"}
USAGE = {"resource_type": "nvidia.com/gpu", "used": "15", "limit": "16"}


@pytest.fixture(scope="module")
def swept():
    with pytest.MonkeyPatch.context() as mp:
        for key, value in SIM_ENV.items():
            mp.setenv(key, value)
        with start_sim(scenarios=["sweep-sick-gpu-fleet"], directory=REPO / "sim" / "scenarios" / "sweep") as sim:
            settings = load_settings({"KUBECONFIG": str(sim.kubeconfig), **SIM_ENV})
            result = sweep(DiagnosisService(settings), settings)
    assert result.not_checked == []
    return result


def by_code(result, code: str) -> dict[str, object]:
    return {p.target.kind: p for p in result.problems if p.code == code}


def test_the_analyzers_carry_the_cause_as_fields(swept):
    limits = by_code(swept, "karpenter.nodepool_limit_reached")
    # The pending pod's finding (analyzers/pending_findings.py) and the NodePool's own (sweep/nodepools.py).
    assert set(limits) == {"pod", "nodepool"}
    for problem in limits.values():
        assert problem.labels == {"nodepool": "g6e-batch", **USAGE}
        assert cause_of(problem) == Cause("limit", "g6e-batch") and usage_of(problem) == USAGE
    [ice] = by_code(swept, "karpenter.insufficient_capacity").values()
    assert ice.labels == OFFERING  # EC2's message names type and zone, the NodeClaim its capacity type
    assert cause_of(ice) == Cause("offering", "p5.48xlarge/us-east-1a/on-demand")


def test_the_limit_headline_says_what_is_used_up(engine, slack, clock, swept):
    notifier = make(engine, slack, clock)
    notifier.sweep_seen(list(by_code(swept, "karpenter.nodepool_limit_reached").values()), swept.cluster)
    [post] = slack.calls("chat.postMessage")
    said = "NodePool g6e-batch has used 15 of its 16 GPUs, too many for another node: 1 pod waits on it"
    assert post.args["text"] == f"[error] {said}"
    assert said in post.args["blocks"][0]["text"]["text"] and block_problems(post.args["blocks"]) == []


def karpenter_ice_alert(cluster: str):
    body = encode(webhook(alert({"alertname": "KarpenterProvisioningFailed", "reason": "insufficient_capacity",
                                 "nodepool": "h100-train", "severity": "warning", **OFFERING},
                                annotations={"summary": "Karpenter failed to bring up a node for NodePool h100-train"})))
    return [(a.problem, a.status) for a in parse_webhook(body, cluster=cluster).by_problem()]


@pytest.mark.parametrize("first", ["sweep", "alertmanager"])
def test_a_sweeps_capacity_finding_and_karpenters_alert_are_one_message(engine, slack, clock, swept, first):
    notifier = make(engine, slack, clock)
    [ice] = by_code(swept, "karpenter.insufficient_capacity").values()
    reports = {"sweep": lambda: notifier.sweep_seen([ice], swept.cluster),
               "alertmanager": lambda: notifier.alertmanager(karpenter_ice_alert(swept.cluster))}
    reports[first]()
    [post] = slack.calls("chat.postMessage")
    headline = "EC2 has no on-demand capacity for p5.48xlarge in us-east-1a"
    assert headline in post.args["text"]
    slack.reset()
    reports["alertmanager" if first == "sweep" else "sweep"]()
    assert slack.calls("chat.postMessage") == []
    [update] = slack.calls("chat.update")
    assert update.args["ts"] == post.response["ts"] and headline in update.args["text"]
    # Both name NodePool h100-train, so they are even one problem (one fingerprint), told once.
    assert "(2 problems)" not in update.args["text"] and block_problems(update.args["blocks"]) == []
    assert "offering/p5.48xlarge/us-east-1a/on-demand" in json.dumps(update.args["blocks"])


def test_another_nodepools_alert_about_the_same_offering_joins_the_message(engine, slack, clock, swept):
    notifier = make(engine, slack, clock)
    [ice] = by_code(swept, "karpenter.insufficient_capacity").values()
    notifier.sweep_seen([ice], swept.cluster)
    [post] = slack.calls("chat.postMessage")
    slack.reset()
    body = encode(webhook(alert({"alertname": "KarpenterProvisioningFailed", "reason": "insufficient_capacity",
                                 "nodepool": "h100-spare", "severity": "warning", **OFFERING})))
    other = [(a.problem, a.status) for a in parse_webhook(body, cluster=swept.cluster).by_problem()]
    notifier.alertmanager(other)
    assert slack.calls("chat.postMessage") == []
    [update] = slack.calls("chat.update")
    assert update.args["ts"] == post.response["ts"]
    assert update.args["text"] == "[error] EC2 has no on-demand capacity for p5.48xlarge in us-east-1a (2 problems)"
