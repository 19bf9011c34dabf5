"""Issue 9 end to end in Slack: Request approval, Approve, Reject and Undo as signed clicks to the real
app over HTTP, gpubot answering through the fake Slack Web API and writing to a simulated cluster of
this module's own (approval_world.py), proposals on SQLite and on PostgreSQL.

What gpubot wrote is counted from the PATCH requests the simulator served: every apply is one dry run
(``dryRun=All``) and one write per object, and a refused or stopped approval writes nothing.
"""
from __future__ import annotations

import json
import re
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

from bot.payloads import ACTION_APPROVE, ACTION_REJECT, ACTION_UNDO, Signer, encode_proposal
from tests.slack.approval_world import (  # noqa: F401 - fixtures
    APPROVER, BUTTON_KEY, DO_NOT_DISRUPT, GROUPIE, JOB, NODEPOOL, NODEPOOL_PATH, NS, ONCALL, PODS, REQUESTER, TEAM,
    World, approval_world, buttons, h100_sim, is_dry_run, policy_text, shown, world,
)
from tests.slack.conftest import assert_valid_blocks, opened

APPROVE_TEXT = "Change #{id}: applied: 1 applied"
NOT_OURS = "this button was not sent by gpubot"


def approve(world: World, posted, *, user: str = APPROVER, bot=None) -> list[str]:
    return world.click(bot, ACTION_APPROVE, posted_value(posted, ACTION_APPROVE), user=user)


def posted_value(posted, action_id: str, channel: str = ONCALL) -> str:
    [found] = buttons(posted.posts[channel].args["blocks"], action_id)
    return found["value"]


def nothing_written(world: World) -> None:
    assert world.writes() == []
    assert world.nodepool()["spec"]["disruption"] == world.original["spec"]["disruption"]


def applied_once(world: World, objects: int = 1) -> None:
    writes = world.writes()
    assert len([w for w in writes if is_dry_run(w)]) == objects, writes
    assert len([w for w in writes if not is_dry_run(w)]) == objects, writes
    assert all(w["status"] == 200 for w in writes), writes


def latest_update(world: World, proposal_id: int, channel: str):
    return [c for c in world.updates(proposal_id) if c.args["channel"] == channel][-1]


# 1 -------------------------------------------------------------------------------------------------

def test_request_approval_posts_the_proposal_in_the_thread_and_the_approvers_channel(world):
    posted = world.request(user=REQUESTER)
    thread = posted.posts[TEAM]
    assert set(posted.posts) == {TEAM, ONCALL}
    assert thread.args["thread_ts"] == world.diagnosis.ts  # the incident's thread
    assert posted.posts[ONCALL].args.get("thread_ts") in (None, "")
    expected_expiry = datetime.now(timezone.utc) + timedelta(minutes=30)
    for channel, call in posted.posts.items():
        assert_valid_blocks(call)
        text = shown(call)
        # The diff of the live NodePool: the old policy out, the new one in.
        assert re.search(r"-\s*consolidationPolicy: WhenEmptyOrUnderutilized", text), text
        assert re.search(r"\+\s*consolidationPolicy: WhenEmpty\b", text), text
        assert f"nodepool/{NODEPOOL}" in text and "<@U0ML>" in text
        assert f"karpenter.disruption on pytorchjob/{JOB}" in text  # the reason
        [epoch] = re.findall(r"Expires <!date\^(\d+)\^", text)
        assert abs(int(epoch) - expected_expiry.timestamp()) < 120
        assert "Waiting for approval" in text
        values = {b["action_id"]: b["value"] for b in buttons(call.args["blocks"], ACTION_APPROVE)
                  + buttons(call.args["blocks"], ACTION_REJECT)}
        assert set(values) == {ACTION_APPROVE, ACTION_REJECT}
        # Sealed for the channel it was posted in, naming this proposal.
        assert all(json.loads(opened(v)) == {"proposal": posted.id} for v in values.values())
        assert Signer(BUTTON_KEY.encode(), ttl=60).open(values[ACTION_APPROVE], action=ACTION_APPROVE,
                                                        conversation=channel)
    assert posted.note.args["channel"] == TEAM and posted.note.args["user"] == REQUESTER
    assert f"Approval requested: change #{posted.id}" == posted.note.args["text"]
    assert f"<#{ONCALL}>" in shown(posted.note) and "Nothing is written" in shown(posted.note)
    nothing_written(world)


# 2 -------------------------------------------------------------------------------------------------

