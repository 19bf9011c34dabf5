"""The notifier against the fake Slack Web API over HTTP and a real store (SQLite and PostgreSQL): one
message per problem group, posted once, updated only when it changes, resolved with its incident when
it clears, a digest for a burst, nothing for a snoozed group, channels from the policy's routes."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from slack_sdk import WebClient

from bot.alerts.notifier import INCIDENTS_PER_REPORT, Notifier
from bot.alerts.routing import AlertRouter
from bot.payloads import ACTION_ALERT_ACKNOWLEDGE, Signer
from bot.policy import Policy, parse_policy
from bot.store import AlertStore, IncidentStore
from playbooks.model import Evidence, Target
from playbooks.problems import Problem
from tests.fakes.block_kit_limits import problems as block_problems
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import opened
from tests.store.conftest import clock, engine  # noqa: F401 - fixtures: a migrated database per backend, a clock

ALERTS = "C0ALERTS"
KEY = b"notifier-tests-button-key-0123456789abcdef"


def xid(n: int = 0, **kw) -> Problem:
    fields = dict(code="gpu.xid_error", severity="error", target=Target("node", f"ip-10-0-1-{n}"),
                  title=f"Xid 79 on ip-10-0-1-{n}", cluster="prod", nodepool="gpu-h100",
                  evidence=(Evidence("event", f"NVRM: Xid (PCI:0000:{n:02x}:00): 79, GPU has fallen off the bus"),))
    fields.update(kw)
    return Problem(**fields)


def pod(n: int, job: str = "x", namespace: str = "llm", **kw) -> Problem:
    fields = dict(code="scheduling.insufficient_gpu", severity="warning", target=Target("pod", f"{job}-{n}", namespace),
                  title=f"pod {job}-{n} Pending for 12m: 0/40 nodes have free nvidia.com/gpu", cluster="prod",
                  group=f"pytorchjob/{namespace}/{job}")
    fields.update(kw)
    return Problem(**fields)


class KeepingSlack(FakeSlack):
    """The fake whose ``reset`` forgets the calls so far but keeps the messages, which are updated later."""

    mark = 0

    def reset(self) -> None:
        self.mark = len(FakeSlack.calls(self))

    def calls(self, method: str | None = None):
        return [c for c in FakeSlack.calls(self)[self.mark:] if method is None or c.method == method]


@pytest.fixture
def slack():
    with KeepingSlack() as fake:
        yield fake


def make(engine, slack: FakeSlack, clock, *, policy: Policy | None = None, default: str | None = ALERTS,
         digest_after: int = 10) -> Notifier:
    client = WebClient(token=slack.token, base_url=slack.url)
    router = AlertRouter(lambda: policy or Policy.open(), default_channel=default)
    return Notifier(store=AlertStore(engine, clock=clock), incidents=IncidentStore(engine, clock=clock), client=client,
                    router=router, signer=Signer(KEY, ttl=3600), digest_after=digest_after, clock=clock)


def blocks_text(call) -> str:
    return json.dumps(call.args.get("blocks"))


def test_a_new_problem_is_posted_once_and_the_same_again_calls_nothing(engine, slack, clock):
    notifier = make(engine, slack, clock)
    summary = notifier.sweep_seen([xid()], "prod")
    assert (summary.posted, summary.incidents_opened) == (1, 1)
    [post] = slack.calls()
    assert post.method == "chat.postMessage" and post.args["channel"] == ALERTS
    assert "Xid 79 on ip-10-0-1-0" in post.args["text"] and "fallen off the bus" in blocks_text(post)
    assert block_problems(post.args["blocks"]) == []
    # Every button sealed for the channel, naming the alert and nothing else.
    buttons = [e for b in post.args["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert {b["text"]["text"] for b in buttons} == {"Snooze 1h", "Snooze 1d", "Snooze until resolved", "Acknowledge"}
    assert all(b["value"].startswith("g1.") for b in buttons)
    ack = next(b for b in buttons if b["action_id"] == ACTION_ALERT_ACKNOWLEDGE)
    group_id = json.loads(opened(ack["value"]))["alert"]
    assert Signer(KEY, ttl=3600).open(ack["value"], action=ACTION_ALERT_ACKNOWLEDGE, conversation=ALERTS)
    # The incident of the problem: its fingerprint, its thread the alert message.
    [incident] = IncidentStore(engine).list()
    assert incident.fingerprint == xid().fingerprint and (incident.slack_channel, incident.slack_ts) == (ALERTS, post.response["ts"])
    clock.now += timedelta(minutes=1)
    slack.reset()
    assert notifier.sweep_seen([xid()], "prod").posted == 0
    assert slack.calls() == []
    assert AlertStore(engine).get(group_id).ts == post.response["ts"]


def test_a_storm_is_one_message_and_a_count_change_is_one_update(engine, slack, clock):
    notifier = make(engine, slack, clock)
    notifier.sweep_seen([pod(i) for i in range(64)], "prod")
    [post] = slack.calls()
    assert "64 pods of pytorchjob/llm/x" in post.args["text"]
    assert block_problems(post.args["blocks"]) == []
    slack.reset()
    clock.now += timedelta(minutes=1)
    summary = notifier.sweep_seen([pod(i) for i in range(60)], "prod")
    assert (summary.updated, summary.posted) == (1, 0)
    [update] = slack.calls()
    assert update.method == "chat.update" and update.args["ts"] == post.response["ts"]
    assert "60 pods of pytorchjob/llm/x" in update.args["text"]
    slack.reset()
    notifier.sweep_seen([pod(i) for i in range(60)], "prod")
    assert slack.calls() == []
    # A severity change is a change too.
    notifier.sweep_seen([pod(0, severity="error")] + [pod(i) for i in range(1, 60)], "prod")
    [update] = slack.calls()
    assert update.method == "chat.update" and "[error]" in update.args["text"]


def test_cleared_is_a_resolved_message_and_a_resolved_incident(engine, slack, clock):
    notifier = make(engine, slack, clock)
    notifier.sweep_seen([xid()], "prod")
    [post] = slack.calls()
    slack.reset()
    clock.now += timedelta(minutes=3)
    summary = notifier.sweep_seen([], "prod")
    assert (summary.resolved, summary.incidents_resolved) == (1, 1)
    [update] = slack.calls()
    assert update.method == "chat.update" and update.args["ts"] == post.response["ts"]
    assert update.args["text"].startswith("Resolved: ")
    assert "no longer seen by the sweep at 09:03 UTC" in blocks_text(update)
    assert '"actions"' not in blocks_text(update)  # nothing to snooze or acknowledge any more
    [incident] = IncidentStore(engine).list(status="all")
    assert (incident.status, incident.resolved_by, incident.resolution) == (
        "resolved", "gpubot", "no longer seen by the sweep at 09:03 UTC")
    slack.reset()
    notifier.sweep_seen([], "prod")
    assert slack.calls() == []


def test_alertmanager_firing_then_resolved(engine, slack, clock):
    notifier = make(engine, slack, clock)
    alert = xid(source="alertmanager", code="alertmanager/DCGMXidError")
    assert notifier.alertmanager([(alert, "firing")]).posted == 1
    slack.reset()
    # Alertmanager's alerts never clear because a sweep does not see them.
    notifier.sweep_seen([], "prod")
    assert slack.calls() == []
    summary = notifier.alertmanager([(alert, "resolved")])
    assert (summary.resolved, summary.incidents_resolved) == (1, 1)
    [update] = slack.calls()
    assert "Alertmanager sent resolved" in blocks_text(update)
    with pytest.raises(ValueError, match="firing or resolved"):
        notifier.alertmanager([(alert, "pending")])


def test_five_hundred_new_problems_are_one_digest(engine, slack, clock):
    notifier = make(engine, slack, clock, digest_after=10)
    burst = [xid(n) for n in range(400)] + [pod(n, job=f"job{n}") for n in range(100)]
    summary = notifier.sweep_seen(burst, "prod")
    assert (summary.digests, summary.digested, summary.posted) == (1, 500, 0)
    # Incidents are opened a bounded number per report, so a burst does not hold the sweep up.
    assert summary.incidents_opened == INCIDENTS_PER_REPORT
    [digest] = slack.calls()
    assert digest.method == "chat.postMessage" and digest.args["text"] == "500 new alerts (500 still firing)"
    text = blocks_text(digest)
    assert "`gpu.xid_error` error: 400" in text and "`scheduling.insufficient_gpu` warning: 100" in text
    assert block_problems(digest.args["blocks"]) == []
    slack.reset()
    # Seen again: nothing. Half of them gone: the digest is updated once, in place.
    notifier.sweep_seen(burst, "prod")
    assert slack.calls() == []
    clock.now += timedelta(minutes=1)
    notifier.sweep_seen(burst[:250], "prod")
    [update] = slack.calls()
    assert update.method == "chat.update" and update.args["ts"] == digest.response["ts"]
    assert update.args["text"] == "500 new alerts (250 still firing)"


def test_a_snoozed_group_is_not_updated_nor_posted_again(engine, slack, clock):
    notifier = make(engine, slack, clock)
    notifier.sweep_seen([pod(i) for i in range(3)], "prod")
    [post] = slack.calls()
    group_id = json.loads(opened(post.args["blocks"][-1]["elements"][0]["value"]))["alert"]
    notifier.store.snooze(group_id, actor="U0ONCALL", until=clock.now + timedelta(hours=1))
    slack.reset()
    summary = notifier.sweep_seen([pod(i) for i in range(5)], "prod")
    assert summary.snoozed == 1 and slack.calls() == []
    # Cleared and back within the hour: still quiet, yet tracked (and its incident opened).
    notifier.sweep_seen([], "prod")
    slack.reset()
    clock.now += timedelta(minutes=20)
    back = notifier.sweep_seen([pod(i) for i in range(2)], "prod")
    assert (back.posted, back.snoozed) == (0, 1) and slack.calls() == []
    assert len(IncidentStore(engine).list()) == 2
    # The hour is over: the next sweep posts it.
    clock.now += timedelta(hours=1)
    assert notifier.sweep_seen([pod(i) for i in range(2)], "prod").posted == 1


def test_a_failed_post_is_retried_by_the_next_sweep(engine, slack, clock):
    notifier = make(engine, slack, clock)
    slack.inject("chat.postMessage", error="internal_error", status=200)
    summary = notifier.sweep_seen([xid()], "prod")
    assert (summary.failed, summary.posted) == (1, 0)
    assert summary.incidents_opened == 1
    summary = notifier.sweep_seen([xid()], "prod")
    assert (summary.failed, summary.posted) == (0, 1)
    assert [c.method for c in slack.calls()] == ["chat.postMessage", "chat.postMessage"]
    assert len(IncidentStore(engine).list()) == 1


def test_two_replicas_post_a_problem_once(engine, slack, clock):
    first, second = make(engine, slack, clock), make(engine, slack, clock)
    assert first.sweep_seen([xid()], "prod").posted == 1
    assert second.sweep_seen([xid()], "prod").posted == 0
    # A replica that claimed and crashed: the other waits out the claim, then posts.
    [_, group] = first.store.sweep([xid(), xid(1)], cluster="prod", reason="").groups
    assert first.store.claim_post(group.id, owner="crashed", channel=ALERTS)
    assert second.sweep_seen([xid(), xid(1)], "prod").claimed_elsewhere == 1
    clock.now += timedelta(minutes=3)
    assert second.sweep_seen([xid(), xid(1)], "prod").posted == 1
    assert len(slack.calls("chat.postMessage")) == 2


ROUTES = """\
channels:
  "*": {clusters: ["*"], namespaces: ["*"]}
