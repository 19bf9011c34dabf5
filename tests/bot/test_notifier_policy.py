"""The notifier inside the policy, against the fake Slack Web API over HTTP and a real store (SQLite and
PostgreSQL): a digest tells what its channel may not read by code and counts alone, and whether a
message is masked is decided again at each update, so an edited policy shows in the next one."""
from __future__ import annotations

import json

from slack_sdk import WebClient

from bot.alerts.notifier import Notifier
from bot.alerts.routing import AlertRouter
from bot.payloads import Signer
from bot.policy import parse_policy
from bot.store import AlertStore, IncidentStore
from tests.bot.test_notifier import KEY, pod, slack  # noqa: F401 - fixture
from tests.store.conftest import clock, engine  # noqa: F401 - fixtures

OPS = "C0OPS"


def policy(ops_reads: str):
    return parse_policy(f"""\
channels:
  {OPS}: {{clusters: ["*"], namespaces: [{ops_reads}]}}
alerts:
  routes:
    - {{channel: {OPS}}}
""", source="policy.yaml")


def notifier(engine, slack, clock, current: list, *, digest_after: int = 10) -> Notifier:
    return Notifier(store=AlertStore(engine, clock=clock), incidents=IncidentStore(engine, clock=clock),
                    client=WebClient(token=slack.token, base_url=slack.url),
                    router=AlertRouter(lambda: current[0], default_channel=None), signer=Signer(KEY, ttl=3600),
                    digest_after=digest_after, clock=clock)


def shown(call) -> str:
    return json.dumps(call.args)


def test_a_digest_tells_what_its_channel_may_not_read_by_code_and_counts(engine, slack, clock):
    summary = notifier(engine, slack, clock, [policy("other")], digest_after=3).sweep_seen(
        [pod(0, job=f"job{n}") for n in range(6)], "prod")
    assert summary.digests == 1
    [digest] = slack.calls("chat.postMessage")
    assert "scheduling.insufficient_gpu" in shown(digest) and "a pod in a namespace this channel cannot read" in shown(digest)
    assert "job0-0" not in shown(digest) and "/llm/" not in shown(digest)


def test_an_edited_policy_unmasks_a_message_at_its_next_update(engine, slack, clock):
    current = [policy("other")]
    bot = notifier(engine, slack, clock, current)
    bot.sweep_seen([pod(0)], "prod")
    [posted] = slack.calls("chat.postMessage")
    assert "x-0" not in shown(posted) and "this channel cannot read" in posted.args["text"]
    slack.reset()
    bot.sweep_seen([pod(0)], "prod")
    assert slack.calls() == []  # nothing a reader would see changed
    current[0] = policy("llm")  # the channel is given the namespace
    bot.sweep_seen([pod(0)], "prod")
    [update] = slack.calls("chat.update")
    assert update.args["ts"] == posted.response["ts"]
    assert "x-0" in shown(update) and "cannot read" not in shown(update)
