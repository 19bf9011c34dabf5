"""Who may speak for a node (playbooks/speakers.py): the component AND the namespace decide, the node's
status corroborates, and the sweep's node detector and the diagnosis scan both follow it."""
from __future__ import annotations

import pytest

from playbooks.analyzers.gpu import analyze_xid
from playbooks.analyzers.scan import signals
from playbooks.facts import Facts
from playbooks.model import Target
from playbooks.signatures import scan_line
from playbooks.speakers import SPEAKERS, hardware_claim, installed, node_vouches, plugin_voice, voice_of
from playbooks.sweep.nodes import node_problems

from tests.playbooks.sweep_objects import NOW, ago, gpu_node, node_event

XID79 = "NVRM: Xid (PCI:0000:97:00): 79, pid=1234, name=python3, GPU has fallen off the bus."


def event(namespace: str, component: str, *, reason: str = "NvidiaXID79Error", message: str = XID79,
          node: str = "ip-10-1-0-1", shape: str = "core") -> dict:
    found = node_event(node, reason, message)
    found["metadata"]["namespace"] = namespace
    if shape == "core":
        found["source"] = {"component": component}
    else:  # events.k8s.io/v1 read through core/v1: reportingComponent, no source
        found.pop("source")
        found["reportingComponent"] = component
    return found


def daemonset(namespace: str, image: str, *, account: str | None = "component-sa", ready: int = 3) -> dict:
    """A DaemonSet as the API returns it: its pods' image and ServiceAccount, and how many are ready."""
    spec: dict = {"containers": [{"name": "main", "image": image}]}
    if account is not None:
        spec["serviceAccountName"] = account
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": image.rsplit("/", 1)[-1].split(":")[0], "namespace": namespace},
            "spec": {"template": {"spec": spec}}, "status": {"desiredNumberScheduled": 3, "numberReady": ready}}


NPD = "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.19"
PLUGIN = "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"
AGENT = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/eks-node-monitoring-agent:v1.2.0-eksbuild.1"
VALIDATOR = "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.9.0"
RUNNING = installed([daemonset("kube-system", AGENT, account="eks-node-monitoring-agent"),
                     daemonset("gpu-operator", PLUGIN, account="nvidia-device-plugin"),
                     daemonset("nvidia-gpu-operator", VALIDATOR, account="nvidia-operator-validator"),
                     daemonset("node-problem-detector", NPD, account="node-problem-detector")])


@pytest.mark.parametrize("namespace, component", [
    ("default", "kubelet"), ("default", "eks-node-monitoring-agent"), ("default", "karpenter"),
    ("default", "kernel-monitor"), ("default", "nvidia-device-plugin"),
])
def test_speakers_in_default_are_trusted_whatever_is_installed(namespace, component):
    for shape in ("core", "events.k8s.io"):
        assert voice_of(event(namespace, component, shape=shape)).trusted, (namespace, component, shape)


@pytest.mark.parametrize("namespace, component", [
    ("kube-system", "eks-node-monitoring-agent"), ("gpu-operator", "nvidia-device-plugin"),
    ("gpu-operator", "nvidia-gpu-operator"), ("nvidia-gpu-operator", "nvidia-gpu-operator"),
    ("node-problem-detector", "kernel-monitor"),
])
def test_speakers_count_in_a_namespace_where_their_daemonset_runs(namespace, component):
    for shape in ("core", "events.k8s.io"):
        assert voice_of(event(namespace, component, shape=shape), where=RUNNING).trusted, (namespace, component)
        # the same event, nothing known to run there: the namespace's name alone vouches for nobody
        assert not voice_of(event(namespace, component, shape=shape)).trusted, (namespace, component)


def test_a_namespace_named_like_the_component_is_not_the_component():
    # a tenant who may create namespaces made `node-problem-detector` and wrote an Xid 79 from it
    tenant = installed([daemonset("team-a", NPD)])  # the real detector runs elsewhere
    assert not voice_of(event("node-problem-detector", "kernel-monitor"), where=tenant).trusted
    assert not voice_of(event("nvidia-device-plugin", "nvidia-device-plugin"), where=tenant).trusted
    assert not voice_of(event("karpenter", "karpenter"), where=RUNNING).trusted  # Karpenter: "default" only


