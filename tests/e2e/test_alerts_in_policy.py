"""Alerts inside the policy, end to end: Alertmanager's webhook (the endpoint's callable, as the HTTP
edge calls it) and the sweep, against the simulated cluster, the fake Slack Web API over HTTP and a
SQLite store, with a policy file that opens ``bench`` to one channel and ``sft`` to another.

An alert is shown in full only where the channel's own grant opens it; elsewhere it is told by code
and counts alone, and nothing is read from the cluster on its behalf. Whatever Alertmanager's
annotations say, every text field of every Slack call carries it as text: no mention, no link."""
from __future__ import annotations

import json
import re

import pytest

from bot.alerts.runtime import Alerts
from bot.payloads import Signer
from bot.service import DiagnosisService
from bot.settings import load_settings
from bot.slack_client import make_web_client
from bot.store import make_engine
from sim.serve import start_sim
from tests.conftest import REPO, SIM_ENV
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import migrated_sqlite

SICK = REPO / "sim" / "scenarios" / "sweep"
TOKEN = "am-token-0123456789abcdef"
BENCH, SFT = "C0BENCH", "C0SFT"
SFT_POD, BENCH_POD = "llama-70b-sft-master-0", "vllm-smoke-1"
GRANTS = f"""\
channels:
  {BENCH}: {{clusters: ["*"], namespaces: [bench]}}
  {SFT}:   {{clusters: ["*"], namespaces: [sft]}}
"""
# Hostile annotations: what a rule's template may copy from a tenant's labels into an alert.
HOSTILE = "<!channel> <!here> <@U0BOSS> see <https://evil.example/x|the fix> & <#C0SECRET>"
# The only markup gpubot writes into an alert is Slack's date token (bot.render.blocks.incidents.slack_date).
LIVE_MARKUP = re.compile(r"<(?!!date\^\d+\^)")


@pytest.fixture
def world(tmp_path, monkeypatch):
    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    with start_sim(scenarios=["sweep-sick-gpu-fleet"], directory=SICK) as sim, FakeSlack() as slack:
        yield sim, slack, tmp_path


def make_alerts(world, routes: str) -> Alerts:
    sim, slack, tmp_path = world
    policy = tmp_path / "policy.yaml"
    policy.write_text(GRANTS + routes)
    env = {"KUBECONFIG": str(sim.kubeconfig), "GPUBOT_DATABASE_URL": migrated_sqlite(tmp_path / "gpubot.db"),
           "GPUBOT_ALERTMANAGER_TOKEN": TOKEN, "SLACK_BOT_TOKEN": slack.token, "SLACK_API_URL": slack.url,
           "GPUBOT_POLICY": str(policy), **SIM_ENV}
    settings = load_settings(env)
    service = DiagnosisService(settings)
    return Alerts(settings, service, make_engine(settings.database_url),
                  make_web_client(token=slack.token, base_url=slack.url), Signer(b"k" * 32, ttl=3600),
                  cluster="gpubot-sim")


def webhook(*alerts: dict) -> bytes:
    return json.dumps({"version": "4", "groupKey": "{}:{}", "truncatedAlerts": 0, "status": "firing",
                       "receiver": "gpubot", "groupLabels": {}, "commonLabels": {}, "commonAnnotations": {},
                       "externalURL": "http://alertmanager", "alerts": list(alerts)}).encode()


def crash_loop(pod: str, namespace: str, *, summary: str | None = None, fingerprint: str = "a1") -> dict:
    return {"status": "firing", "labels": {"alertname": "KubePodCrashLooping", "severity": "critical",
                                           "namespace": namespace, "pod": pod},
            "annotations": {"summary": summary or f"Pod {namespace}/{pod} is crash looping",
                            "description": f"{pod} restarted 12 times. {HOSTILE}"},
            "startsAt": "2026-11-23T10:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus/graph", "fingerprint": fingerprint.ljust(16, "0")}


def deliver(alerts: Alerts, body: bytes) -> None:
    status, answer = alerts.endpoint.handle("POST", {"Authorization": f"Bearer {TOKEN}"}, body)
    assert (status, answer) == (202, {"accepted": json.loads(body)["alerts"].__len__()})
    assert alerts.inbox.drain() == 1  # stored by the answer, handled after it


