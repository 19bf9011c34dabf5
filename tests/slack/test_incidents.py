"""Incidents from Slack: recorded with each diagnosis, acknowledged and resolved with buttons, listed,
shown, summarised on App Home; the answer survives a database outage."""
from __future__ import annotations

import json

import pytest

from bot.payloads import ACTION_ACKNOWLEDGE, ACTION_RESOLVE
from tests.slack.conftest import assert_valid_blocks, opened


def _buttons(blocks, action_id):
    return [e for b in blocks if b["type"] == "actions" for e in b["elements"] if e["action_id"] == action_id]


def _diagnose(bot, text, code, channel="C0TRAIN"):
    bot.command(text, channel_id=channel)
    return bot.final_update(contains=code)


def test_incident_lifecycle(slack_bot):
    first = _diagnose(slack_bot, "diagnose pod/llama-3-8b-zonal -n llm-zonal", "karpenter.offering_unavailable_in_zone")
    blocks = json.dumps(first.args["blocks"])
    assert "new incident" in blocks
    [ack] = _buttons(first.args["blocks"], ACTION_ACKNOWLEDGE)
    incident_id = json.loads(opened(ack["value"]))["incident"]

    slack_bot.slack.reset()
    second = _diagnose(slack_bot, "diagnose pod/llama-3-8b-zonal -n llm-zonal", "karpenter.offering_unavailable_in_zone",
                       channel="C0OTHER")
    assert "seen 2 times this week" in json.dumps(second.args["blocks"])
    collected = slack_bot.slack.wait_for("chat.postMessage", predicate=lambda c: c.args.get("thread_ts") == first.args["ts"])
    assert "Diagnosed again by <@U0ALICE>" in collected[0].args["text"]  # the incident's thread collects it
    # Its buttons are sealed for the incident's channel like every other gpubot button.
    assert {b["value"][:3] for b in _buttons(collected[0].args["blocks"], ACTION_RESOLVE)} == {"g1."}

    [ack] = _buttons(second.args["blocks"], ACTION_ACKNOWLEDGE)  # a button works where it was posted
    slack_bot.send.block_action(ACTION_ACKNOWLEDGE, ack["value"], message_ts=second.args["ts"], channel="C0OTHER")
    slack_bot.slack.wait_for("chat.postMessage", predicate=lambda c: "acknowledged by <@U0ALICE>" in c.args["text"])
    [resolve] = _buttons(second.args["blocks"], ACTION_RESOLVE)
    slack_bot.send.block_action(ACTION_RESOLVE, resolve["value"], message_ts=second.args["ts"], channel="C0OTHER")
    form = slack_bot.slack.wait_for("views.open")[0].args["view"]  # Resolve asks what fixed it
    values = {"resolution": {"text": {"type": "plain_text_input", "value": "allowed ap-northeast-2b in the pod's zones"}}}
    slack_bot.send.view_submission(form["callback_id"], values, form["private_metadata"])
    slack_bot.slack.wait_for("chat.postMessage", predicate=lambda c: "resolved by <@U0ALICE>" in c.args["text"])

    slack_bot.slack.reset()
    slack_bot.command(f"incident {incident_id}")
    detail = slack_bot.slack.wait_for("chat.postMessage")[0]
    text = json.dumps(detail.args["blocks"])
    assert "acknowledged" in text and "resolved" in text and "karpenter.offering_unavailable_in_zone" in text
    assert_valid_blocks(detail)

    slack_bot.slack.reset()
    third = _diagnose(slack_bot, "diagnose pod/llama-3-8b-zonal -n llm-zonal", "karpenter.offering_unavailable_in_zone")
    note = json.dumps(third.args["blocks"])
    assert "last resolved" in note and "allowed ap-northeast-2b" in note


def test_list_incidents_and_app_home(slack_bot):
    _diagnose(slack_bot, "diagnose pod/efa-allreduce-0 -n llm-efa", "efa.resource_unavailable")
    slack_bot.slack.reset()
    slack_bot.command("incidents all --since 7d")
    listing = slack_bot.slack.wait_for("chat.postMessage")[0]
    assert "efa-allreduce-0" in json.dumps(listing.args["blocks"])
    assert_valid_blocks(listing)
    slack_bot.send.event({"type": "app_home_opened", "user": "U0ALICE", "channel": "D0ALICE", "tab": "home",
                          "event_ts": "1767225700.000100"})
    published = slack_bot.slack.wait_for("views.publish")[0]
    assert published.args["user_id"] == "U0ALICE"
    assert "efa.resource_unavailable" in json.dumps(published.args["view"])


def test_unknown_incident_and_bad_arguments(slack_bot):
    slack_bot.command("incident 99999")
    note = slack_bot.slack.wait_for("chat.postEphemeral")[0]
    assert "no incident #99999" in note.args["text"]
    status, _, body = slack_bot.command("incidents sometimes")
    assert status == 200 and "open (the default) or all" in json.loads(body)["text"]


def test_diagnosis_is_answered_when_the_database_is_down(seed_sim, pg_url, tmp_path, monkeypatch):
    from sqlalchemy.engine import make_url

    from bot.app import create_app
    from bot.http_server import SlackHttpServer
    from bot.settings import load_settings
    from bot.store import make_engine, migrate
    from tests.fakes import workspace as ws
    from tests.fakes.signing import SlackRequests
    from tests.fakes.slack_api import FakeSlack
    from tests.fakes.tcp_proxy import FlakyProxy
    from tests.slack.conftest import bot_env

    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")
    url = make_url(pg_url)
    proxy = FlakyProxy(url.host, url.port)
    proxied = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    engine = make_engine(proxied)
    migrate.upgrade(engine)
    engine.dispose()
    try:
        with FakeSlack() as slack:
            server = SlackHttpServer(create_app(load_settings(bot_env(seed_sim, slack, GPUBOT_DATABASE_URL=proxied))),
                                     host="127.0.0.1", port=0).start()
            try:
                proxy.down = True
                proxy.cut_open_connections()
                send = SlackRequests(f"http://127.0.0.1:{server.port}", secret=ws.SIGNING_SECRET)
                send.slash_command("diagnose pod/gpu-pod -n automode-taint", response_url=slack.response_url())
                final = slack.wait_for("chat.update", timeout=30,
                                       predicate=lambda c: "scheduling.untolerated_taint" in json.dumps(c.args.get("blocks")))[0]
                assert "Not recorded as an incident" in json.dumps(final.args["blocks"])
            finally:
                server.stop()
    finally:
        proxy.stop()


def test_refuses_to_start_on_a_schema_that_is_behind(seed_sim, tmp_path):
    from bot.app import create_app
    from bot.settings import load_settings
    from bot.store import SchemaBehind
    from tests.fakes.slack_api import FakeSlack
    from tests.slack.conftest import bot_env

    with FakeSlack() as slack, pytest.raises(SchemaBehind) as err:
        create_app(load_settings(bot_env(seed_sim, slack, GPUBOT_DATABASE_URL=f"sqlite:///{tmp_path}/old.db")))
    assert "run `gpubot db upgrade`" in str(err.value)