@pytest.mark.parametrize("why, found", [
    ("another component's image", daemonset("node-problem-detector", "docker.io/team-a/np-detector:1")),
    ("no pod ready", daemonset("node-problem-detector", NPD, ready=0)),
    ("never scheduled", {**daemonset("node-problem-detector", NPD), "status": {}}),
    ("runs as the namespace's default ServiceAccount", daemonset("node-problem-detector", NPD, account="default")),
    ("names no ServiceAccount", daemonset("node-problem-detector", NPD, account=None)),
])
def test_a_daemonset_counts_only_running_the_component_as_its_own_service_account(why, found):
    assert not voice_of(event("node-problem-detector", "kernel-monitor"), where=installed([found])).trusted, why


def test_a_speaker_running_in_a_namespace_does_not_vouch_for_other_components_there():
    assert not voice_of(event("node-problem-detector", "eks-node-monitoring-agent"), where=RUNNING).trusted
    assert not voice_of(event("kube-system", "kernel-monitor"), where=RUNNING).trusted


def test_the_policy_may_trust_a_namespace_it_names():
    trusted = installed([], trusted=["gpu-health"])
    assert voice_of(event("gpu-health", "kernel-monitor"), where=trusted).trusted
    assert not voice_of(event("gpu-health", "my-app"), where=trusted).trusted  # a speaker's component still
    assert not voice_of(event("node-problem-detector", "kernel-monitor"), where=trusted).trusted


@pytest.mark.parametrize("namespace, component", [
    ("team-a", "my-app"),  # a tenant's own component in its own namespace
    ("team-a", "kubelet"),  # a tenant naming kubelet: the namespace gives it away
    ("team-a", "eks-node-monitoring-agent"),
    ("default", "my-app"),  # the right namespace, a component nobody vouches for
    ("kube-system", "Kubelet"),  # names are compared exactly
    ("default", ""),
])
def test_anyone_else_is_not(namespace, component):
    voice = voice_of(event(namespace, component), where=RUNNING)
    assert not voice.trusted
    assert voice.caveat == f"reported by {namespace}/{component or '(no component)'}, not corroborated"


def test_every_speaker_writes_node_events_in_default():
    # client-go tools/record/event.go makeEvent: a Node's reference has no namespace, so "default"
    assert all("default" in s.namespaces for s in SPEAKERS)
    assert len({s.component for s in SPEAKERS}) == len(SPEAKERS)


def test_a_hostile_label_is_one_short_line():
    voice = voice_of(event("team-a", "x\n<!channel>" + "y" * 500))
    assert "\n" not in voice.label and len(voice.label) < 140 and voice.label.endswith("...")


def test_device_plugin_logs_count_where_the_plugin_daemonset_runs():
    static = installed([daemonset("kube-system", PLUGIN, account=None)])  # the static manifest names no account
    assert plugin_voice("kube-system", "nvidia-device-plugin-ds-x", where=static).trusted
    assert plugin_voice("gpu-operator", "nvidia-device-plugin-daemonset-x", where=RUNNING).trusted
    assert not plugin_voice("gpu-operator", "nvidia-device-plugin-daemonset-x", where=static).trusted
    assert not plugin_voice("nvidia-device-plugin", "nvidia-device-plugin-x").trusted
    assert not plugin_voice("team-a", "nvidia-device-plugin-daemonset-x", where=RUNNING).trusted


def test_hardware_claims_are_gpu_codes_and_xids():
    [xid] = scan_line(XID79, source="t")
    assert hardware_claim(xid.code, xid.fields)
    assert hardware_claim("training.code_error", {"xid": "13"})
    assert not hardware_claim("karpenter.disruption", {})


