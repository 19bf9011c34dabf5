"""Chart uploads and thread links pass the pacer: the bot's limits table agrees with Slack's published
tiers (as the fake Slack, written from Slack's pages, enforces them), and an upload through the bot's
client takes a slot for files.getUploadURLExternal and files.completeUploadExternal, so a chart waits for
Slack's limit instead of being answered 429."""
from __future__ import annotations

import pytest

from bot.delivery.limits import METHOD_LIMITS, TIER_PER_MINUTE
from bot.delivery.pacer import Pacer
from bot.slack_client import make_web_client, paced_copy
from bot.uploads import Chart, upload_chart
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_limits import METHOD_TIER, TIERS

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
CHART = Chart(png=PNG, filename="gpu-nodes-prod.png", title="GPU nodes", alt_text="bars")
UPLOAD_METHODS = ("files.getUploadURLExternal", "files.completeUploadExternal")


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


def test_every_tiered_method_the_fake_enforces_is_paced_at_that_tier():
    assert TIER_PER_MINUTE == TIERS
    for method, tier in METHOD_TIER.items():
        if method == "views.push":  # gpubot never pushes a view
            continue
        assert method in METHOD_LIMITS, f"{method} is not paced"
        assert METHOD_LIMITS[method].per_window == TIERS[tier], method
    assert "chat.getPermalink" in METHOD_LIMITS  # special tier: paced at the Tier 4 floor


def test_an_upload_takes_a_pacer_slot_for_each_web_api_step(slack):
    # This process's share of the limits leaves one call of each files.* method per minute.
    pacer = Pacer(share=1 / TIERS[4])
    client = make_web_client(token=slack.token, base_url=slack.url, pacer=pacer)
    assert upload_chart(client, CHART, channel="C0TRAIN") is not None
    assert [len(slack.calls(m)) for m in UPLOAD_METHODS] == [1, 1]
    # The next upload finds files.getUploadURLExternal's window full: with a short deadline it is not
    # sent at all (the text answer stands alone), rather than sent and refused by Slack.
    hurried = paced_copy(client, pacer, deadline_s=0.5)
    assert upload_chart(hurried, CHART, channel="C0TRAIN") is None
    assert [len(slack.calls(m)) for m in UPLOAD_METHODS] == [1, 1]
    assert not slack.calls("upload")[1:]  # no bytes sent for the upload that waited
