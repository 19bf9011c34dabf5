"""Alerts end to end, as `gpubot serve` runs them: a healthy simulated cluster turns sick while the test
runs (a node's GPU fails, then more of it), the sweep posts one message, updates it in place, and says
resolved when the node recovers; Alertmanager's webhook over HTTP posts a firing alert and resolves it;
two replicas elect one sweeper and the other takes over when it dies."""
from __future__ import annotations

import json
import time
import urllib.request

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from bot.alerts.runtime import Alerts
from bot.http_server import SlackHttpServer
from bot.payloads import Signer
from bot.service import DiagnosisService
from bot.settings import load_settings
from bot.slack_client import make_web_client
from bot.store import make_engine
from sim.serve import start_sim
from tests.conftest import REPO, SIM_ENV
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import migrated_sqlite

HEALTHY = REPO / "sim" / "scenarios" / "sweep"
NODE = "ip-10-30-1-21.ec2.internal"
CHANNEL = "C0ONCALL"
TOKEN = "am-token-0123456789abcdef"


@pytest.fixture
def world(tmp_path, monkeypatch):
    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    with start_sim(scenarios=["sweep-healthy-gpu-fleet"], directory=HEALTHY) as sim, FakeSlack() as slack:
        url = migrated_sqlite(tmp_path / "gpubot.db")
        env = {"KUBECONFIG": str(sim.kubeconfig), "GPUBOT_ALERT_CHANNEL": CHANNEL, "GPUBOT_DATABASE_URL": url,
               "GPUBOT_ALERTMANAGER_TOKEN": TOKEN, "SLACK_BOT_TOKEN": slack.token, "SLACK_API_URL": slack.url,
               "GPUBOT_LEASE_DURATION": "2", "GPUBOT_LEASE_RENEW_DEADLINE": "1.2", "GPUBOT_LEASE_RETRY_PERIOD": "0.2",
               **SIM_ENV}
        api = k8s.CoreV1Api(k8s_config.new_client_from_config(config_file=str(sim.kubeconfig)))
        yield sim, slack, env, api


def _alerts(env: dict, slack: FakeSlack, identity: str = "replica-a") -> Alerts:
    settings = load_settings({**env, "POD_NAME": identity})
    service = DiagnosisService(settings)
    client = make_web_client(token=slack.token, base_url=slack.url)
    return Alerts(settings, service, make_engine(settings.database_url), client, Signer(b"k" * 32, ttl=3600),
                  cluster="gpubot-sim")


def _condition(api: k8s.CoreV1Api, status: str, reason: str, gpus: str) -> None:
    node = api.read_node_status(NODE)
    conditions = [c for c in node.status.conditions if c.type != "AcceleratedHardwareReady"]
    conditions.append(k8s.V1NodeCondition(type="AcceleratedHardwareReady", status=status, reason=reason,
                                          message="" if status == "True" else "NVRM: Xid 79, GPU has fallen off the bus"))
    body = {"status": {"conditions": [api.api_client.sanitize_for_serialization(c) for c in conditions],
                       "allocatable": {**node.status.allocatable, "nvidia.com/gpu": gpus}}}
    api.patch_node_status(NODE, body)


def _messages(slack: FakeSlack) -> list:
    return [c for c in slack.calls("chat.postMessage") if c.args.get("channel") == CHANNEL]


def test_a_cluster_that_turns_sick_is_alerted_once_updated_and_resolved(world):
    sim, slack, env, api = world
    alerts = _alerts(env, slack)
    alerts.sweep_once()
    assert _messages(slack) == []  # healthy: nothing to say

    _condition(api, "False", "NvidiaXID79Error", gpus="7")
    alerts.sweep_once()
    [posted] = _messages(slack)
    assert NODE in json.dumps(posted.args)
    ts = posted.response["ts"]

    alerts.sweep_once()  # nothing changed: no call at all
    assert len(_messages(slack)) == 1 and not [c for c in slack.calls("chat.update") if c.args["ts"] == ts]

    assert not posted.args["text"].startswith("Resolved")
    _condition(api, "True", "NvidiaAcceleratedHardwareIsReady", gpus="8")
    alerts.sweep_once()
    final = [c for c in slack.calls("chat.update") if c.args["ts"] == ts][-1]
    assert final.args["text"].startswith("Resolved"), final.args["text"]
    assert "no longer seen by the sweep" in json.dumps(final.args)
    assert len(_messages(slack)) == 1


