"""Alert buttons end to end: signed clicks over HTTP to the real Bolt app, answers through the fake Slack
Web API, alert state on SQLite and PostgreSQL. The world is policy_world.py's: C0LLM reads llm-*,
C0VISION reads vision-train, other channels read nodes and NodePools only, U0ADMIN reads everything.

The alert messages are posted by the notifier itself (into the fake Slack, sealed with gpubot's key),
so each click carries exactly what gpubot wrote."""
from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta, timezone

import pytest
from slack_sdk import WebClient

from bot.alerts.notifier import Notifier
from bot.alerts.routing import AlertRouter
from bot.payloads import (
    ACTION_ALERT_ACKNOWLEDGE, ACTION_ALERT_SNOOZE_DAY, ACTION_ALERT_SNOOZE_HOUR, ACTION_ALERT_SNOOZE_RESOLVED,
)
from bot.policy import Policy
from bot.store import AlertStore, IncidentStore, make_engine
from playbooks.model import Evidence, Target
from playbooks.problems import Problem
from tests.fakes import workspace as ws
from tests.slack.conftest import opened
from tests.slack.policy_world import (  # noqa: F401 - fixtures
    ADMIN, ALICE, BOB, ELSEWHERE, LLM, VISION, World, policy_world, two_teams_sim, world,
)

NOT_OURS = "this button was not sent by gpubot"
ELSEWHERE_POSTED = "this button belongs to another conversation: use it where it was posted"


@pytest.fixture
def engine(world: World):
    engine = make_engine(world.database)
    yield engine
    engine.dispose()


def post_alert(world: World, engine, *, channel: str, name: str, namespace: str = "llm-prod"):
    """Post one alert about pod ``name`` of ``namespace`` into ``channel``, as the sweep would; the call."""
    problem = Problem(code="scheduling.insufficient_gpu", severity="warning", target=Target("pod", name, namespace),
                      title=f"pod {name} Pending for 14m", cluster=world.context,
                      evidence=(Evidence("event", "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."),))
    notifier = Notifier(store=AlertStore(engine), incidents=IncidentStore(engine),
                        client=WebClient(token=ws.BOT_TOKEN, base_url=world.slack.url),
                        router=AlertRouter(Policy.open, default_channel=channel), signer=world.signer(),
                        digest_after=10)
    # A sweep of its own cluster name, so it clears nothing the other tests posted.
    assert notifier.alertmanager([(problem, "firing")]).posted == 1
    return world.slack.wait_for("chat.postMessage", predicate=lambda c: name in c.args["text"])[-1]


def value(call, action_id: str) -> str:
    [found] = [e["value"] for b in call.args["blocks"] if b["type"] == "actions" for e in b["elements"]
               if e["action_id"] == action_id]
    return found


def alert_id(call) -> int:
    return json.loads(opened(value(call, ACTION_ALERT_ACKNOWLEDGE)))["alert"]


def click(world: World, post, action_id: str, *, user: str, channel: str | None = None, raw: str | None = None):
    channel = channel or post.args["channel"]
    status, _, _ = world.bot.send.block_action(action_id, raw or value(post, action_id), channel=channel, user=user,
                                               message_ts=post.response["ts"])
    assert status == 200
    world.bot.settle()


def private_lines(world: World, user: str) -> list[str]:
    return [c.args["text"] for c in world.slack.calls("chat.postEphemeral") if c.args["user"] == user]


def updates_of(world: World, post) -> list:
    return [c for c in world.slack.calls("chat.update") if c.args["ts"] == post.response["ts"]]


@pytest.mark.parametrize("action_id, period, told", [
    (ACTION_ALERT_SNOOZE_HOUR, timedelta(hours=1), "for 1 hour"),
    (ACTION_ALERT_SNOOZE_DAY, timedelta(days=1), "for 1 day"),
    (ACTION_ALERT_SNOOZE_RESOLVED, None, "until it resolves"),
])
def test_snooze(world, engine, action_id, period, told):
    post = post_alert(world, engine, channel=LLM, name=f"mixtral-{action_id[-2:]}")
    before = datetime.now(timezone.utc)
    click(world, post, action_id, user=BOB)
    assert private_lines(world, BOB) == [f"Alert #{alert_id(post)} snoozed {told}: its message is not updated until "
                                         "then, and it is not posted again."]
    group = AlertStore(engine).get(alert_id(post))
    assert group.snoozed_by == BOB and group.snoozed(datetime.now(timezone.utc) + timedelta(minutes=50))
    if period is None:
        assert group.snoozed_until_resolved and group.snoozed_until is None
    else:
        assert before + period <= group.snoozed_until <= datetime.now(timezone.utc) + period
    [update] = updates_of(world, post)
    assert ":zzz: Snoozed" in json.dumps(update.args["blocks"]) and f"<@{BOB}>" in json.dumps(update.args["blocks"])
    assert all(e["value"].startswith("g1.") for b in update.args["blocks"] if b["type"] == "actions"
               for e in b["elements"])


