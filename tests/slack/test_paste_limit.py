"""A paste longer than Slack ever delivers is refused in one line, before anything reads it."""
from __future__ import annotations

import json

from bot.textinput import SLACK_PASTE_MAX_CHARS

# A real problem line, so an explanation (had it run) would name training.memory_pressure.
_LINE = "[2025-12-31 17:08:24,236] [WARNING] [stage3.py:2236:step] 1 pytorch allocator cache flushes since last step\n"


def _paste(chars: int) -> str:
    """Exactly ``chars`` characters of log lines (several lines, so a direct message reads as a log)."""
    text = (_LINE * (chars // len(_LINE) + 1))[:chars]
    return text[:-1] + "." if text.endswith("\n") else text


def _assert_refused(call, chars: int) -> None:
    text = call.args["text"]
    assert "\n" not in text
    assert f"{chars:,} characters" in text and f"at most {SLACK_PASTE_MAX_CHARS:,}" in text
    assert "training.memory_pressure" not in json.dumps(call.args.get("blocks"))


def test_an_oversized_direct_message_paste_gets_one_line_and_no_explanation(slack_bot):
    paste = _paste(SLACK_PASTE_MAX_CHARS + 1)
    slack_bot.send.direct_message(paste, ts="1767225690.000100")
    [answer] = slack_bot.slack.wait_for("chat.postEphemeral")
    _assert_refused(answer, len(paste))
    slack_bot.settle()
    assert len(slack_bot.slack.calls("chat.postEphemeral")) == 1
    assert slack_bot.slack.calls("chat.postMessage") == [] and slack_bot.slack.calls("chat.update") == []


def test_a_paste_at_the_limit_is_explained(slack_bot):
    paste = _paste(SLACK_PASTE_MAX_CHARS)
    slack_bot.send.direct_message(paste, ts="1767225691.000100")
    answer = slack_bot.slack.wait_for("chat.postMessage")[0]
    assert "training.memory_pressure" in json.dumps(answer.args["blocks"])


def test_an_oversized_form_submission_gets_one_line_and_no_explanation(slack_bot):
    slack_bot.command("explain", trigger_id="13345224609.738474920.8088930838d88f008e1")
    view = slack_bot.slack.wait_for("views.open")[0].args["view"]
    paste = _paste(SLACK_PASTE_MAX_CHARS + 500)
    values = {"log": {"text": {"type": "plain_text_input", "value": paste}}}
    status, _, _ = slack_bot.send.view_submission(view["callback_id"], values, view["private_metadata"])
    assert status == 200
    [answer] = slack_bot.slack.wait_for("chat.postEphemeral")
    _assert_refused(answer, len(paste))
