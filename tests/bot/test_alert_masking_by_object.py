"""Masking by object, not by message: a NodePool at its limit with pods of a namespace the alerts channel
may not read is posted there with the NodePool's name and usage (cluster-scoped, open with the cluster)
and the pods counted, never named; a channel that may not read the cluster is told codes and counts
alone. Against the fake Slack Web API over HTTP and a real store (SQLite and PostgreSQL)."""
from __future__ import annotations

import json

from slack_sdk import WebClient

from bot.alerts.notifier import Notifier
from bot.alerts.routing import AlertRouter
from bot.payloads import Signer
from bot.policy import parse_policy
from playbooks.model import Evidence, Target
from playbooks.problems import Problem
from bot.store import AlertStore, IncidentStore
from tests.bot.test_notifier import KEY, slack  # noqa: F401 - fixture
from tests.store.conftest import clock, engine  # noqa: F401 - fixtures

ALERTS = "C0ALERTS"
POOL = "gpu-training-32"
USAGE = {"nodepool": POOL, "resource_type": "nvidia.com/gpu", "used": "32", "limit": "32"}


def policy(*, clusters: str = '["prod"]', namespaces: str = "[]"):
    return parse_policy(f"""\
channels:
  {ALERTS}: {{clusters: {clusters}, namespaces: {namespaces}}}
alerts:
  routes:
    - {{channel: {ALERTS}}}
""", source="policy.yaml")


def notifier(engine, slack, clock, current: list) -> Notifier:
    return Notifier(store=AlertStore(engine, clock=clock), incidents=IncidentStore(engine, clock=clock),
                    client=WebClient(token=slack.token, base_url=slack.url),
                    router=AlertRouter(lambda: current[0], default_channel=None), signer=Signer(KEY, ttl=3600),
                    digest_after=10, clock=clock)


def job_waiting(job: str, namespace: str, pods: int) -> Problem:
    return Problem(code="karpenter.nodepool_limit_reached", severity="error",
                   target=Target("pytorchjob", job, namespace), cluster="prod", nodepool=POOL, pods=pods,
                   title=f"pytorchjob {namespace}/{job}: {pods} pods wait on NodePool {POOL}", labels=dict(USAGE),
                   evidence=(Evidence(f"event pod/{namespace}/{job}-worker-0 FailedScheduling",
                                      f"{job}-worker-0 exceeds limits for nodepool {POOL}"),))


def shown(call) -> str:
    return json.dumps(call.args)


def test_the_nodepool_stays_visible_and_the_closed_pods_are_counted(engine, slack, clock):
    notifier(engine, slack, clock, [policy()]).sweep_seen(
        [job_waiting("secret-llm", "tenant-a", 2), job_waiting("secret-sft", "tenant-a", 1)], "prod")
    [posted] = slack.calls("chat.postMessage")
    assert posted.args["channel"] == ALERTS
    assert posted.args["text"] == (f"[error] NodePool {POOL} has used all 32 of its GPUs: "
                                   "3 pods of 1 namespace this channel cannot read")
    assert f"nodepool/{POOL}" in shown(posted) and "karpenter.nodepool_limit_reached" in shown(posted)
    for name in ("secret-llm", "secret-sft", "tenant-a"):
        assert name not in shown(posted)


def test_what_the_channel_may_read_is_listed_and_the_rest_counted(engine, slack, clock):
    notifier(engine, slack, clock, [policy(namespaces="[team-b]")]).sweep_seen(
        [job_waiting("secret-llm", "tenant-a", 3), job_waiting("bert", "team-b", 2)], "prod")
    [posted] = slack.calls("chat.postMessage")
    assert posted.args["text"] == (f"[error] NodePool {POOL} has used all 32 of its GPUs: 2 pods of 1 job wait "
                                   "on it, and 3 pods of 1 namespace this channel cannot read")
    assert "pytorchjob/bert" in shown(posted) and "bert-worker-0 exceeds limits" in shown(posted)
    assert "3 pods held back" in shown(posted)
    assert "secret-llm" not in shown(posted) and "tenant-a" not in shown(posted)


def test_a_channel_that_may_not_read_the_cluster_is_told_codes_and_counts_alone(engine, slack, clock):
    notifier(engine, slack, clock, [policy(clusters="[staging]")]).sweep_seen(
        [job_waiting("secret-llm", "tenant-a", 3)], "prod")
    [posted] = slack.calls("chat.postMessage")
    assert posted.args["text"] == ("[error] A NodePool at its limits: "
                                   "a pytorchjob in a namespace this channel cannot read")
    assert POOL not in shown(posted) and "secret-llm" not in shown(posted)


def test_a_grant_that_opens_the_namespace_later_shows_it_all_at_the_next_update(engine, slack, clock):
    current = [policy()]
    bot = notifier(engine, slack, clock, current)
    bot.sweep_seen([job_waiting("secret-llm", "tenant-a", 3)], "prod")
    bot.sweep_seen([job_waiting("secret-llm", "tenant-a", 3)], "prod")
    assert slack.calls("chat.update") == []  # the same view twice: nothing to update
    current[0] = policy(namespaces="[tenant-a]")
    bot.sweep_seen([job_waiting("secret-llm", "tenant-a", 3)], "prod")
    [update] = slack.calls("chat.update")
    assert "secret-llm" in shown(update) and "cannot read" not in shown(update)
