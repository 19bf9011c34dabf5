"""Charts uploaded with Slack's external flow and links to incident threads: the fake Slack's
files.getUploadURLExternal / upload URL / files.completeUploadExternal / chat.getPermalink behave as
Slack documents them, slack_sdk's files_upload_v2 runs against them, and /gpu nodes, /gpu nodepools,
/gpu incidents and App Home use them (the text answer stays when an upload cannot be made)."""
from __future__ import annotations

import json
import urllib.request

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.permalinks import Permalinks
from bot.uploads import Chart, PrivateCharts, upload_chart
from tests.fakes import workspace as ws
from tests.fakes.slack_api import DEFAULT_SCOPES, FakeSlack
from tests.fakes.slack_limits import TIERS
from tests.slack.conftest import assert_valid_blocks

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
CHART = Chart(png=PNG, filename="gpu-nodepools-prod.png", title="GPU NodePools", alt_text="bars")


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


def _client(slack: FakeSlack) -> WebClient:
    return WebClient(token=slack.token, base_url=slack.url)


def _post(url: str, data: bytes) -> int:
    with urllib.request.urlopen(urllib.request.Request(url, data=data, method="POST"), timeout=10) as answer:
        return answer.status


# -- the fake, as Slack documents it ---------------------------------------------------------------

def test_files_upload_v2_runs_the_three_steps_into_a_thread(slack):
    client = _client(slack)
    parent = client.chat_postMessage(channel="C0TRAIN", text="GPU NodePools")["ts"]
    done = client.files_upload_v2(content=PNG, filename="chart.png", title="Chart", channel="C0TRAIN",
                                  thread_ts=parent, initial_comment="the chart")
    [ticket] = slack.calls("files.getUploadURLExternal")
    assert ticket.args["filename"] == "chart.png" and int(ticket.args["length"]) == len(PNG)
    [upload] = slack.calls("upload")
    assert upload.args["length"] == len(PNG) and upload.status == 200
    [complete] = slack.calls("files.completeUploadExternal")
    assert json.loads(complete.args["files"]) == [{"id": ticket.response["file_id"], "title": "Chart"}]
    assert complete.args["channel_id"] == "C0TRAIN" and complete.args["thread_ts"] == parent
    file = done["file"]
    assert file["id"] == ticket.response["file_id"] and file["size"] == len(PNG)
    [share] = file["shares"]["public"]["C0TRAIN"]
    assert share["thread_ts"] == parent
    assert slack.state.files[file["id"]].data == PNG


def test_completing_an_upload_whose_bytes_never_arrived_fails(slack):
    client = _client(slack)
    ticket = client.files_getUploadURLExternal(filename="chart.png", length=len(PNG))
    with pytest.raises(SlackApiError) as missing:
        client.files_completeUploadExternal(files=[{"id": ticket["file_id"], "title": "x"}], channel_id="C0TRAIN")
    assert missing.value.response["error"] == "file_not_found"
    assert _post(ticket["upload_url"], PNG[:-1]) == 200  # fewer bytes than announced
    with pytest.raises(SlackApiError) as short:
        client.files_completeUploadExternal(files=[{"id": ticket["file_id"], "title": "x"}], channel_id="C0TRAIN")
    assert short.value.response["error"] == "file_not_found"
    assert _post(ticket["upload_url"], PNG) == 200
    client.files_completeUploadExternal(files=[{"id": ticket["file_id"], "title": "x"}], channel_id="C0TRAIN")


@pytest.mark.parametrize("args, error", [({"filename": "c.png", "length": 0}, "missing_argument"),
                                         ({"filename": "", "length": 10}, "invalid_arguments"),
                                         ({"filename": "c.png", "length": 10, "alt_txt": "x" * 1001}, "alt_txt_too_large")])
def test_upload_url_arguments_are_checked(slack, args, error):
    with pytest.raises(SlackApiError) as refused:
        _client(slack).api_call("files.getUploadURLExternal", params=args)
    assert refused.value.response["error"] == error


def test_without_files_write_slack_names_the_missing_scope():
    with FakeSlack(scopes=DEFAULT_SCOPES - {"files:write"}) as slack:
        with pytest.raises(SlackApiError) as refused:
            _client(slack).files_upload_v2(content=PNG, filename="chart.png", channel="C0TRAIN")
    assert refused.value.response["error"] == "missing_scope"
    assert refused.value.response["needed"] == "files:write"


def test_upload_url_methods_are_tier_4():
    with FakeSlack(enforce_limits=True) as slack:
        client = WebClient(token=slack.token, base_url=slack.url, retry_handlers=[])
        for _ in range(TIERS[4]):
            client.files_getUploadURLExternal(filename="c.png", length=3)
        with pytest.raises(SlackApiError) as limited:
            client.files_getUploadURLExternal(filename="c.png", length=3)
    assert limited.value.response.status_code == 429 and limited.value.response.headers["Retry-After"]


def test_get_permalink_names_the_workspace_channel_and_ts(slack):
    client = _client(slack)
    parent = client.chat_postMessage(channel="C0TRAIN", text="root")["ts"]
    reply = client.chat_postMessage(channel="C0TRAIN", text="reply", thread_ts=parent)["ts"]
    link = client.chat_getPermalink(channel="C0TRAIN", message_ts=parent)
    assert link["permalink"] == f"{ws.TEAM_URL}archives/C0TRAIN/p{parent.replace('.', '')}"
    threaded = client.chat_getPermalink(channel="C0TRAIN", message_ts=reply)["permalink"]
    assert threaded.endswith(f"p{reply.replace('.', '')}?thread_ts={parent}&cid=C0TRAIN")
    for channel, ts, error in (("C0TRAIN", "1.000001", "message_not_found"), ("bogus", parent, "channel_not_found")):
        with pytest.raises(SlackApiError) as refused:
            client.chat_getPermalink(channel=channel, message_ts=ts)
        assert refused.value.response["error"] == error


