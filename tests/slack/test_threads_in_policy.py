"""What one conversation may learn of another, through the real app over signed HTTP, the fake Slack
Web API and the simulated cluster: an approval request is posted only where the channel's own grant
opens its target; a direct message never becomes an incident's thread nor is told of in one; a
database that is down is "the incident store is unavailable", never its host, port or driver text."""
from __future__ import annotations

import json

import pytest

from bot.payloads import ACTION_APPROVAL
from bot.store.tx import STORE_UNAVAILABLE
from tests.slack.approval_world import (  # noqa: F401 - fixtures
    APPROVER, GROUP, NS, ONCALL, PROPOSAL, REQUESTER, TEAM, approval_world, h100_sim, world,
)

REMEDIATIONS = """\
remediations:
  expiry: 30m
  annotate-do-not-disrupt: {namespaces: ["foundation-*"]}
  nodepool-consolidation: {nodepools: ["gpu-*"]}
"""
# The team channel's own grant no longer opens the job's namespace; its requester's does.
NARROW = f"""\
channels:
  {TEAM}:   {{clusters: ["*"], namespaces: [other-team]}}
  {ONCALL}: {{clusters: ["*"], namespaces: ["*"]}}
users:
  {REQUESTER}: {{clusters: ["*"], namespaces: [{NS}]}}
"""


def test_an_approval_request_is_not_posted_in_a_thread_whose_channel_may_not_read_it(world):
    policy = NARROW + f"approvers: {{users: [{APPROVER}], usergroups: [{GROUP}], channel: {ONCALL}}}\n" + REMEDIATIONS
    with world.serve(policy=policy) as bot:
        diagnosis = world.diagnose(bot)  # in the team channel, opened by the requester's own grant
        posted = world.request(bot, diagnosis=diagnosis)
        assert set(posted.posts) == {ONCALL}  # the approvers' channel only: not the incident's thread in TEAM
        assert not [c for c in world.slack.calls("chat.postMessage")
                    if c.args["channel"] == TEAM and PROPOSAL.match(c.args.get("text") or "")]


def test_with_nowhere_that_may_read_it_the_request_is_refused_and_nothing_recorded(world):
    policy = NARROW + f"approvers: {{users: [{APPROVER}]}}\n" + REMEDIATIONS  # no approvers' channel
    with world.serve(policy=policy) as bot:
        diagnosis = world.diagnose(bot)
        proposals_before = _proposals(world)
        before = len(world.slack.calls("chat.postEphemeral"))
        status, _, _ = bot.send.block_action(ACTION_APPROVAL, diagnosis.requests["nodepool-consolidation"],
                                             channel=TEAM, user=REQUESTER, message_ts=diagnosis.ts)
        assert status == 200
        bot.settle()
        told = [c.args["text"] for c in world.slack.calls("chat.postEphemeral")[before:]
                if c.args["user"] == REQUESTER]
        assert len(told) == 1 and "no channel set up to show approval requests may read" in told[0], told
        assert "\n" not in told[0]
        assert not [c for c in world.slack.calls("chat.postMessage") if PROPOSAL.match(c.args.get("text") or "")]
        assert _proposals(world) == proposals_before  # refused before anything was recorded


def _proposals(world) -> int:
    from bot.store import make_engine
    from bot.store.proposals import ProposalStore

    engine = make_engine(world.database)
    try:
        return len(ProposalStore(engine).list(limit=1000))
    finally:
        engine.dispose()


DM, CHANNEL, OTHER = "D0ALICE", "C0TRAIN", "C0OTHER"
TARGET, CODE = "diagnose pod/efa-allreduce-0 -n llm-efa", "efa.resource_unavailable"


def _answer(bot, channel: str):
    def final(c) -> bool:
        return c.args["channel"] == channel and CODE in json.dumps(c.args.get("blocks"))

    before = len([c for c in bot.slack.calls("chat.update") if final(c)])
    bot.command(TARGET, channel_id=channel)
    calls = bot.slack.wait_for("chat.update", count=before + 1, timeout=30, predicate=final)
    bot.settle()
    return calls[-1]


def test_a_direct_message_never_becomes_an_incident_thread_nor_is_told_of_in_one(slack_bot):
    _answer(slack_bot, DM)  # first asked privately
    public = _answer(slack_bot, CHANNEL)  # then in a channel: its answer is the incident's thread
    _answer(slack_bot, DM)  # and privately again
    _answer(slack_bot, OTHER)  # a channel that diagnoses it again is told of in the thread (the control)
    posts = slack_bot.slack.calls("chat.postMessage")
    in_thread = [c for c in posts if c.args.get("thread_ts") == public.args["ts"] and c.args["channel"] == CHANNEL]
    assert len(in_thread) == 1 and f"<#{OTHER}>" in in_thread[0].args["text"], [c.args["text"] for c in in_thread]
    # Nothing outside the DM tells of it: no note, no link, no "asked in a DM".
    outside = [json.dumps(c.args) for c in posts + slack_bot.slack.calls("chat.update") if c.args["channel"] != DM]
    assert not [s for s in outside if DM in s]
    # And nothing of the channels reaches the DM as a thread note.
    assert not [c for c in posts if c.args["channel"] == DM and "Diagnosed again" in (c.args.get("text") or "")]


def test_a_database_that_is_down_is_one_line_without_its_host(seed_sim, pg_url, tmp_path, monkeypatch):
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
    secrets = ("127.0.0.1", f"{proxy.port}", "psycopg", "OperationalError", "Connection refused", "connection")
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
                send.event({"type": "app_home_opened", "user": "U0ALICE", "channel": "D0ALICE", "tab": "home",
                            "event_ts": "1767225700.000100"})
                home = slack.wait_for("views.publish", timeout=30)[0]
                for shown in (json.dumps(final.args["blocks"]), json.dumps(home.args["view"])):
                    assert STORE_UNAVAILABLE in shown
                    leaked = [s for s in secrets if s in shown.replace(STORE_UNAVAILABLE, "")]
                    assert not leaked, (leaked, shown[:600])
            finally:
                server.stop()
    finally:
        proxy.stop()


def test_a_database_that_refuses_gpubot_is_unavailable_not_a_driver_error(pg_url, caplog):
    from sqlalchemy.engine import make_url

    from bot.store import IncidentStore, StoreUnavailable, make_engine

    missing = make_url(pg_url).set(database="gpubot_no_such_database").render_as_string(hide_password=False)
    engine = make_engine(missing)
    try:
        with pytest.raises(StoreUnavailable) as err:
            IncidentStore(engine).list(status="open")
    finally:
        engine.dispose()
    assert str(err.value) == STORE_UNAVAILABLE
    assert "gpubot_no_such_database" in caplog.text  # the details are in gpubot's log, for its operators
