"""The cluster's own words outrank the model: Karpenter's and the scheduler's messages are never
silenced, pods held on purpose are said to be held, and a node on its way is the answer, not noise."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from playbooks.analyzers import signals, waiting
from playbooks.engine import analyze
from playbooks.facts import Facts, PodFacts
from playbooks.model import Target
from playbooks.registry import Registry


def _ago(seconds: float) -> str:
    return (datetime.now(timezone.utc) - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod(name: str = "bert-large-0", *, phase: str = "Pending", node: str | None = None, **spec) -> dict:
    body = {"containers": [{"name": "trainer", "resources": {"requests": {"cpu": "30", "nvidia.com/gpu": "4"}}}], **spec}
    if node:
        body["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "nlp", "labels": {}},
            "spec": body, "status": {"phase": phase}}


def _event(reason: str, message: str, *, component: str, seconds_ago: float = 30, new_shape: bool = False) -> dict:
    if new_shape:  # events.k8s.io/v1 served through core/v1: no lastTimestamp, a series instead
        return {"reason": reason, "message": message, "type": "Warning", "reportingComponent": component,
                "eventTime": _ago(seconds_ago + 60), "series": {"count": 7, "lastObservedTime": _ago(seconds_ago)}}
    return {"reason": reason, "message": message, "type": "Warning", "source": {"component": component},
            "lastTimestamp": _ago(seconds_ago), "count": 3}


def _facts(pod: dict, events: list[dict], **cache) -> Facts:
    facts = Facts(target=Target(kind="pod", name=pod["metadata"]["name"], namespace="nlp"), cluster="test")
    facts.pods.append(PodFacts(pod=pod, events=events))
    facts.cache.update(cache)
    return facts


def _registry(*names: str) -> Registry:
    registry = Registry()
    table = {"waiting": waiting.analyze, "signals": signals.analyze}
    for name in names:
        registry.register(name, table[name])
    return registry


LIMITS_V15 = "Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=cpu-heavy)"
OFFERING_V18 = 'Failed to schedule pod, incompatible with nodepool "spot-only", daemonset overhead={"cpu":"210m"}, no instance type has the required offering'
SPREAD = ("0/6 nodes are available: 2 node(s) didn't match pod topology spread constraints, 4 node(s) didn't match "
          "Pod's node affinity/selector. preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling.")


def test_karpenter_message_is_reported_when_the_model_thinks_the_pod_fits():
    pod = _pod()
    facts = _facts(pod, [_event("FailedScheduling", LIMITS_V15, component="karpenter")],
                   pending_ok={"bert-large-0"}, pending_ok_nodepools={"bert-large-0": ["cpu-heavy"]})
    diagnosis = analyze(facts, registry=_registry("signals"))
    first = diagnosis.findings[0]
    assert first.code == "karpenter.nodepool_limit_reached"
    assert first.severity == "error"  # never lowered to info
    assert first.confidence != "high"  # the model's disagreement lowers confidence
    assert "could not confirm" in first.detail and "cpu-heavy" in first.detail
    assert first.evidence[0].text == LIMITS_V15
    assert not diagnosis.summary.startswith("No known problem")


def test_offering_message_in_todays_event_shape_is_reported():
    facts = _facts(_pod(), [_event("FailedScheduling", OFFERING_V18, component="karpenter", new_shape=True)],
                   pending_ok={"bert-large-0"})
    codes = [f.code for f in analyze(facts, registry=_registry("signals")).findings]
    assert codes and codes[0] in ("karpenter.offering_unavailable_in_zone", "karpenter.no_instance_type")


def test_scheduler_message_is_reported_when_karpenter_is_silent():
    facts = _facts(_pod(), [_event("FailedScheduling", SPREAD, component="default-scheduler")], pending_ok={"bert-large-0"})
    diagnosis = analyze(facts, registry=_registry("signals"))
    spread = next(f for f in diagnosis.findings if f.code == "scheduling.topology_spread")
    assert spread.severity != "info" and "could not confirm" in spread.detail
    assert not diagnosis.summary.startswith("No known problem")


def test_without_the_model_the_message_keeps_its_confidence():
    facts = _facts(_pod(), [_event("FailedScheduling", LIMITS_V15, component="karpenter")])
    (finding,) = analyze(facts, registry=_registry("signals")).findings
    assert finding.confidence == "high" and "could not confirm" not in finding.detail


def test_a_karpenter_failure_before_a_nomination_is_history():
    claim = _claim("cpu-heavy-x7k2p", launched=False, seconds_old=40)
    facts = _facts(_pod(), [
        _event("FailedScheduling", LIMITS_V15, component="karpenter", seconds_ago=300),
        _event("Nominated", "Pod should schedule on: nodeclaim/cpu-heavy-x7k2p", component="karpenter", seconds_ago=40),
    ])
    facts.nodeclaims["cpu-heavy-x7k2p"] = claim
    diagnosis = analyze(facts, registry=_registry("waiting", "signals"))
    assert [f.code for f in diagnosis.findings] == ["karpenter.provisioning"]
    assert diagnosis.findings[0].severity == "info"
    assert diagnosis.summary.startswith("A node is on its way for bert-large-0: NodeClaim cpu-heavy-x7k2p (p5.48xlarge) launching")


def test_a_karpenter_failure_after_a_nomination_still_counts():
    facts = _facts(_pod(), [
        _event("Nominated", "Pod should schedule on: nodeclaim/cpu-heavy-x7k2p", component="karpenter", seconds_ago=600),
        _event("FailedScheduling", LIMITS_V15, component="karpenter", seconds_ago=20),
    ])
    facts.nodeclaims["cpu-heavy-x7k2p"] = _claim("cpu-heavy-x7k2p", launched=False, seconds_old=600)
    findings = analyze(facts, registry=_registry("waiting", "signals")).findings
    assert findings[0].code == "karpenter.nodepool_limit_reached" and findings[0].severity == "error"
    late = next(f for f in findings if f.code == "karpenter.provisioning")
    assert late.severity == "warning" and "past the 5-minute limit" in late.detail


def test_scheduler_noise_while_a_node_is_on_its_way_is_info():
    taint = ("0/3 nodes are available: 1 node(s) had untolerated taint {karpenter.sh/unregistered: }, 2 node(s) didn't "
             "match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
    facts = _facts(_pod(), [
        _event("Nominated", "Pod should schedule on: nodeclaim/gpu-4bq9z, node/ip-10-1-2-3.ec2.internal", component="karpenter", seconds_ago=90),
        _event("FailedScheduling", taint, component="default-scheduler", seconds_ago=10),
    ])
    facts.nodeclaims["gpu-4bq9z"] = _claim("gpu-4bq9z", launched=True, registered=True, seconds_old=95)
    diagnosis = analyze(facts, registry=_registry("waiting", "signals"))
    assert all(f.severity == "info" for f in diagnosis.findings), [(f.code, f.severity) for f in diagnosis.findings]
    assert "registered, initializing" in diagnosis.summary


def test_a_nomination_whose_nodeclaim_is_gone_is_not_on_its_way():
    facts = _facts(_pod(), [
        _event("Nominated", "Pod should schedule on: nodeclaim/gpu-gone1", component="karpenter", seconds_ago=900),
        _event("FailedScheduling", LIMITS_V15, component="karpenter", seconds_ago=950),
    ])
    findings = analyze(facts, registry=_registry("waiting", "signals")).findings
    assert [f.code for f in findings] == ["karpenter.nodepool_limit_reached"]


def test_a_message_from_before_the_pod_was_placed_is_history():
    facts = _facts(_pod(phase="Running", node="ip-10-1-2-3.ec2.internal"),
                   [_event("FailedScheduling", LIMITS_V15, component="karpenter")])
    assert analyze(facts, registry=_registry("signals")).findings == []


def test_scheduling_gates_are_the_answer():
    pod = _pod(schedulingGates=[{"name": "kueue.x-k8s.io/admission"}])
    pod["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "team-nlp"
    pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                                    "message": "Scheduling is blocked due to non-empty scheduling gates"}]
    diagnosis = analyze(_facts(pod, []), registry=_registry("waiting", "signals"))
    first = diagnosis.findings[0]
    assert first.code == "scheduling.gated" and first.severity == "warning"
    assert "team-nlp" in first.detail and "Kueue" in first.detail
    assert any("non-empty scheduling gates" in e.text for e in first.evidence)
    assert first.fix is not None and "schedulingGates" in first.fix.snippet


def test_a_suspended_pytorchjob_is_gated():
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
           "metadata": {"name": "t5-xl", "namespace": "nlp", "labels": {"kueue.x-k8s.io/queue-name": "team-nlp"}},
           "spec": {"runPolicy": {"suspend": True}, "pytorchReplicaSpecs": {}},
           "status": {"conditions": [{"type": "Suspended", "status": "True", "reason": "PyTorchJobSuspended",
                                      "message": "PyTorchJob t5-xl is suspended."}]}}
    facts = Facts(target=Target(kind="pytorchjob", name="t5-xl", namespace="nlp"), cluster="test",
                  owner=job, owner_kind="pytorchjob")
    diagnosis = analyze(facts, registry=_registry("waiting", "signals"))
    assert [f.code for f in diagnosis.findings] == ["scheduling.gated"]
    assert diagnosis.summary.startswith("t5-xl is suspended")


def _claim(name: str, *, launched: bool, seconds_old: float, registered: bool = False) -> dict:
    conditions = [{"type": "Launched", "status": "True" if launched else "Unknown"},
                  {"type": "Registered", "status": "True" if registered else "Unknown"},
                  {"type": "Initialized", "status": "Unknown"}]
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": name, "creationTimestamp": _ago(seconds_old),
                         "labels": {"node.kubernetes.io/instance-type": "p5.48xlarge", "karpenter.sh/nodepool": "cpu-heavy"}},
            "status": {"conditions": conditions}}


def test_an_error_about_another_nodepool_ranks_below_the_one_the_pod_is_meant_for():
    message = ('Failed to schedule pod, incompatible with nodepool "gpu-h100", daemonset overhead={"cpu":"200m"}, '
               'did not tolerate taint (taint=nvidia.com/gpu=true:NoSchedule); incompatible with nodepool "general", '
               'daemonset overhead={"cpu":"200m"}, no instance type has enough resources')
    facts = _facts(_pod(), [_event("FailedScheduling", message, component="karpenter")],
                   pending_nodepools={"bert-large-0": ["gpu-h100"]})
    findings = analyze(facts, registry=_registry("signals")).findings
    assert findings[0].code == "scheduling.untolerated_taint"
    other = next(f for f in findings if f.code == "karpenter.no_instance_type")
    assert other.confidence == "low" and "general" in other.detail and other.severity == "warning"


def test_a_message_no_signature_knows_is_quoted_not_dropped():
    odd = "Failed to schedule pod, nodeclass ec2-gpu is being deleted (NodePool=gpu-h100)"
    facts = _facts(_pod(), [_event("FailedScheduling", odd, component="karpenter")])
    diagnosis = analyze(facts, registry=_registry("signals"))
    [finding] = diagnosis.findings
    assert finding.code == "cluster.unrecognised" and finding.severity == "error" and finding.confidence == "low"
    assert "karpenter" in finding.title and finding.evidence[0].text == odd
    assert not any(odd in gap for gap in diagnosis.gaps)


def _waiting_for_gpus(seconds_old: float, *, daemonsets: list[dict]) -> Facts:
    facts = _facts(_pod(), [
        _event("Nominated", "Pod should schedule on: nodeclaim/gpu-9xk2w, node/ip-10-9-1-7.ec2.internal",
               component="karpenter", seconds_ago=seconds_old - 100),
    ])
    claim = _claim("gpu-9xk2w", launched=True, registered=True, seconds_old=seconds_old)
    claim["status"]["conditions"][2] = {"type": "Initialized", "status": "Unknown", "reason": "ResourceNotRegistered",
                                        "message": 'Resource "nvidia.com/gpu" was requested but not registered'}
    facts.nodeclaims["gpu-9xk2w"] = claim
    facts.daemonsets = daemonsets
    return facts


_PLUGIN = {"metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": "kube-system"},
           "status": {"desiredNumberScheduled": 3, "numberReady": 3}}


def test_a_young_nodeclaim_waiting_for_its_device_plugin_is_on_its_way():
    # initialization.go: every GPU NodeClaim is Initialized=Unknown ResourceNotRegistered until the plugin registers
    diagnosis = analyze(_waiting_for_gpus(400, daemonsets=[]), registry=_registry("waiting", "signals"))
    assert [(f.code, f.severity) for f in diagnosis.findings] == [("karpenter.provisioning", "info")]


def test_a_nodeclaim_waiting_long_with_no_device_plugin_in_the_cluster_is_not_on_its_way():
    diagnosis = analyze(_waiting_for_gpus(1500, daemonsets=[]), registry=_registry("waiting", "signals"))
    assert diagnosis.findings[0].code == "karpenter.resource_not_registered"
    assert diagnosis.findings[0].evidence[0].source == "nodeclaim/gpu-9xk2w status.conditions[Initialized]"
    assert "karpenter.provisioning" not in [f.code for f in diagnosis.findings]


def test_a_long_wait_with_a_healthy_device_plugin_is_stuck_but_not_blamed_on_the_plugin():
    diagnosis = analyze(_waiting_for_gpus(1500, daemonsets=[_PLUGIN]), registry=_registry("waiting", "signals"))
    assert [(f.code, f.severity) for f in diagnosis.findings] == [("karpenter.provisioning", "warning")]
    assert "device plugin never registered it" in diagnosis.findings[0].detail


def test_a_nodepool_whose_nodes_fail_to_register_is_reported():
    facts = _facts(_pod(nodeSelector={"karpenter.sh/nodepool": "asr"}), [])
    facts.nodepools["asr"] = {"metadata": {"name": "asr"}, "spec": {}, "status": {"conditions": [
        {"type": "NodeRegistrationHealthy", "status": "False", "reason": "RegistrationFailed",
         "message": "Failed to register node"}]}}
    facts.nodepools["unrelated"] = {"metadata": {"name": "unrelated"}, "spec": {}, "status": {"conditions": [
        {"type": "NodeClassReady", "status": "False", "reason": "NodeClassNotReady", "message": "subnets not found"}]}}
    findings = analyze(facts, registry=_registry("signals")).findings
    assert [f.code for f in findings] == ["karpenter.node_registration_failed"]
    assert findings[0].evidence[0].source == "nodepool/asr status.conditions[NodeRegistrationHealthy]"
