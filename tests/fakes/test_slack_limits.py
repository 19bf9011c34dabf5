"""The fake Slack enforces Slack's published limits, so the bot's tests meet them as production does."""
from __future__ import annotations

import time

import pytest
import requests
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from tests.fakes.payloads import new_trigger_id
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_limits import SlackLimits, Triggers

MODAL = {"type": "modal", "title": {"type": "plain_text", "text": "x"},
         "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "x"}}]}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_tier_3_refuses_the_51st_call_in_a_minute_with_retry_after():
    clock = Clock()
    limits = SlackLimits(clock=clock)
    assert all(limits.check("chat.update", {"channel": "C1"}) is None for _ in range(50))
    clock.now = 20.0
    assert limits.check("chat.update", {"channel": "C2"}) == 40  # the first of the 50 ages out at 60 s
    clock.now = 60.0
    assert limits.check("chat.update", {"channel": "C2"}) is None
    assert [r.method for r in limits.refusals] == ["chat.update"]


def test_posts_are_limited_per_channel_and_per_workspace():
    clock = Clock()
    limits = SlackLimits(clock=clock)
    assert limits.check("chat.postMessage", {"channel": "C1"}) is None
    assert limits.check("chat.postMessage", {"channel": "C1"}) == 1
    assert limits.check("chat.postMessage", {"channel": "C2"}) is None
    for i in range(298):
        assert limits.check("chat.postMessage", {"channel": f"D{i}"}) is None
    assert limits.check("chat.postMessage", {"channel": "C3"}) == 60  # 300 in the minute


def test_unlisted_methods_are_not_limited():
    limits = SlackLimits(clock=Clock())
    assert all(limits.check("auth.test", {}) is None for _ in range(1000))


def test_the_fake_answers_429_with_retry_after_over_http():
    with FakeSlack(enforce_limits=True) as slack:
        client = WebClient(token=slack.token, base_url=slack.url)
        client.chat_postMessage(channel="C0TRAIN", text="one")
        with pytest.raises(SlackApiError) as refused:
            client.chat_postMessage(channel="C0TRAIN", text="two")
        assert refused.value.response.status_code == 429
        assert refused.value.response.headers.get("Retry-After") in ("1", ["1"])
        assert len(slack.limits.refusals) == 1


def test_a_trigger_id_opens_one_modal_within_three_seconds():
    clock = Clock()
    triggers = Triggers(clock=clock)
    fresh, stale = triggers.issue("1.1.a"), triggers.issue("2.2.b")
    assert triggers.use(fresh) is None
    assert triggers.use(fresh) == "exchanged_trigger_id"
    clock.now = 3.5
    assert triggers.use(stale) == "expired_trigger_id"
    assert triggers.use("9.9.z") == "invalid_trigger_id"


def test_views_open_refuses_an_expired_trigger_over_http():
    with FakeSlack() as slack:
        client = WebClient(token=slack.token, base_url=slack.url)
        trigger = new_trigger_id()
        time.sleep(3.2)
        with pytest.raises(SlackApiError) as refused:
            client.views_open(trigger_id=trigger, view=MODAL)
        assert refused.value.response["error"] == "expired_trigger_id"
        assert client.views_open(trigger_id=new_trigger_id(), view=MODAL)["ok"]


def test_a_response_url_takes_five_uses_and_refuses_the_sixth():
    with FakeSlack() as slack:
        url = slack.response_url()
        answers = [requests.post(url, json={"text": f"use {i}"}, timeout=5) for i in range(6)]
        assert [a.status_code for a in answers] == [200] * 5 + [404]
        assert answers[-1].text == "used_url"
        assert slack.response_url() != url  # each command gets its own
