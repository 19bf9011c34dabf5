"""Two signals the live reachability test (tests/e2e/test_live_reachability.py) found dropped while the
cluster stated them:

- kubelet's admission rejection of a pod (reason OutOf<resource>, kubernetes/kubernetes
  pkg/kubelet/lifecycle/predicate.go "Node didn't have enough resource: %s, requested: %d, used: %d,
  capacity: %d") was weighed as FailedScheduling history because the pod was no longer Pending;
- a NodeClaim registered 40 minutes ago with Initialized Unknown StartupTaintsExist (kubernetes-sigs/
  karpenter pkg/controllers/nodeclaim/lifecycle/initialization.go) was "a node on its way" for good,
  since Karpenter sets initialization no limit.
The lines are tests/playbooks/lines.py's.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from playbooks.analyzers import signals, waiting
from playbooks.analyzers.initializing import INITIALIZATION_GRACE_S, initializing_too_long
from playbooks.engine import analyze
from playbooks.facts import Facts, PodFacts
from playbooks.model import Target
from playbooks.registry import Registry
from tests.playbooks.lines import LINES


def _line(code: str, index: int = 0) -> str:
    return [line for c, line, _ in LINES if c == code][index]


OUT_OF_GPU = re.split(r"\s{2,}", _line("karpenter.resource_not_registered", 1).strip())[-1]
STARTUP_TAINT = re.split(r"\s{2,}", _line("karpenter.node_registration_failed", 0).strip(), maxsplit=3)


def _ago(seconds: float) -> str:
    return (datetime.now(timezone.utc) - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _registry() -> Registry:
    registry = Registry()
    registry.register("waiting", waiting.analyze)
    registry.register("signals", signals.analyze)
    return registry


def _facts(pod: dict, events: list[dict]) -> Facts:
    facts = Facts(target=Target(kind="pod", name=pod["metadata"]["name"], namespace="nlp"), cluster="test")
    facts.pods.append(PodFacts(pod=pod, events=events))
    return facts


def _pod(*, phase: str, node: str | None = None, **status) -> dict:
    spec = {"containers": [{"name": "trainer", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": "train-0", "namespace": "nlp"}, "spec": spec, "status": {"phase": phase, **status}}


def _event(reason: str, message: str, *, component: str, seconds_ago: float = 60) -> dict:
    return {"reason": reason, "message": message, "type": "Warning", "source": {"component": component},
            "lastTimestamp": _ago(seconds_ago), "count": 1}


def test_a_kubelet_admission_rejection_is_not_scheduling_history():
    pod = _pod(phase="Failed", node="ip-10-0-3-7.ec2.internal", reason="OutOfnvidia.com/gpu",
               message=f"Pod was rejected: {OUT_OF_GPU}")
    facts = _facts(pod, [_event("OutOfnvidia.com/gpu", OUT_OF_GPU, component="kubelet")])
    found = {f.code: f.severity for f in analyze(facts, registry=_registry()).findings}
    assert found.get("karpenter.resource_not_registered") not in (None, "info"), found


def test_the_schedulers_words_about_a_placed_pod_stay_history():
    message = "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) didn't match Pod's node affinity/selector."
    facts = _facts(_pod(phase="Running", node="ip-10-0-3-7.ec2.internal"),
                   [_event("FailedScheduling", message, component="default-scheduler")])
    assert analyze(facts, registry=_registry()).findings == []


def _claim(*, registered_s_ago: float) -> dict:
    kind, status, reason, message = STARTUP_TAINT
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": "gpu-live1", "creationTimestamp": _ago(registered_s_ago + 90),
                         "labels": {"karpenter.sh/nodepool": "gpu"}},
            "status": {"conditions": [
                {"type": "Launched", "status": "True", "reason": "Launched", "lastTransitionTime": _ago(registered_s_ago + 60)},
                {"type": "Registered", "status": "True", "reason": "Registered", "lastTransitionTime": _ago(registered_s_ago)},
                {"type": kind, "status": status, "reason": reason, "message": message,
                 "lastTransitionTime": _ago(registered_s_ago)}]}}


def _nominated(claim: dict) -> Facts:
    facts = _facts(_pod(phase="Pending"), [
        _event("Nominated", "Pod should schedule on: nodeclaim/gpu-live1", component="karpenter", seconds_ago=3000)])
    facts.nodeclaims["gpu-live1"] = claim
    return facts


def test_a_node_initializing_past_the_grace_is_stuck_not_on_its_way():
    claim = _claim(registered_s_ago=INITIALIZATION_GRACE_S + 25 * 60)
    assert initializing_too_long(claim)
    found = {f.code: f for f in analyze(_nominated(claim), registry=_registry()).findings}
    assert found["karpenter.node_registration_failed"].severity != "info"
    assert "nvidia.com/gpu-driver-not-ready" in found["karpenter.node_registration_failed"].title
    assert found["karpenter.provisioning"].severity == "warning"
    assert "StartupTaintsExist" in found["karpenter.provisioning"].detail


def test_a_node_initializing_for_minutes_is_on_its_way():
    claim = _claim(registered_s_ago=120)
    assert not initializing_too_long(claim)
    found = {f.code: f.severity for f in analyze(_nominated(claim), registry=_registry()).findings}
    assert found == {"karpenter.provisioning": "info"}