def test_acknowledge_marks_the_alert_and_its_incident(world, engine):
    post = post_alert(world, engine, channel=LLM, name="mixtral-ack")
    click(world, post, ACTION_ALERT_ACKNOWLEDGE, user=BOB)
    assert private_lines(world, BOB) == [f"Alert #{alert_id(post)} acknowledged."]
    assert AlertStore(engine).get(alert_id(post)).acknowledged_by == BOB
    [update] = updates_of(world, post)
    blocks = json.dumps(update.args["blocks"])
    assert f"Acknowledged by <@{BOB}>" in blocks and ACTION_ALERT_ACKNOWLEDGE not in blocks
    [incident] = [i for i in IncidentStore(engine).list(status="all", limit=500) if i.target_name == "mixtral-ack"]
    assert (incident.status, incident.acknowledged_by) == ("acknowledged", BOB)


def test_refused_where_the_policy_does_not_open_the_namespace(world, engine):
    # An alert about llm-prod that reached a channel reading only nodes and NodePools.
    post = post_alert(world, engine, channel=ELSEWHERE, name="mixtral-misrouted")
    for action_id in (ACTION_ALERT_SNOOZE_HOUR, ACTION_ALERT_ACKNOWLEDGE):
        click(world, post, action_id, user=ALICE)
    assert private_lines(world, ALICE) == ["namespace llm-prod is not open to this channel"] * 2
    group = AlertStore(engine).get(alert_id(post))
    assert group.snoozed_by is None and group.acknowledged_by is None
    assert updates_of(world, post) == []
    # The platform admin reads everything from anywhere.
    click(world, post, ACTION_ALERT_SNOOZE_HOUR, user=ADMIN)
    assert AlertStore(engine).get(alert_id(post)).snoozed_by == ADMIN


def test_a_team_channel_cannot_act_on_another_teams_alert(world, engine):
    post = post_alert(world, engine, channel=VISION, name="mixtral-in-vision")
    click(world, post, ACTION_ALERT_ACKNOWLEDGE, user=ALICE)
    assert private_lines(world, ALICE) == ["namespace llm-prod is not open to this channel"]
    assert AlertStore(engine).get(alert_id(post)).acknowledged_by is None


def test_altered_and_misdirected_values_are_refused(world, engine):
    post = post_alert(world, engine, channel=LLM, name="mixtral-forged")
    other = post_alert(world, engine, channel=LLM, name="mixtral-other")
    sealed = value(post, ACTION_ALERT_SNOOZE_HOUR)
    head, payload, mac = sealed.split(".")
    # Aimed at another alert: the payload re-encoded with another id, the old seal kept.
    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    body["v"] = json.dumps({"alert": alert_id(other)}, separators=(",", ":"))
    forged = base64.urlsafe_b64encode(json.dumps(body, separators=(",", ":"), sort_keys=True).encode()).rstrip(b"=")
    click(world, post, ACTION_ALERT_SNOOZE_HOUR, user=BOB, raw=f"{head}.{forged.decode()}.{mac}")
    # A Snooze 1h value sent as Snooze until resolved.
    click(world, post, ACTION_ALERT_SNOOZE_RESOLVED, user=BOB, raw=sealed)
    # Clicked in another channel than the one it was posted in.
    click(world, post, ACTION_ALERT_SNOOZE_HOUR, user=ADMIN, channel=VISION)
    assert private_lines(world, BOB) == [NOT_OURS, NOT_OURS]
    assert private_lines(world, ADMIN) == [ELSEWHERE_POSTED]
    for group in (AlertStore(engine).get(alert_id(post)), AlertStore(engine).get(alert_id(other))):
        assert group.snoozed_by is None and not group.snoozed_until_resolved