alerts:
  routes:
    - {channel: C0LLMTEAM, clusters: [prod], namespaces: ["llm-*", llm], min_severity: warning}
    - {channel: C0GPUPOOL, nodepools: ["gpu-*"], min_severity: error}
    - {channel: C0STAGING, clusters: ["staging-*"]}
"""


def test_routes_first_match_wins_then_the_default_then_nowhere(engine, slack, clock, caplog):
    policy = parse_policy(ROUTES, source="policy.yaml")
    notifier = make(engine, slack, clock, policy=policy, default=None)
    notifier.sweep_seen([pod(0), xid(1), xid(2, nodepool="cpu", severity="critical"),
                         xid(3, severity="warning")], "prod")
    notifier.sweep_seen([xid(4, cluster="staging-east", nodepool=None)], "staging-east")
    where = {c.args["text"].split("] ", 1)[1].split(":")[0]: c.args["channel"] for c in slack.calls("chat.postMessage")}
    assert where == {"pod x-0 Pending for 12m": "C0LLMTEAM", "Xid 79 on ip-10-0-1-1": "C0GPUPOOL",
                     "Xid 79 on ip-10-0-1-4": "C0STAGING"}
    # A critical Xid on a CPU pool and a warning on a GPU pool match no route, and there is no default.
    assert sum(1 for r in caplog.records if "matched no route" in r.message) == 1
    slack.reset()
    defaulted = make(engine, slack, clock, policy=policy, default="C0DEFAULT")
    summary = defaulted.sweep_seen([pod(0), xid(1), xid(2, nodepool="cpu", severity="critical"),
                                    xid(3, severity="warning")], "prod")
    assert summary.posted == 2 and {c.args["channel"] for c in slack.calls()} == {"C0DEFAULT"}