def test_an_image_block_may_show_only_a_completed_file(slack):
    client = _client(slack)
    view = {"type": "home", "blocks": [{"type": "image", "slack_file": {"id": "F0NOTTHERE"}, "alt_text": "x"}]}
    with pytest.raises(SlackApiError) as refused:
        client.views_publish(user_id="U0ALICE", view=view)
    assert refused.value.response["error"] == "invalid_arguments"
    file_id = upload_chart(client, CHART)  # no channel: private to the bot, still usable in blocks
    view["blocks"][0]["slack_file"] = {"id": file_id}
    assert client.views_publish(user_id="U0ALICE", view=view)["ok"]


# -- gpubot's side -----------------------------------------------------------------------------------

def test_upload_chart_gives_none_and_logs_what_to_do_without_the_scope(caplog):
    with FakeSlack(scopes=DEFAULT_SCOPES - {"files:write"}) as slack:
        assert upload_chart(_client(slack), CHART, channel="C0TRAIN") is None
    assert "files:write" in caplog.text and "reinstall" in caplog.text


def test_a_private_chart_is_uploaded_once_per_picture(slack):
    client, cache = _client(slack), PrivateCharts()
    first = cache.file_id(client, CHART)
    assert cache.file_id(client, CHART) == first
    other = cache.file_id(client, Chart(png=PNG + b"x", filename="c.png", title="t", alt_text="a"))
    assert other != first and len(slack.calls("files.completeUploadExternal")) == 2


def test_permalinks_are_asked_once_and_a_deleted_message_has_none(slack):
    client, links = _client(slack), Permalinks()
    ts = client.chat_postMessage(channel="C0TRAIN", text="root")["ts"]
    assert links.url(client, channel="C0TRAIN", ts=ts) == links.url(client, channel="C0TRAIN", ts=ts)
    assert links.url(client, channel="C0TRAIN", ts="1.000009") is None
    assert links.url(client, channel="C0TRAIN", ts="1.000009") is None
    assert len(slack.calls("chat.getPermalink")) == 2


def test_a_failed_permalink_is_asked_again(slack):
    client, links = _client(slack), Permalinks()
    ts = client.chat_postMessage(channel="C0TRAIN", text="root")["ts"]
    slack.inject("chat.getPermalink", error="internal_error")
    assert links.url(client, channel="C0TRAIN", ts=ts) is None
    assert links.url(client, channel="C0TRAIN", ts=ts).endswith(ts.replace(".", ""))


# -- /gpu nodes, /gpu nodepools, /gpu incidents, App Home ------------------------------------------

@pytest.mark.parametrize("command, header", [("nodepools", "GPU NodePools"), ("nodes", "GPU nodes")])
def test_fleet_answers_carry_their_chart_in_the_thread(slack_bot, command, header):
    slack_bot.command(command)
    answer = slack_bot.slack.wait_for("chat.postMessage", predicate=lambda c: c.args["text"].startswith(header))[0]
    assert_valid_blocks(answer)
    [complete] = slack_bot.slack.wait_for("files.completeUploadExternal")
    assert complete.args["channel_id"] == answer.response["channel"]
    assert complete.args["thread_ts"] == answer.response["ts"]
    [entry] = json.loads(complete.args["files"])
    assert slack_bot.slack.state.files[entry["id"]].data.startswith(b"\x89PNG")
    assert complete.response["ok"]


def test_without_files_write_the_text_answer_still_posts(slack_bot):
    slack_bot.slack.state.scopes = DEFAULT_SCOPES - {"files:write"}
    try:
        slack_bot.command("nodepools")
        slack_bot.settle()
    finally:
        slack_bot.slack.state.scopes = DEFAULT_SCOPES
    [answer] = slack_bot.slack.calls("chat.postMessage")
    assert "gpu-training-32" in json.dumps(answer.args["blocks"])
    [ticket] = slack_bot.slack.calls("files.getUploadURLExternal")
    assert ticket.response["error"] == "missing_scope"
    assert slack_bot.slack.calls("files.completeUploadExternal") == []


def test_incidents_link_to_their_threads_in_the_list_and_on_app_home(slack_bot):
    slack_bot.command("diagnose pod/efa-allreduce-0 -n llm-efa", channel_id="C0LINKS")
    diagnosis = slack_bot.final_update(contains="efa.resource_unavailable")
    link = f"{ws.TEAM_URL}archives/C0LINKS/p{diagnosis.args['ts'].replace('.', '')}"
    slack_bot.settle()
    slack_bot.command("incidents all --since 7d")
    listing = slack_bot.slack.wait_for("chat.postMessage", predicate=lambda c: "incidents" in c.args["text"])[0]
    assert f"<{link}|#" in json.dumps(listing.args["blocks"])
    assert_valid_blocks(listing)

    slack_bot.send.event({"type": "app_home_opened", "user": "U0ALICE", "channel": "D0ALICE", "tab": "home",
                          "event_ts": "1767225700.000200"})
    published = slack_bot.slack.wait_for("views.publish")[0]
    assert published.response["ok"], published.response
    blocks = published.args["view"]["blocks"]
    assert f"<{link}|#" in json.dumps(blocks)
    [chart] = [b for b in blocks if b["type"] == "image"]
    assert slack_bot.slack.state.files[chart["slack_file"]["id"]].completed
