"""Buttons carry typed payloads; a click is validated like any other input."""
from __future__ import annotations

import json

from bot.payloads import ACTION_APPROVAL, ACTION_APPROVE, ACTION_EVIDENCE, ACTION_REJECT, ACTION_RERUN
from tests.slack.conftest import opened


def _buttons(blocks):
    return [e for b in blocks if b["type"] == "actions" for e in b["elements"]]


def _diagnose(bot, text, code):
    bot.command(text)
    final = bot.final_update(contains=code)
    return final, _buttons(final.args["blocks"])


def test_rerun(slack_bot):
    final, buttons = _diagnose(slack_bot, "diagnose pod/gpu-pod -n automode-taint", "scheduling.untolerated_taint")
    rerun = next(b for b in buttons if b["action_id"] == ACTION_RERUN)
    slack_bot.slack.reset()
    slack_bot.send.block_action(ACTION_RERUN, rerun["value"], message_ts=final.args["ts"])
    again = slack_bot.final_update(contains="scheduling.untolerated_taint")
    assert slack_bot.slack.calls("chat.postMessage")[0].args["thread_ts"] == final.args["ts"]
    assert again.args["ts"] != final.args["ts"]


def test_show_evidence(slack_bot):
    final, buttons = _diagnose(slack_bot, "diagnose pytorchjob/llama-3-8b-fsdp -n llm-consolidation", "karpenter.disruption")
    evidence = next(b for b in buttons if b["action_id"] == ACTION_EVIDENCE)
    slack_bot.slack.reset()
    slack_bot.send.block_action(ACTION_EVIDENCE, evidence["value"], message_ts=final.args["ts"])
    posted = slack_bot.slack.wait_for("chat.postMessage")[0]
    assert posted.args["thread_ts"] == final.args["ts"]
    assert "Disrupting Node: Underutilized" in json.dumps(posted.args["blocks"])


def test_request_approval_shows_the_exact_change(slack_bot):
    final, buttons = _diagnose(slack_bot, "diagnose pytorchjob/llama-3-8b-fsdp -n llm-consolidation", "karpenter.disruption")
    approvals = [b for b in buttons if b["action_id"] == ACTION_APPROVAL]
    kinds = {json.loads(opened(b["value"]))["r"]["kind"] for b in approvals}
    assert kinds == {"annotate-do-not-disrupt", "nodepool-consolidation"}
    slack_bot.slack.reset()
    consolidation = next(b for b in approvals if json.loads(opened(b["value"]))["r"]["kind"] == "nodepool-consolidation")
    slack_bot.send.block_action(ACTION_APPROVAL, consolidation["value"], message_ts=final.args["ts"])
    # A proposal is recorded and posted in the incident's thread with the exact diff.
    posted = slack_bot.slack.wait_for("chat.postMessage", predicate=lambda c: "Change #" in c.args["text"])[0]
    assert posted.args["thread_ts"] is not None
    blocks = json.dumps(posted.args["blocks"])
    assert "WhenEmpty" in blocks and "<@U0ALICE>" in blocks
    assert {b["action_id"] for b in _buttons(posted.args["blocks"])} == {ACTION_APPROVE, ACTION_REJECT}
    note = slack_bot.slack.wait_for("chat.postEphemeral")[0]
    assert note.args["user"] == "U0ALICE" and "Approval requested" in note.args["text"]


def test_forged_button_values_are_refused(slack_bot):
    forged = [
        (ACTION_RERUN, json.dumps({"t": {"k": "pod", "n": "x;rm -rf /", "ns": "default", "c": None}})),
        (ACTION_RERUN, "not json"),
        (ACTION_APPROVAL, json.dumps({"r": {"kind": "delete-namespace", "target": "x", "params": {}},
                                      "t": {"k": "pod", "n": "x", "ns": "d", "c": None}, "code": "x"})),
        (ACTION_EVIDENCE, json.dumps({"t": {"k": "pod", "n": "x", "ns": "d", "c": None}, "i": -1, "code": "x"})),
    ]
    for action_id, value in forged:
        status, _, _ = slack_bot.send.block_action(action_id, value, message_ts="1767225699.000900")
        assert status == 200
    notes = slack_bot.slack.wait_for("chat.postEphemeral", count=len(forged),
                                     predicate=lambda c: c.args.get("thread_ts") == "1767225699.000900")
    assert all("not sent by gpubot" in n.args["text"] for n in notes)
    # Nothing acted on them: no message in the clicked message's thread.
    assert [c for c in slack_bot.slack.calls("chat.postMessage") if c.args.get("thread_ts") == "1767225699.000900"] == []
