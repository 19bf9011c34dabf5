"""Slack's limits on the way out: 429 with Retry-After and 5xx are retried for the answer, progress
updates are best effort and paced per message, and a response_url (5 uses in 30 minutes) carries only
"working on it" and the answer."""
from __future__ import annotations

import json
import time

import pytest
from slack_sdk.errors import SlackApiError

from bot.payloads import Signer
from bot.slack_client import Undelivered, make_web_client, with_deadline
from handlers.reply import MIN_PROGRESS_INTERVAL_S, Reply
from tests.fakes import workspace as ws
from tests.fakes.slack_api import FakeSlack

RATE_LIMITED = {"error": "ratelimited", "status": 429, "headers": {"Retry-After": "1"}}


def _reply(slack: FakeSlack, *, deadline: float | None = None, **kwargs) -> Reply:
    client = make_web_client(token=slack.token, base_url=slack.url)
    if deadline is not None:
        client = with_deadline(client, deadline)
    return Reply(client=client, channel="C0TRAIN", signer=Signer(b"k" * 32, ttl=3600), user="U0ALICE", **kwargs)


def _blocks(text: str) -> list[dict]:
    return [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]


def _all_text(calls) -> str:
    return json.dumps([c.args for c in calls])


def test_progress_is_paced_per_message_whatever_the_interval():
    with FakeSlack() as slack:
        reply = _reply(slack)
        reply.post(text="Diagnosing x ...", blocks=_blocks("Diagnosing x ..."))
        deadline = time.monotonic() + 2 * MIN_PROGRESS_INTERVAL_S + 0.5
        while time.monotonic() < deadline:
            reply.progress(text="Diagnosing x ... (step)", blocks=_blocks("step"), every=0.0)
            time.sleep(0.01)
        updates = slack.calls("chat.update")
        assert 2 <= len(updates) <= 3, len(updates)  # hundreds offered
        gaps = [b.time - a.time for a, b in zip(updates, updates[1:])]
        assert all(gap >= MIN_PROGRESS_INTERVAL_S - 0.05 for gap in gaps), gaps


def test_rate_limited_progress_is_dropped_at_once_and_the_answer_waits_out_the_retry_after():
    with FakeSlack() as slack:
        reply = _reply(slack)
        reply.post(text="Diagnosing x ...", blocks=_blocks("Diagnosing x ..."))
        slack.inject("chat.update", error="ratelimited", status=429, headers={"Retry-After": "5"})
        started = time.monotonic()
        reply.progress(text="Diagnosing x ... (step)", blocks=_blocks("step"))  # must not raise or wait 5 s
        assert time.monotonic() - started < 3  # not the 5 s Retry-After (slack for a loaded machine)
        time.sleep(MIN_PROGRESS_INTERVAL_S + 0.1)  # past the pacing, still inside the Retry-After
        reply.progress(text="Diagnosing x ... (step 2)", blocks=_blocks("step 2"))
        assert len(slack.calls("chat.update")) == 1  # the second was not sent inside the Retry-After

        # Slack holds chat.update back for the whole app: the answer waits the rest of the 5 s, then lands.
        reply.update(text="the answer", blocks=_blocks("the answer"))
        answer = slack.calls("chat.update")[-1]
        assert answer.args["text"] == "the answer"
        assert answer.time - slack.calls("chat.update")[0].time >= 4.9
        assert len(slack.calls("chat.update")) == 2


def test_an_answer_that_cannot_be_delivered_is_logged_with_where_it_was_going(caplog):
    with FakeSlack() as slack:
        reply = _reply(slack, deadline=4)
        reply.post(text="Diagnosing x ...", blocks=_blocks("Diagnosing x ..."))
        slack.inject("chat.update", error="internal_error", status=500, times=1000)
        started = time.monotonic()
        with pytest.raises((SlackApiError, Undelivered)):
            reply.update(text="the answer", blocks=_blocks("the answer"))
        assert time.monotonic() - started < 4 + 1  # given up at its deadline
        assert len(slack.calls("chat.update")) >= 3  # retried, backing off
        assert f"channel C0TRAIN message {reply.ts}" in caplog.text


def test_rate_limits_and_a_server_error_during_a_diagnosis_still_deliver_it(slack_bot):
    slack = slack_bot.slack
    slack.inject("chat.postMessage", **RATE_LIMITED)
    slack.inject("chat.update", **RATE_LIMITED, times=3)
    slack.inject("chat.update", error="internal_error", status=500)
    slack_bot.command("why-pending pytorch-dist-job -n t5-fsdp")
    final = slack_bot.final_update(contains="karpenter.provisioning", timeout=30)
    slack_bot.settle()
    posted = [c for c in slack.calls("chat.postMessage") if c.response and c.response.get("ok")]
    first = next(c for c in posted if c.args["text"].startswith("Diagnosing pytorch-dist-job"))
    assert final.args["ts"] == first.response["ts"]
    # The message now holds the answer, not "Diagnosing ...".
    assert not slack.state.messages[("C0TRAIN", final.args["ts"])]["text"].startswith("Diagnosing")
    assert "Something went wrong" not in _all_text(slack.calls())

    updates = [c for c in slack.calls("chat.update") if c.args["ts"] == final.args["ts"]]
    progress = [c for c in updates if c.args["text"].startswith("Diagnosing")]
    gaps = [b.time - a.time for a, b in zip(progress, progress[1:])]
    assert all(gap >= MIN_PROGRESS_INTERVAL_S - 0.05 for gap in gaps), gaps
    assert len(updates) <= len(progress) + 5  # the answer: one try and at most four retries


def test_not_in_channel_uses_the_response_url_for_working_on_it_and_the_answer_only(slack_bot):
    slack = slack_bot.slack
    slack.inject("chat.postMessage", error="not_in_channel")
    slack_bot.command("why-pending pytorch-dist-job -n t5-fsdp")
    answer = slack.wait_for("response_url", timeout=30,
                            predicate=lambda c: "karpenter.provisioning" in json.dumps(c.args.get("blocks")))[0]
    slack_bot.settle()
    uses = slack.calls("response_url")
    assert len(uses) <= 2, [u.args.get("text") for u in uses]
    assert uses[0].args["text"].startswith("Diagnosing pytorch-dist-job")
    assert uses[-1] is answer and answer.args.get("replace_original") in (True, "true")
    assert slack.calls("chat.update") == []
