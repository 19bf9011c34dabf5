"""Slack delivers at least once: retries (X-Slack-Retry-Num) and duplicates are acknowledged and acted
on once, on one replica or two sharing the database; with the database away they are still answered.

Each delivery is signed afresh with its own timestamp, as Slack signs a retry, so what stops the
duplicate is the delivery table and not the exact-replay check of the HTTP layer."""
from __future__ import annotations

import json
import logging
import time

from bot.payloads import ACTION_ACKNOWLEDGE
from tests.fakes import payloads
from tests.fakes import workspace as ws
from tests.fakes.signing import FORM, JSON, SlackRequests, sign


def deliver(send: SlackRequests, body: str, *, content_type: str, retry: int | None = None, age: int = 0):
    """``body`` as Slack (re)delivers it: signed now (minus ``age`` seconds), with its retry headers."""
    data = body.encode("utf-8")
    headers = {"Content-Type": content_type, **sign(data, secret=send.secret, timestamp=int(time.time()) - age)}
    if retry is not None:
        headers.update({"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"})
    return send.raw(data, headers)


def _in_thread(slack, ts: str) -> list:
    return [c for c in slack.calls("chat.postMessage") if c.args.get("thread_ts") == ts]


def test_a_retried_event_is_answered_once(slack_bot):
    envelope = json.dumps(payloads.app_mention("<@U0BOT> why is my job pending?", channel="C0T5",
                                               ts="1767225701.000100"))
    replies = [deliver(slack_bot.send, envelope, content_type=JSON, retry=retry, age=age)
               for age, retry in zip((0, 10, 20), (None, 1, 2))]  # apart by more than a clock tick
    assert [r.status for r in replies] == [200, 200, 200]
    slack_bot.slack.wait_for("chat.postMessage", predicate=lambda c: c.args.get("thread_ts") == "1767225701.000100")
    slack_bot.settle()
    [answer] = _in_thread(slack_bot.slack, "1767225701.000100")
    assert "Which job" in answer.args["text"]


def test_a_retried_click_is_acted_on_once_and_a_second_click_again(slack_bot):
    # An unsealed value: each click acted on is told, privately, that gpubot did not send the button.
    first = payloads.block_action(ACTION_ACKNOWLEDGE, "not-sealed", message_ts="1767225702.000100")
    second = payloads.block_action(ACTION_ACKNOWLEDGE, "not-sealed", message_ts="1767225702.000100")
    second["actions"][0]["action_ts"] = "1767225799.000001"  # a genuine second click: its own ts and trigger
    assert second["trigger_id"] != first["trigger_id"]
    for age, payload in ((0, first), (10, first), (0, second)):
        assert deliver(slack_bot.send, payloads.form_payload(payload), content_type=FORM, age=age).status == 200
    slack_bot.settle()
    notes = slack_bot.slack.calls("chat.postEphemeral")
    assert len(notes) == 2, [n.args["text"] for n in notes]
    assert all("not sent by gpubot" in n.args["text"] for n in notes)


def test_a_slash_command_delivered_twice_is_diagnosed_once(slack_bot):
    body = payloads.slash_command("diagnose pod/gpu-pod -n automode-taint", channel_id="C0DEDUP",
                                  response_url=slack_bot.slack.response_url())
    first = deliver(slack_bot.send, body, content_type=FORM)
    again = deliver(slack_bot.send, body, content_type=FORM, age=10)
    assert (first.status, again.status, again.body) == (200, 200, "")
    slack_bot.final_update(contains="scheduling.untolerated_taint")
    slack_bot.settle()
    assert len(_progress(slack_bot.slack, "C0DEDUP")) == 1
    # The same words typed again are a new command (a new trigger_id): answered again.
    slack_bot.command("diagnose pod/gpu-pod -n automode-taint", channel_id="C0DEDUP")
    slack_bot.settle()
    assert len(_progress(slack_bot.slack, "C0DEDUP")) == 2


def _progress(slack, channel: str) -> list:
    """The "Diagnosing ..." messages in ``channel`` (not the incident thread's notes)."""
    return [c for c in slack.calls("chat.postMessage") if c.args["channel"] == channel and not c.args.get("thread_ts")]


def test_two_replicas_sharing_the_database_answer_a_retry_once(seed_sim, db_url, monkeypatch):
    from bot.app import create_app, work_pool
    from bot.http_server import SlackHttpServer
    from bot.settings import load_settings
    from bot.store import make_engine, migrate
    from tests.conftest import SIM_ENV
    from tests.fakes.slack_api import FakeSlack
    from tests.slack.conftest import bot_env

    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    engine = make_engine(db_url)
    migrate.upgrade(engine)
    engine.dispose()
    with FakeSlack() as slack:
        settings = load_settings(bot_env(seed_sim, slack, GPUBOT_DATABASE_URL=db_url))
        apps = [create_app(settings) for _ in range(2)]
        replicas = [SlackHttpServer(app, host="127.0.0.1", port=0).start() for app in apps]
        try:
            one, two = (SlackRequests(f"http://127.0.0.1:{r.port}", secret=ws.SIGNING_SECRET) for r in replicas)
            envelope = json.dumps(payloads.app_mention("<@U0BOT> why is my job pending?", channel="C0T5",
                                                       ts="1767225703.000100"))
            assert deliver(one, envelope, content_type=JSON).status == 200
            assert deliver(two, envelope, content_type=JSON, retry=1, age=1).status == 200
            slack.wait_for("chat.postMessage", predicate=lambda c: c.args.get("thread_ts") == "1767225703.000100")
            assert all(work_pool(app).wait_idle(20) for app in apps)
            assert len(_in_thread(slack, "1767225703.000100")) == 1
        finally:
            for replica in replicas:
                replica.stop()


def test_with_the_database_down_deliveries_are_still_answered(seed_sim, pg_url, monkeypatch, caplog):
    from sqlalchemy.engine import make_url

    from bot.app import create_app
    from bot.http_server import SlackHttpServer
    from bot.settings import load_settings
    from bot.store import make_engine, migrate
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
    caplog.set_level(logging.WARNING, logger="handlers.dedup")
    try:
        with FakeSlack() as slack:
            server = SlackHttpServer(create_app(load_settings(bot_env(seed_sim, slack, GPUBOT_DATABASE_URL=proxied))),
                                     host="127.0.0.1", port=0).start()
            try:
                proxy.down = True
                proxy.cut_open_connections()
                send = SlackRequests(f"http://127.0.0.1:{server.port}", secret=ws.SIGNING_SECRET)
                for channel in ("C0DOWN1", "C0DOWN2"):
                    reply = send.slash_command("diagnose pod/gpu-pod -n automode-taint", channel_id=channel,
                                               response_url=slack.response_url())
                    assert reply.status == 200
                    slack.wait_for("chat.update", timeout=30, predicate=lambda c: c.args["channel"] == channel and
                                   "scheduling.untolerated_taint" in json.dumps(c.args.get("blocks")))
            finally:
                server.stop()
    finally:
        proxy.stop()
    warnings = [r for r in caplog.records if r.name == "handlers.dedup"]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]  # one line for the spell, not one per request
    assert "not deduplicated" in warnings[0].getMessage()