def test_approve_applies_once_and_updates_every_copy_in_place(world):
    posted = world.request()
    posts = len(world.slack.calls("chat.postMessage"))
    heard = approve(world, posted)
    assert heard == [APPROVE_TEXT.format(id=posted.id)]
    applied_once(world)
    assert world.nodepool()["spec"]["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert world.nodepool()["spec"]["disruption"]["consolidateAfter"] == "10m"
    updates = world.updates(posted.id)
    assert {(c.args["channel"], c.args["ts"]) for c in updates} == posted.places()
    assert len(updates) == 2  # each copy once, edited in place (no new message)
    for call in updates:
        assert_valid_blocks(call)
        assert call.args["text"].startswith(f"Change #{posted.id} applied:")
        assert "Applied" in shown(call) and "approved by <@U0ONCALL1>" in shown(call)
        assert [b["text"]["text"] for b in buttons(call.args["blocks"], ACTION_UNDO)] == ["Undo"]
        assert buttons(call.args["blocks"], ACTION_APPROVE) == []
    assert world.slack.calls("chat.postMessage")[posts:] == []  # no new message anywhere

    world.bot.command(f"incident {world.diagnosis.incident}", channel_id=TEAM, user_id=REQUESTER)
    detail = world.slack.wait_for("chat.postMessage", predicate=lambda c: "Timeline" in shown(c))[0]
    timeline = shown(detail)
    for step in ("remediation proposed", "remediation approved", "remediation applied"):
        assert re.search(rf"\*{step}\*[^\"]*#{posted.id} nodepool-consolidation", timeline), (step, timeline)
    assert "<@U0ONCALL1>" in timeline and "<@U0ML>" in timeline


# 3 -------------------------------------------------------------------------------------------------

def test_self_approval_is_refused(world):
    posted = world.request(user=APPROVER)
    heard = approve(world, posted, user=APPROVER)
    assert len(heard) == 1 and "self-approval is off" in heard[0]
    nothing_written(world)
    assert world.updates(posted.id) == []


def test_a_non_approver_is_refused_and_a_user_group_member_approves(world):
    posted = world.request(user=REQUESTER)
    heard = approve(world, posted, user="U0STRANGER")
    assert len(heard) == 1 and "not an approver" in heard[0]
    heard = approve(world, posted, user=REQUESTER)
    assert len(heard) == 1 and "not an approver" in heard[0]
    nothing_written(world)
    heard = approve(world, posted, user=GROUPIE)  # in S0GPUONCALL, named nowhere else in the policy
    assert heard == [APPROVE_TEXT.format(id=posted.id)]
    applied_once(world)
    assert "approved by <@U0GROUPIE>" in shown(latest_update(world, posted.id, ONCALL))


# 4 -------------------------------------------------------------------------------------------------

def test_a_double_click_applies_once(world):
    posted = world.request()
    value = posted_value(posted, ACTION_APPROVE)
    before = len(world.slack.calls("chat.postEphemeral"))
    for _ in range(2):  # back to back, before the first has finished
        status, _, _ = world.bot.send.block_action(ACTION_APPROVE, value, channel=ONCALL, user=APPROVER,
                                                   message_ts="1767225000.000100")
        assert status == 200
    world.bot.settle()
    heard = sorted(c.args["text"] for c in world.slack.calls("chat.postEphemeral")[before:])
    applied_once(world)
    assert len(heard) == 2 and heard.count(APPROVE_TEXT.format(id=posted.id)) == 1, heard
    [second] = [h for h in heard if h != APPROVE_TEXT.format(id=posted.id)]
    # Mid-apply the second click hears that it is being applied, after it that it was.
    assert (f"proposal #{posted.id} was already applied by <@{APPROVER}>" in second
            or f"proposal #{posted.id} is being applied by <@{APPROVER}>" in second), second
    # A later click always hears who applied it.
    [later] = approve(world, posted, user=GROUPIE)
    assert f"proposal #{posted.id} was already applied by <@{APPROVER}>" in later
    applied_once(world)


# 5 -------------------------------------------------------------------------------------------------

def test_two_instances_receiving_the_same_click_apply_once(world):
    posted = world.request()
    value = posted_value(posted, ACTION_APPROVE)
    with world.serve() as one, world.serve() as two:
        start = threading.Barrier(2)
        statuses: list[int] = []

        def click(bot):
            start.wait()
            statuses.append(bot.send.block_action(ACTION_APPROVE, value, channel=ONCALL, user=APPROVER,
                                                  message_ts="1767225000.000100").status)

        threads = [threading.Thread(target=click, args=(bot,)) for bot in (one, two)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        one.settle()
        two.settle()
    assert statuses == [200, 200]
    applied_once(world)
    heard = [c.args["text"] for c in world.slack.calls("chat.postEphemeral") if c.args["user"] == APPROVER]
    assert heard.count(APPROVE_TEXT.format(id=posted.id)) == 1, heard
    assert len(heard) == 2
    assert world.nodepool()["spec"]["disruption"]["consolidationPolicy"] == "WhenEmpty"


# 6 -------------------------------------------------------------------------------------------------

def test_a_restart_between_request_and_approval_loses_nothing(world):
    # Both instances derive their button key from the Slack signing secret (no GPUBOT_BUTTON_KEY).
    with world.serve(button_key=None) as first:
        diagnosis = world.diagnose(first)
        posted = world.request(first, diagnosis=diagnosis)
    nothing_written(world)
    with world.serve(button_key=None) as second:
        heard = approve(world, posted, bot=second)
    assert heard == [APPROVE_TEXT.format(id=posted.id)]
    applied_once(world)
    assert {(c.args["channel"], c.args["ts"]) for c in world.updates(posted.id)} == posted.places()


# 7 -------------------------------------------------------------------------------------------------

def test_an_expired_proposal_is_refused(world):
    with world.serve(policy=policy_text(expiry="1s")) as bot:
        posted = world.request(bot)
        time.sleep(1.5)
        heard = approve(world, posted, bot=bot)
    assert len(heard) == 1 and f"proposal #{posted.id} expired at" in heard[0], heard
    nothing_written(world)


def test_an_expired_proposals_messages_say_so(world):
    with world.serve(policy=policy_text(expiry="1s")) as bot:
        posted = world.request(bot)
        time.sleep(1.5)
        approve(world, posted, bot=bot)
    updates = world.updates(posted.id)
    assert {(c.args["channel"], c.args["ts"]) for c in updates} == posted.places()
    assert all("Expired" in shown(c) and buttons(c.args["blocks"], ACTION_APPROVE) == [] for c in updates)


# 8 -------------------------------------------------------------------------------------------------

def test_two_person_rule(world):
    with world.serve(policy=policy_text(two_person=True)) as bot:
        posted = world.request(bot)
        heard = approve(world, posted, bot=bot)
        assert len(heard) == 1 and "a second approver is needed (1 of 2)" in heard[0], heard
        update = latest_update(world, posted.id, ONCALL)
        assert "Waiting for approval" in shown(update) and "approved by <@U0ONCALL1>" in shown(update)
        assert buttons(update.args["blocks"], ACTION_APPROVE)  # still open
        heard = approve(world, posted, bot=bot)  # the same person again counts once
        assert len(heard) == 1 and "(1 of 2)" in heard[0], heard
        assert world.writes() == []
        heard = approve(world, posted, bot=bot, user=GROUPIE)
        assert heard == [APPROVE_TEXT.format(id=posted.id)]
    applied_once(world)
    assert "approved by <@U0ONCALL1>, <@U0GROUPIE>" in shown(latest_update(world, posted.id, TEAM))


# 9 -------------------------------------------------------------------------------------------------

def test_undo_restores_the_nodepool_byte_for_byte_once(world):
    before = world.raw(NODEPOOL_PATH)
    spec_before = json.dumps(json.loads(before)["spec"])
    posted = world.request()
    assert approve(world, posted) == [APPROVE_TEXT.format(id=posted.id)]
    undo = [b["value"] for b in buttons(latest_update(world, posted.id, ONCALL).args["blocks"], ACTION_UNDO)]
    assert len(undo) == 1
    world.sim.reset_requests()
    heard = world.click(None, ACTION_UNDO, undo[0], user=GROUPIE)
    assert heard == [f"Change #{posted.id}: undone: 1 restored"]
    assert len([w for w in world.writes() if not is_dry_run(w)]) == 1
    assert json.dumps(json.loads(world.raw(NODEPOOL_PATH))["spec"]) == spec_before
    update = latest_update(world, posted.id, ONCALL)
    assert "Undone" in shown(update) and "undone by <@U0GROUPIE>" in shown(update)
    assert buttons(update.args["blocks"], ACTION_UNDO) == []
    world.sim.reset_requests()
    again = world.click(None, ACTION_UNDO, undo[0], user=APPROVER)
    assert len(again) == 1 and f"proposal #{posted.id} was already undone by <@{GROUPIE}>" in again[0], again
    assert world.writes() == []


def test_annotating_the_job_writes_each_object_once_and_undo_removes_it(world):
    posted = world.request(kind="annotate-do-not-disrupt")
    heard = approve(world, posted)
    assert heard == [f"Change #{posted.id}: applied: 3 applied"], heard
    applied_once(world, objects=3)  # the PyTorchJob's templates and its two running pods
    for name in PODS:
        pod = world.get(f"/api/v1/namespaces/{NS}/pods/{name}")
        assert pod["metadata"]["annotations"][DO_NOT_DISRUPT] == "true"
    job = world.get(f"/apis/kubeflow.org/v1/namespaces/{NS}/pytorchjobs/{JOB}")
    for replica in ("Master", "Worker"):
        template = job["spec"]["pytorchReplicaSpecs"][replica]["template"]
        assert template["metadata"]["annotations"][DO_NOT_DISRUPT] == "true"
    [undo] = buttons(latest_update(world, posted.id, ONCALL).args["blocks"], ACTION_UNDO)
    assert world.click(None, ACTION_UNDO, undo["value"], user=APPROVER) == [f"Change #{posted.id}: undone: 3 restored"]
    for name in PODS:
        pod = world.get(f"/api/v1/namespaces/{NS}/pods/{name}")
        assert DO_NOT_DISRUPT not in (pod["metadata"].get("annotations") or {})


# 10 ------------------------------------------------------------------------------------------------

def test_reject_then_approve(world):
    posted = world.request()
    heard = world.click(None, ACTION_REJECT, posted_value(posted, ACTION_REJECT), user=APPROVER)
    assert heard == [f"Change #{posted.id}: rejected"]
    updates = world.updates(posted.id)
    assert {(c.args["channel"], c.args["ts"]) for c in updates} == posted.places()
    for call in updates:
        assert "Rejected" in shown(call) and "rejected by <@U0ONCALL1>" in shown(call)
        assert buttons(call.args["blocks"], ACTION_APPROVE) == []
    heard = approve(world, posted, user=GROUPIE)
    assert len(heard) == 1 and f"proposal #{posted.id} was rejected by <@{APPROVER}>" in heard[0], heard
    nothing_written(world)


# 11 ------------------------------------------------------------------------------------------------

def test_a_target_changed_since_the_proposal_stops_the_apply(world):
    posted = world.request()
    world.patch(NODEPOOL_PATH, {"spec": {"disruption": {"consolidateAfter": "5m"}}}, "application/merge-patch+json")
    world.sim.reset_requests()
    heard = approve(world, posted)
    assert len(heard) == 1 and "changed since the proposal" in heard[0] and "request a fresh proposal" in heard[0]
    assert world.writes() == []  # no dry run, no write
    disruption = world.nodepool()["spec"]["disruption"]
    assert disruption["consolidateAfter"] == "5m" and disruption["consolidationPolicy"] == "WhenEmptyOrUnderutilized"
    for call in world.updates(posted.id):
        assert "request a fresh proposal" in shown(call)
    assert {(c.args["channel"], c.args["ts"]) for c in world.updates(posted.id)} == posted.places()
    # What it was planned from is gone for good: the message offers Reject, not Approve.
    assert all(ACTION_APPROVE not in json.dumps(c.args["blocks"]) for c in world.updates(posted.id))
    # Approving the same proposal again (an old copy of the button) stops again.
    again = approve(world, posted, user=GROUPIE)
    assert len(again) == 1 and "changed since the proposal" in again[0]
    assert world.writes() == []


# 12 ------------------------------------------------------------------------------------------------

def test_forged_approve_values_are_refused(world):
    posted = world.request()
    other = world.request()
    unsealed = encode_proposal(posted.id)
    assert world.click(None, ACTION_APPROVE, unsealed, user=APPROVER) == [NOT_OURS]
    # Sealed with gpubot's real key for another proposal and this channel: the seal is valid, the clicker is not.
    forged = Signer(BUTTON_KEY.encode(), ttl=3600).seal(encode_proposal(other.id), action=ACTION_APPROVE,
                                                        conversation=ONCALL)
    heard = world.click(None, ACTION_APPROVE, forged, user=REQUESTER)
    assert len(heard) == 1 and "not an approver" in heard[0], heard
    # A Reject button's value is no Approve, and a value sealed for the team channel is no good here.
    heard = world.click(None, ACTION_APPROVE, posted_value(posted, ACTION_REJECT), user=APPROVER)
    assert heard == [NOT_OURS]
    heard = world.click(None, ACTION_APPROVE, posted_value(posted, ACTION_APPROVE, channel=TEAM), user=APPROVER)
    assert len(heard) == 1 and "another conversation" in heard[0]
    nothing_written(world)
    assert world.updates(posted.id) == [] and world.updates(other.id) == []
