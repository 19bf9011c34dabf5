"""Who may speak for a node, end to end: the healthy fleet of sim/scenarios/sweep served over HTTP, Events
about its nodes written through the API with the official client as a tenant (or a node component)
writes them, then `gpubot sweep --once`, `gpubot diagnose node/...` and the alert sweep posting to the
fake Slack Web API."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from bot.alerts.runtime import Alerts
from bot.payloads import Signer
from bot.service import DiagnosisService
from bot.settings import load_settings
from bot.slack_client import make_web_client
from bot.store import make_engine
from sim.serve import start_sim
from tests.conftest import REPO, SIM_ENV, point_cli_at, run_cli
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import migrated_sqlite

FLEET = REPO / "sim" / "scenarios" / "sweep"
NODE = "ip-10-30-1-21.ec2.internal"  # p5e, 8 GPUs all allocatable, AcceleratedHardwareReady=True
OTHER = "ip-10-30-1-22.ec2.internal"
XID79 = "NVRM: Xid (PCI:0000:97:00): {xid}, pid=4242, name=python3, GPU has fallen off the bus."
CHANNEL = "C0ONCALL"


@pytest.fixture
def fleet(monkeypatch):
    with start_sim(scenarios=["sweep-healthy-gpu-fleet"], directory=FLEET) as sim:
        point_cli_at(sim, monkeypatch)
        monkeypatch.delenv("GPUBOT_SWEEP_PENDING_AFTER", raising=False)
        yield sim, k8s.CoreV1Api(k8s_config.new_client_from_config(config_file=str(sim.kubeconfig)))


NPD_IMAGE = "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.19"


def _run_daemonset(sim, namespace: str, image: str, *, account: str | None) -> None:
    """A DaemonSet created as its install creates it, then its status as the DaemonSet controller
    writes it once the pods are ready (apps/v1, through /status)."""
    apps = k8s.AppsV1Api(k8s_config.new_client_from_config(config_file=str(sim.kubeconfig)))
    name = image.rsplit("/", 1)[-1].split(":")[0]
    labels = {"app": name}
    pod_spec: dict = {"containers": [{"name": name, "image": image}]}
    if account:
        pod_spec["serviceAccountName"] = account
    apps.create_namespaced_daemon_set(namespace, {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": pod_spec}}})
    apps.patch_namespaced_daemon_set_status(name, namespace, {"status": {
        "currentNumberScheduled": 3, "desiredNumberScheduled": 3, "numberMisscheduled": 0, "numberReady": 3}})


def _claim(api: k8s.CoreV1Api, namespace: str, component: str, *, node: str = NODE, xid: str = "79",
           name: str = "xid") -> None:
    """A Warning Event about the node, as kubectl or a recorder would create it (core/v1)."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    api.create_namespaced_event(namespace, {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{node}.{name}", "namespace": namespace},
        "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": node},
        "reason": f"NvidiaXID{xid}Error", "message": XID79.format(xid=xid), "type": "Warning",
        "source": {"component": component}, "count": 1, "firstTimestamp": now, "lastTimestamp": now})


def _lose_a_gpu(api: k8s.CoreV1Api, node: str) -> None:
    """The device plugin took one GPU out of allocatable (what kubelet then reports in node status)."""
    allocatable = api.read_node_status(node).status.allocatable
    api.patch_node_status(node, {"status": {"allocatable": {**allocatable, "nvidia.com/gpu": "7"}}})


def _sweep(*args: str) -> tuple[dict | str, str]:
    result = run_cli("sweep", "--once", *args)
    assert result.code == 0, result.err
    return (json.loads(result.out) if "--json" in args else result.out), result.err


def _xid_findings(node: str = NODE) -> list[dict]:
    result = run_cli("diagnose", f"node/{node}", "--json")
    assert result.code == 0, result.err
    return [f for f in json.loads(result.out)["findings"] if f["code"] == "gpu.xid_error"]


def test_a_tenant_claim_on_a_healthy_node_is_a_warning_that_says_who_said_it(fleet):
    sim, api = fleet
    _claim(api, "team-a", "my-app")
    output, _ = _sweep("--json")
    [problem] = output["problems"]
    assert (problem["code"], problem["severity"]) == ("gpu.xid_error", "warning")
    assert "reported by team-a/my-app, not corroborated" in problem["title"]
    text, _ = _sweep()
    assert "cordon-gpu-node" not in text and "CRITICAL" not in text
    [finding] = _xid_findings()
    assert finding["severity"] == "warning" and finding["confidence"] == "low"
    assert finding["remediations"] == [] and "not corroborated" in finding["title"]


@pytest.mark.parametrize("namespace, component", [("default", "eks-node-monitoring-agent"), ("default", "kubelet")])
def test_the_same_claim_from_a_speaker_for_the_node_alone_is_an_error_without_a_cordon(fleet, namespace, component):
    sim, api = fleet
    _claim(api, namespace, component)
    output, _ = _sweep("--json")
    [problem] = output["problems"]
    assert (problem["code"], problem["severity"]) == ("gpu.xid_error", "error")
    assert "not corroborated" not in problem["title"] and problem["title"].endswith("alone")
    text, _ = _sweep()
    assert "cordon-gpu-node" not in text
    # the diagnosis offers a cordon only when a second reporter or the node's status agrees
    [finding] = _xid_findings()
    assert finding["severity"] == "error" and finding["remediations"] == []
    assert finding["title"] == f"GPU Xid 79 reported on {NODE} by {namespace}/{component} alone"


