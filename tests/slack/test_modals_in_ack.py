"""Forms open in the ack step: a trigger_id lives 3 s from the click or command, so views.open must not
wait for the lazy pool. Shown with the pool stalled: the form is open before the request is answered."""
from __future__ import annotations

import contextlib
import json
import threading

from bot.app import work_pool
from bot.payloads import ACTION_RESOLVE
from tests.slack.conftest import Bot


@contextlib.contextmanager
def stalled(bot: Bot):
    """Every worker of the lazy pool busy until the block ends."""
    pool, gate = work_pool(bot.app), threading.Event()
    started = threading.Barrier(pool._max_workers + 1)

    def hold() -> None:
        started.wait()
        gate.wait(30)

    for _ in range(pool._max_workers):
        pool.submit(hold)
    started.wait(10)
    try:
        yield
    finally:
        gate.set()


def test_the_explain_form_opens_before_the_command_is_answered(slack_bot):
    with stalled(slack_bot):
        reply = slack_bot.command("explain", trigger_id="13345224609.738474920.ack0000000000000001")
        opened = slack_bot.slack.calls("views.open")  # read the moment the answer arrived: no waiting
    assert reply.status == 200
    assert [c.args["trigger_id"] for c in opened] == ["13345224609.738474920.ack0000000000000001"]
    assert opened[0].args["view"]["callback_id"]


def test_the_resolve_form_opens_before_the_click_is_answered(slack_bot):
    slack_bot.command("diagnose pod/gpu-pod -n automode-taint", channel_id="C0MODAL")
    final = slack_bot.final_update(contains="scheduling.untolerated_taint")
    [button] = [e for b in final.args["blocks"] if b["type"] == "actions" for e in b["elements"]
                if e["action_id"] == ACTION_RESOLVE]
    slack_bot.settle()
    slack_bot.slack.reset()
    with stalled(slack_bot):
        reply = slack_bot.send.block_action(ACTION_RESOLVE, button["value"], message_ts=final.args["ts"],
                                            channel="C0MODAL")
        opened = slack_bot.slack.calls("views.open")
    assert reply.status == 200
    [call] = opened
    assert "gpu-pod" in json.dumps(call.args["view"])
    assert call.args["view"]["private_metadata"].startswith("g1.")  # sealed, as before


def test_a_refused_resolve_is_told_privately_without_a_form(slack_bot):
    reply = slack_bot.send.block_action(ACTION_RESOLVE, "not-sealed", message_ts="1767225704.000100")
    assert reply.status == 200
    note = slack_bot.slack.wait_for("chat.postEphemeral")[0]
    assert "not sent by gpubot" in note.args["text"]
    slack_bot.settle()
    assert slack_bot.slack.calls("views.open") == []
