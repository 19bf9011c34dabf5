"""@gpubot mentions, direct messages and logs pasted in the bot's threads."""
from __future__ import annotations

import json

from tests.slack.conftest import assert_valid_blocks


def test_mention_is_answered_in_a_thread(slack_bot):
    slack_bot.send.app_mention("<@U0BOT> why is my job pytorch-dist-job pending?", ts="1767225601.000100")
    first = slack_bot.slack.wait_for("chat.postMessage")[0]
    assert first.args["thread_ts"] == "1767225601.000100"
    final = slack_bot.final_update(contains="karpenter.provisioning")
    assert final.args["ts"] == first.response["ts"]
    assert_valid_blocks(final)


def test_mention_without_a_job_asks_which_one(slack_bot):
    slack_bot.send.app_mention("<@U0BOT> why is my job pending?", channel="C0T5", ts="1767225602.000100")
    answer = slack_bot.slack.wait_for("chat.postMessage")[0]
    assert "Which job" in answer.args["text"] and "pytorch-dist-job" in answer.args["text"]


def test_unknown_job_in_a_thread_says_so_there(slack_bot):
    slack_bot.send.app_mention("<@U0BOT> what killed pytorch-dist-jbo?", channel="C0T5", ts="1767225603.000100")
    update = slack_bot.slack.wait_for("chat.update", predicate=lambda c: "Did you mean" in c.args["text"])[0]
    assert "pytorch-dist-job" in update.args["text"]


def test_direct_message_question(slack_bot):
    slack_bot.send.direct_message("what killed llama-3-8b-node-0-0 in namespace llm-train?", ts="1767225604.000100")
    final = slack_bot.final_update(contains="nccl.peer_unresponsive")
    assert final.args["channel"] == "D0ALICE"


def test_a_log_pasted_in_the_bots_thread_is_explained(slack_bot):
    slack_bot.send.app_mention("<@U0BOT> diagnose pod/gpu-pod -n automode-taint", ts="1767225605.000100")
    slack_bot.final_update(contains="scheduling.untolerated_taint")
    slack_bot.slack.reset()
    log = "```\n[rank0]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\nNET/OFI Request 0x7f completed with error. RC: 103. Error: 4126 (Unresponsive receiver (reachable by EFA device but handshake failed) My EFA addr: x)\n```"
    slack_bot.send.thread_message(log, thread_ts="1767225605.000100", ts="1767225606.000100")
    answer = slack_bot.slack.wait_for("chat.postMessage")[0]
    assert answer.args["thread_ts"] == "1767225605.000100"
    assert "nccl.peer_unresponsive" in json.dumps(answer.args["blocks"])


def test_chatter_in_other_threads_is_left_alone(slack_bot):
    slack_bot.send.thread_message("thanks, looking now", thread_ts="1767000000.000100", ts="1767225607.000100")
    slack_bot.send.thread_message("line1\nline2\nline3\nline4", thread_ts="1767000000.000100", ts="1767225608.000100")
    slack_bot.settle()
    assert [c for c in slack_bot.slack.calls("chat.postMessage") if c.args.get("thread_ts") == "1767000000.000100"] == []


def test_a_log_pasted_in_a_thread_another_replica_answered_is_explained(seed_sim, db_url, monkeypatch):
    """Two replicas behind one Service share the database: the paste may reach the other one."""
    from bot.app import create_app, work_pool
    from bot.http_server import SlackHttpServer
    from bot.settings import load_settings
    from bot.store import make_engine, migrate
    from tests.conftest import SIM_ENV
    from tests.fakes import workspace as ws
    from tests.fakes.signing import SlackRequests
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
            one.app_mention("<@U0BOT> why is my job pending?", channel="C0T5", ts="1767225610.000100")
            slack.wait_for("chat.postMessage", predicate=lambda c: c.args.get("thread_ts") == "1767225610.000100")
            log = "```\n" + "NET/OFI Request 0x7f completed with error. RC: 103. Error: 4126 (Unresponsive receiver " \
                  "(reachable by EFA device but handshake failed) My EFA addr: x)\n" * 3 + "```"
            two.thread_message(log, channel="C0T5", thread_ts="1767225610.000100", ts="1767225611.000100")
            answer = slack.wait_for("chat.postMessage", count=2, timeout=20,
                                    predicate=lambda c: c.args.get("thread_ts") == "1767225610.000100")[-1]
            assert "nccl.peer_unresponsive" in json.dumps(answer.args["blocks"])
            # ...while a thread neither replica answered stays the people's own
            two.thread_message(log, channel="C0T5", thread_ts="1767000000.000200", ts="1767225612.000100")
            assert work_pool(apps[1]).wait_idle(20)
            assert [c for c in slack.calls("chat.postMessage") if c.args.get("thread_ts") == "1767000000.000200"] == []
        finally:
            for replica in replicas:
                replica.stop()