def test_node_status_corroborates():
    assert node_vouches(gpu_node("n", gpus=8)) is None
    assert node_vouches(gpu_node("n", gpus=8, allocatable=7)) == "node status: allocatable nvidia.com/gpu 7 of capacity 8"
    down = {"type": "AcceleratedHardwareReady", "status": "False", "reason": "NvidiaXID79Error"}
    assert "AcceleratedHardwareReady=False (NvidiaXID79Error)" in node_vouches(gpu_node("n", conditions=[down]))
    assert node_vouches(None) is None
    odd = gpu_node("n")
    odd["status"]["allocatable"]["nvidia.com/gpu"] = "a lot"
    assert node_vouches(odd) is None


# -- the sweep's node detector --------------------------------------------------------------------

def sweep(nodes, events, gaps=None):
    return node_problems(list(nodes), list(events), cluster="prod", now=NOW, gaps=gaps)


def test_sweep_tenant_xid_on_a_healthy_node_is_a_low_warning_without_cordon():
    [p] = sweep([gpu_node("ip-10-1-0-1")], [event("team-a", "my-app")])
    assert p.code == "gpu.xid_error" and p.severity == "warning" and not p.remediations
    assert "reported by team-a/my-app, not corroborated" in p.title
    assert "can speak for the node" in p.detail


def test_sweep_speaker_xid_alone_is_an_error_without_cordon():
    [p] = sweep([gpu_node("ip-10-1-0-1")], [event("default", "eks-node-monitoring-agent")])
    assert p.code == "gpu.xid_error" and p.severity == "error" and p.remediations == ()
    assert "not corroborated" not in p.title and p.title.endswith("alone")


def test_sweep_two_speakers_agreeing_are_critical_with_cordon():
    [p] = sweep([gpu_node("ip-10-1-0-1")], [event("default", "eks-node-monitoring-agent"),
                                            event("default", "kernel-monitor", reason="NVRMXid")])
    assert p.code == "gpu.xid_error" and p.severity == "critical"
    assert [r.kind for r in p.remediations] == ["cordon-gpu-node"]


def test_sweep_tenant_xid_is_upgraded_when_the_node_lost_a_gpu():
    found = sweep([gpu_node("ip-10-1-0-1", allocatable=7)], [event("team-a", "my-app")])
    xid = next(p for p in found if p.code == "gpu.xid_error")
    assert xid.severity == "critical" and [r.kind for r in xid.remediations] == ["cordon-gpu-node"]
    assert any("allocatable nvidia.com/gpu 7 of capacity 8" in e.text for e in xid.evidence)


def test_sweep_tenant_and_speaker_on_one_node_keep_the_speakers_words():
    found = sweep([gpu_node("ip-10-1-0-1")], [event("team-a", "my-app"), event("default", "kernel-monitor")])
    [xid] = [p for p in found if p.code == "gpu.xid_error"]
    # the speaker's words stand (the tenant's claim does not make a second reporter)
    assert xid.severity == "error" and "not corroborated" not in xid.title


def test_sweep_tenant_health_reason_is_a_claim_too():
    [p] = sweep([gpu_node("ip-10-1-0-1")], [event("team-a", "my-app", reason="NvidiaDoubleBitError", message="DBE")])
    assert p.code == "gpu.unhealthy_device" and p.severity == "warning" and "not corroborated" in p.title


@pytest.mark.parametrize("where", ["reason", "message"])
def test_sweep_a_5000_digit_xid_is_a_gap_and_the_rest_is_swept(where):
    digits = "7" * 5000
    hostile = event("team-a", "my-app", reason=f"NvidiaXID{digits}Error" if where == "reason" else "GPUXid",
                    message=f"NVRM: Xid (PCI:0000:97:00): {digits}, GPU has fallen off the bus.")
    gaps: list[str] = []
    found = sweep([gpu_node("ip-10-1-0-1"), gpu_node("ip-10-1-0-2", allocatable=6)],
                  [hostile, event("default", "eks-node-monitoring-agent", node="ip-10-1-0-2")], gaps)
    assert {(p.code, p.target.name) for p in found} == {("gpu.unhealthy_device", "ip-10-1-0-2"),
                                                          ("gpu.xid_error", "ip-10-1-0-2")}
    [gap] = gaps
    assert gap.startswith("not checked: event team-a/ip-10-1-0-1.") and "about node ip-10-1-0-1" in gap
    assert ("with an Xid of at most four digits" if where == "reason" else "an Xid of more than four digits") in gap
    assert len(gap) < 400