def texts(value, key: str | None = None):
    """Every text field of a Web API call: the top-level ``text`` and each ``text`` inside blocks."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from texts(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from texts(v, key)
    elif isinstance(value, str) and key == "text":
        yield value


def namespace_reads(sim, namespace: str) -> list[str]:
    return [d["target"] for d in sim.request_details() if f"/namespaces/{namespace}/" in d["target"]]


def test_an_alert_a_channel_may_not_read_is_masked_and_not_diagnosed(world):
    sim, slack, _ = world
    alerts = make_alerts(world, f"alerts:\n  routes:\n    - {{channel: {BENCH}}}\n")
    sim.reset_requests()
    deliver(alerts, webhook(crash_loop(SFT_POD, "sft")))
    [posted] = slack.calls("chat.postMessage")
    assert posted.args["channel"] == BENCH
    shown = json.dumps(posted.args)
    assert "a pod in a namespace this channel cannot read" in posted.args["text"]
    # The code stays as a context line of the blocks, never in the prose (docs/messages.md).
    assert "training.crash_loop" not in posted.args["text"] and "training.crash_loop" in shown
    for secret in ("sft", SFT_POD, "restarted 12 times", "crash looping", "evil.example"):
        assert secret not in shown, secret
    # Nothing was read from the cluster for a channel that may not see it: no diagnosis with no asker.
    assert namespace_reads(sim, "sft") == []


def test_a_route_whose_grant_opens_the_alert_is_preferred_and_diagnoses_as_that_channel(world):
    sim, slack, _ = world
    alerts = make_alerts(world, f"alerts:\n  routes:\n    - {{channel: {BENCH}}}\n    - {{channel: {SFT}}}\n")
    sim.reset_requests()
    deliver(alerts, webhook(crash_loop(SFT_POD, "sft"), crash_loop(BENCH_POD, "bench", fingerprint="b2")))
    where = {c.args["channel"]: json.dumps(c.args) for c in slack.calls("chat.postMessage")}
    assert set(where) == {BENCH, SFT}
    assert SFT_POD in where[SFT] and SFT_POD not in where[BENCH]
    assert BENCH_POD in where[BENCH] and BENCH_POD not in where[SFT]
    # Both were diagnosed, each as the channel it went to: the reads stayed inside that channel's grant.
    assert namespace_reads(sim, "sft") and namespace_reads(sim, "bench")


def test_the_enrichment_is_bounded_by_the_destination_grant(world, tmp_path):
    """A channel whose grant opens ``bench`` only: its diagnosis of a bench pod reads bench, and a
    search for a name outside the grant finds nothing there (DiagnosisService.diagnose, the one check)."""
    sim, _, _ = world
    alerts = make_alerts(world, f"alerts:\n  routes:\n    - {{channel: {BENCH}}}\n")
    sim.reset_requests()
    deliver(alerts, webhook(crash_loop(BENCH_POD, "bench")))
    assert namespace_reads(sim, "bench") and namespace_reads(sim, "sft") == []
    from bot.errors import Refused
    from bot.service import Asker

    with pytest.raises(Refused, match="namespace sft is not open to this channel"):
        alerts.service.diagnose(f"pod/{SFT_POD}", namespace="sft", asker=Asker(user=None, channel=BENCH))


@pytest.mark.parametrize("routes,pod,namespace", [
    (f"alerts:\n  routes:\n    - {{channel: {BENCH}}}\n", BENCH_POD, "bench"),  # shown in full
    (f"alerts:\n  routes:\n    - {{channel: {BENCH}}}\n", SFT_POD, "sft"),  # masked
])
def test_markup_in_annotations_reaches_every_text_field_as_text(world, routes, pod, namespace):
    sim, slack, _ = world
    alerts = make_alerts(world, routes)
    firing = crash_loop(pod, namespace, summary=f"{HOSTILE} on {pod}")
    deliver(alerts, webhook(firing))
    deliver(alerts, webhook({**firing, "status": "resolved", "endsAt": "2026-11-23T10:30:00Z"}))
    calls = slack.calls("chat.postMessage") + slack.calls("chat.update")
    assert len(calls) >= 2
    fields = [t for c in calls for t in texts(c.args)]
    assert fields and all(not LIVE_MARKUP.search(t) for t in fields), [t for t in fields if LIVE_MARKUP.search(t)]
    assert not any("&amp;amp;" in t or "&amp;lt;" in t for t in fields)  # escaped once, not twice
    if namespace == "bench":
        assert "&lt;!channel&gt;" in calls[0].args["text"]  # the top-level text too, not only the blocks


def test_the_sweep_masks_too_and_no_incident_thread_is_a_masked_message(world):
    sim, slack, _ = world
    alerts = make_alerts(world, f"alerts:\n  routes:\n    - {{channel: {BENCH}}}\n")
    alerts.sweep_once()
    posts = slack.calls("chat.postMessage") + slack.calls("chat.update")
    assert posts, "the sick fleet raised nothing"
    for call in posts:
        shown = json.dumps(call.args)
        assert "llama-70b-sft" not in shown and '"sft"' not in shown and "/ sft" not in shown, shown[:400]
    masked = [c for c in slack.calls("chat.postMessage") if "this channel cannot read" in c.args["text"]]
    assert masked
    incidents = alerts.notifier.incidents.list(status="open", limit=200)
    in_threads = {(i.slack_channel, i.slack_ts) for i in incidents if i.namespace == "sft"}
    assert in_threads <= {(None, None)}, in_threads


def gpu_xid(node: str, *, pod: str, namespace: str) -> dict:
    """DCGM exporter's Xid alert: about a node, naming the pod that uses the GPU (labels as
    NVIDIA/dcgm-exporter writes them: Hostname, gpu, UUID, pod, namespace)."""
    return {"status": "firing", "labels": {"alertname": "GPUXidError", "severity": "critical", "Hostname": node,
                                           "gpu": "3", "UUID": "GPU-5f1c0ffee", "pod": pod, "namespace": namespace},
            "annotations": {"summary": f"Xid 79 on {node} GPU 3 (pod {namespace}/{pod})"},
            "startsAt": "2026-11-23T10:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus/graph", "fingerprint": "c3".ljust(16, "0")}


def test_a_node_alert_naming_a_pod_is_masked_where_its_namespace_is_closed(world):
    sim, slack, _ = world
    alerts = make_alerts(world, f"alerts:\n  routes:\n    - {{channel: {BENCH}}}\n")
    deliver(alerts, webhook(gpu_xid("ip-10-0-1-23.ec2.internal", pod=SFT_POD, namespace="sft")))
    [posted] = slack.calls("chat.postMessage")
    assert posted.args["channel"] == BENCH
    shown = json.dumps(posted.args)
    assert "cannot read" in posted.args["text"]
    for secret in ("sft", SFT_POD, "Xid 79 on"):
        assert secret not in shown, secret


def test_a_node_alert_naming_a_pod_goes_in_full_where_its_namespace_is_open(world):
    sim, slack, _ = world
    alerts = make_alerts(world, f"alerts:\n  routes:\n    - {{channel: {BENCH}}}\n    - {{channel: {SFT}}}\n")
    deliver(alerts, webhook(gpu_xid("ip-10-0-1-23.ec2.internal", pod=SFT_POD, namespace="sft")))
    [posted] = slack.calls("chat.postMessage")
    assert posted.args["channel"] == SFT
    assert SFT_POD in json.dumps(posted.args) and "cannot read" not in posted.args["text"]


def test_a_node_alert_scraped_from_the_exporter_names_no_workload(world):
    """``pod`` naming the DCGM exporter itself (ServiceMonitor without honorLabels) is no workload: the
    alert is about the node alone and any channel the cluster is open to reads it."""
    sim, slack, _ = world
    alerts = make_alerts(world, f"alerts:\n  routes:\n    - {{channel: {BENCH}}}\n")
    deliver(alerts, webhook(gpu_xid("ip-10-0-1-23.ec2.internal", pod="nvidia-dcgm-exporter-x7k2p",
                                    namespace="gpu-operator")))
    [posted] = slack.calls("chat.postMessage")
    assert posted.args["channel"] == BENCH and "cannot read" not in posted.args["text"]