def _post(port: int, body: dict, token: str | None = TOKEN) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(f"http://127.0.0.1:{port}/alertmanager", data=json.dumps(body).encode(),
                                     headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def _webhook(status: str) -> dict:
    alert = {"status": status, "labels": {"alertname": "GPUXidError", "severity": "critical", "Hostname": NODE,
                                          "gpu": "3", "err_code": "79"},
             "annotations": {"summary": f"Xid 79 on {NODE} GPU 3"}, "startsAt": "2026-11-23T10:00:00Z",
             "endsAt": "0001-01-01T00:00:00Z" if status == "firing" else "2026-11-23T10:30:00Z",
             "generatorURL": "http://prometheus/graph", "fingerprint": "a1b2c3d4e5f60718"}
    return {"version": "4", "groupKey": "{}:{alertname=\"GPUXidError\"}", "truncatedAlerts": 0, "status": status,
            "receiver": "gpubot", "groupLabels": {"alertname": "GPUXidError"}, "commonLabels": alert["labels"],
            "commonAnnotations": alert["annotations"], "externalURL": "http://alertmanager", "alerts": [alert]}


def test_alertmanager_firing_then_resolved_over_http(world):
    sim, slack, env, api = world
    alerts = _alerts(env, slack)
    server = SlackHttpServer(None, host="127.0.0.1", port=0, routes={"/alertmanager": alerts.endpoint.handle}).start()
    try:
        assert _post(server.port, _webhook("firing"), token="wrong")[0] == 401
        assert _post(server.port, {"version": "3"})[0] == 400
        assert _post(server.port, _webhook("firing")) == (202, {"accepted": 1})
        assert _messages(slack) == []  # stored and answered; handled after the answer
        assert alerts.inbox.drain() == 1
        [posted] = _messages(slack)
        assert "Xid 79" in json.dumps(posted.args)
        assert _post(server.port, _webhook("resolved")) == (202, {"accepted": 1})
        assert alerts.inbox.drain() == 1
        final = [c for c in slack.calls("chat.update") if c.args["ts"] == posted.response["ts"]][-1]
        assert final.args["text"].startswith("Resolved"), final.args["text"]
        assert "Alertmanager sent resolved" in json.dumps(final.args)
        assert len(_messages(slack)) == 1
    finally:
        server.stop()


def test_one_replica_sweeps_and_another_takes_over_when_it_dies(world):
    sim, slack, env, api = world
    _condition(api, "False", "NvidiaXID79Error", gpus="7")
    a, b = _alerts(env, slack, "replica-a"), _alerts(env, slack, "replica-b")
    a.start()
    deadline = time.monotonic() + 20
    while not (a.elector.is_leader and _messages(slack)):
        assert time.monotonic() < deadline, "replica-a neither led nor swept"
        time.sleep(0.1)
    b.start()
    time.sleep(1.0)
    assert a.elector.is_leader and not b.elector.is_leader
    # replica-a dies: it stops renewing without giving the Lease back.
    a.elector.stop(release=False)
    a.scheduler.shutdown(wait=False)
    died = time.monotonic()
    while not b.elector.is_leader:
        assert time.monotonic() - died < 2 * 2.0 + 1, "replica-b did not take over within the lease"
        time.sleep(0.05)
    b.sweep_once()
    assert len(_messages(slack)) == 1  # the new leader's sweep finds the alert already posted
    b.stop()