def test_sweep_one_unreadable_event_does_not_hide_the_others():
    broken = event("default", "eks-node-monitoring-agent")
    broken["series"] = "often"  # not the object events.k8s.io/v1 has there: reading its time fails
    gaps: list[str] = []
    found = sweep([gpu_node("ip-10-1-0-1")], [broken, event("default", "kernel-monitor", reason="NVRMXid")], gaps)
    assert [p.code for p in found] == ["gpu.xid_error"] and found[0].severity == "error"
    assert [g.split(" (", 1)[1] for g in gaps] == ["could not read it: AttributeError: 'str' object has no "
                                                   "attribute 'get')"]


def test_sweep_old_tenant_claims_are_history_as_well():
    old = event("team-a", "my-app")
    old["lastTimestamp"] = ago(hours=3)
    assert sweep([gpu_node("ip-10-1-0-1")], [old]) == []


# -- the diagnosis scan ---------------------------------------------------------------------------

def facts_with(node: dict, events: list[dict]) -> Facts:
    name = node["metadata"]["name"]
    return Facts(target=Target(kind="node", name=name), cluster="prod", nodes={name: node}, node_events={name: events})


def test_diagnosis_tenant_xid_is_capped_and_offers_no_cordon():
    facts = facts_with(gpu_node("ip-10-1-0-1"), [event("team-a", "my-app")])
    [finding] = list(analyze_xid(facts))
    assert finding.severity == "warning" and finding.confidence == "low" and not finding.remediations
    assert "reported by team-a/my-app, not corroborated" in finding.title
    assert all(loc.signal.severity == "warning" for loc in signals(facts))


def test_diagnosis_one_speakers_xid_alone_is_an_error_without_cordon():
    facts = facts_with(gpu_node("ip-10-1-0-1"), [event("default", "eks-node-monitoring-agent")])
    [finding] = list(analyze_xid(facts))
    assert finding.severity == "error" and not finding.remediations
    assert finding.title == "GPU Xid 79 reported on ip-10-1-0-1 by default/eks-node-monitoring-agent alone"


def test_diagnosis_two_speakers_agreeing_are_critical_with_cordon():
    facts = facts_with(gpu_node("ip-10-1-0-1"), [event("default", "eks-node-monitoring-agent"),
                                                  event("default", "kernel-monitor", reason="NVRMXid")])
    [finding] = list(analyze_xid(facts))
    assert finding.severity == "critical" and [r.kind for r in finding.remediations] == ["cordon-gpu-node"]


def test_diagnosis_one_speaker_and_a_tenant_are_still_one_voice():
    facts = facts_with(gpu_node("ip-10-1-0-1"), [event("default", "eks-node-monitoring-agent"),
                                                  event("team-a", "kernel-monitor", reason="NVRMXid")])
    [finding] = list(analyze_xid(facts))
    assert finding.severity == "error" and not finding.remediations


def test_diagnosis_one_speaker_the_node_status_bears_out_is_critical_with_cordon():
    down = {"type": "AcceleratedHardwareReady", "status": "False", "reason": "NvidiaXID79Error"}
    for node in (gpu_node("ip-10-1-0-1", allocatable=7), gpu_node("ip-10-1-0-1", conditions=[down])):
        [finding] = [f for f in analyze_xid(facts_with(node, [event("default", "eks-node-monitoring-agent")]))
                     if "reported" in f.title]
        assert finding.severity == "critical" and [r.kind for r in finding.remediations] == ["cordon-gpu-node"]