def test_two_speakers_agreeing_are_critical_with_a_cordon_in_the_diagnosis(fleet):
    sim, api = fleet
    _claim(api, "default", "eks-node-monitoring-agent", name="agent")
    _claim(api, "default", "kernel-monitor", name="npd")
    [finding] = _xid_findings()
    assert finding["severity"] == "critical" and [r["kind"] for r in finding["remediations"]] == ["cordon-gpu-node"]


def test_a_tenant_claim_the_node_status_bears_out_is_upgraded(fleet):
    sim, api = fleet
    _claim(api, "team-a", "my-app")
    _lose_a_gpu(api, NODE)
    output, _ = _sweep("--json")
    found = {p["code"]: p for p in output["problems"]}
    assert found["gpu.xid_error"]["severity"] == "critical" and "not corroborated" not in found["gpu.xid_error"]["title"]
    assert found["gpu.unhealthy_device"]["severity"] == "error"
    text, _ = _sweep()
    assert f"offers: cordon-gpu-node node/{NODE}" in text and "allocatable nvidia.com/gpu 7 of capacity 8" in text
    [finding] = _xid_findings()
    assert finding["severity"] == "critical" and [r["kind"] for r in finding["remediations"]] == ["cordon-gpu-node"]


def test_a_namespace_named_like_a_component_does_not_make_its_events_speak_for_the_node(fleet):
    """Issue 27, break 4: a tenant who may create namespaces made `node-problem-detector` and wrote an Xid
    79 about a healthy node from it; it was a critical alert and a cordon offer."""
    sim, api = fleet
    _claim(api, "node-problem-detector", "kernel-monitor")
    output, _ = _sweep("--json")
    [problem] = output["problems"]
    assert (problem["code"], problem["severity"]) == ("gpu.xid_error", "warning")
    assert "reported by node-problem-detector/kernel-monitor, not corroborated" in problem["title"]
    text, _ = _sweep()
    assert "cordon-gpu-node" not in text and "CRITICAL" not in text
    [finding] = _xid_findings()
    assert (finding["severity"], finding["confidence"], finding["remediations"]) == ("warning", "low", [])
    assert "reported by node-problem-detector/kernel-monitor, not corroborated" in finding["title"]


def test_a_look_alike_daemonset_without_its_own_service_account_does_not_either(fleet):
    sim, api = fleet
    _run_daemonset(sim, "node-problem-detector", NPD_IMAGE, account=None)  # runs as the namespace's default
    _claim(api, "node-problem-detector", "kernel-monitor")
    [finding] = _xid_findings()
    assert finding["severity"] == "warning" and finding["remediations"] == []


def test_node_problem_detector_running_in_its_namespace_still_speaks_for_the_node(fleet):
    sim, api = fleet
    _run_daemonset(sim, "node-problem-detector", NPD_IMAGE, account="node-problem-detector")
    _claim(api, "node-problem-detector", "kernel-monitor", name="npd")
    [finding] = _xid_findings()  # counted, but one reporter alone: no cordon yet
    assert finding["title"] == f"GPU Xid 79 reported on {NODE} by node-problem-detector/kernel-monitor alone"
    assert finding["severity"] == "error" and finding["remediations"] == []
    _claim(api, "default", "eks-node-monitoring-agent", name="agent")  # a second, independent reporter
    [finding] = _xid_findings()
    assert finding["severity"] == "critical" and [r["kind"] for r in finding["remediations"]] == ["cordon-gpu-node"]


def test_a_5000_digit_xid_is_a_gap_and_the_rest_of_the_sweep_stands(fleet):
    sim, api = fleet
    _claim(api, "team-a", "my-app", xid="9" * 5000, name="huge")
    _claim(api, "default", "eks-node-monitoring-agent", node=OTHER, name="real")
    _lose_a_gpu(api, OTHER)
    output, _ = _sweep("--json")
    assert {(p["code"], p["target"]["name"], p["severity"]) for p in output["problems"]} == {
        ("gpu.xid_error", OTHER, "critical"), ("gpu.unhealthy_device", OTHER, "error")}
    [gap] = [g for g in output["not_checked"] if NODE in g]
    assert gap.startswith(f"not checked: event team-a/{NODE}.huge about node {NODE} (could not read it: ")
    assert len(gap) < 300
    # the diagnosis of the node reads the same event: no Xid from it, and no crash
    assert _xid_findings() == []


def test_the_alert_sweep_posts_a_tenant_claim_as_a_warning_only(fleet, tmp_path):
    sim, api = fleet
    _claim(api, "team-a", "my-app")
    with FakeSlack() as slack:
        env = {"KUBECONFIG": str(sim.kubeconfig), "GPUBOT_ALERT_CHANNEL": CHANNEL, "SLACK_BOT_TOKEN": slack.token,
               "GPUBOT_DATABASE_URL": migrated_sqlite(tmp_path / "gpubot.db"), "SLACK_API_URL": slack.url,
               **SIM_ENV}
        settings = load_settings(env)
        alerts = Alerts(settings, DiagnosisService(settings), make_engine(settings.database_url),
                        make_web_client(token=slack.token, base_url=slack.url), Signer(b"k" * 32, ttl=3600),
                        cluster="gpubot-sim")
        alerts.sweep_once()
        posted = [c for c in slack.calls("chat.postMessage") if c.args.get("channel") == CHANNEL]
    [message] = posted  # the claim is still shown, once
    assert message.args["text"].startswith("[warning] ") and "reported by team-a/my-app, not corroborated" in \
        message.args["text"]
    said = json.dumps(message.args["blocks"])
    assert "*Severity*\\nwarning" in said and "critical" not in said and "cordon" not in said