def test_diagnosis_a_component_named_namespace_without_its_daemonset_is_a_claim():
    facts = facts_with(gpu_node("ip-10-1-0-1"), [event("node-problem-detector", "kernel-monitor", reason="NVRMXid")])
    [finding] = list(analyze_xid(facts))
    assert finding.severity == "warning" and not finding.remediations
    assert "reported by node-problem-detector/kernel-monitor, not corroborated" in finding.title


def test_diagnosis_a_running_detector_counts_from_its_namespace():
    facts = facts_with(gpu_node("ip-10-1-0-1"), [event("node-problem-detector", "kernel-monitor", reason="NVRMXid"),
                                                  event("default", "eks-node-monitoring-agent")])
    facts.daemonsets = [daemonset("node-problem-detector", NPD, account="node-problem-detector")]
    [finding] = list(analyze_xid(facts))
    assert finding.severity == "critical" and [r.kind for r in finding.remediations] == ["cordon-gpu-node"]


def test_diagnosis_the_policy_trusts_the_namespaces_it_names():
    facts = facts_with(gpu_node("ip-10-1-0-1"), [event("gpu-health", "kernel-monitor", reason="NVRMXid")])
    facts.trusted_node_reporters = frozenset({"gpu-health"})
    [finding] = list(analyze_xid(facts))
    assert finding.severity == "error" and "by gpu-health/kernel-monitor alone" in finding.title


def test_diagnosis_tenant_xid_on_a_node_that_lost_a_gpu_is_upgraded():
    facts = facts_with(gpu_node("ip-10-1-0-1", allocatable=7), [event("team-a", "my-app")])
    [finding] = list(analyze_xid(facts))
    assert finding.severity == "critical" and [r.kind for r in finding.remediations] == ["cordon-gpu-node"]


def test_diagnosis_one_hostile_event_is_a_gap():
    broken = event("default", "kernel-monitor", reason="NVRMXid")
    broken["series"] = "often"  # not the object events.k8s.io/v1 has there: reading its count fails
    facts = facts_with(gpu_node("ip-10-1-0-1"), [broken, event("default", "kernel-monitor", reason="NVRMXid")])
    [finding] = list(analyze_xid(facts))
    assert finding.severity == "error"  # one reporter, however many of its events
    [gap] = facts.gaps
    assert gap.startswith("Not checked: an event about node/ip-10-1-0-1 (event default/") and "could not read it" in gap


@pytest.mark.parametrize("line", [
    "NVRM: Xid (PCI:0000:97:00): {n}, pid=1, GPU has fallen off the bus.",
    "AcceleratedHardwareReady  False  NvidiaXID{n}Error  detected XID-{n} on the instance",
    "XidCriticalError: Xid={n} on Device=GPU-3f9a8b2c-5d1e; marking device as unhealthy.",
])
def test_signatures_read_xids_of_at_most_four_digits(line):
    huge = [s for s in scan_line(line.format(n="7" * 5000), source="t") if "xid" in s.fields]
    assert all(len(s.fields["xid"]) <= 4 for s in huge) and not [s for s in huge if s.code == "gpu.xid_error"]
    [normal] = [s for s in scan_line(line.format(n="79"), source="t") if s.fields.get("xid") == "79"]
    assert normal.severity in ("critical", "error")


def test_diagnosis_a_tenant_cannot_say_karpenter_disrupted_a_node():
    from playbooks.analyzers.disruption import disrupted_nodes

    said = "Disrupting Node: Underutilized"
    tenant = event("team-a", "karpenter", reason="DisruptionTerminating", message=said)
    karpenter = event("default", "karpenter", reason="DisruptionTerminating", message=said)
    assert disrupted_nodes(facts_with(gpu_node("ip-10-1-0-1"), [tenant])) == {}
    assert list(disrupted_nodes(facts_with(gpu_node("ip-10-1-0-1"), [karpenter]))) == ["ip-10-1-0-1"]
