"""A NodeClaim waiting for its device plugin (kubernetes-sigs/karpenter pkg/controllers/nodeclaim/lifecycle/
initialization.go: Initialized=Unknown ResourceNotRegistered, no deadline) is normal while young; it is a
fault only past the grace with the plugin shown missing or unhealthy on its node."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from playbooks.facts import Facts
from playbooks.karpenter import nodeclaim
from playbooks.karpenter.device_plugin_evidence import awaiting_device_plugin, device_plugin_failed, plugin_fault
from playbooks.model import Target

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
NODE = "ip-10-4-7-21.ap-south-1.compute.internal"


def claim(minutes_registered: float, *, resource="nvidia.com/gpu", group="karpenter.k8s.aws") -> dict:
    at = (NOW - timedelta(minutes=minutes_registered)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"metadata": {"name": "gpu-7xq2d", "creationTimestamp": at},
            "spec": {"nodeClassRef": {"group": group, "kind": "EC2NodeClass", "name": "gpu"}},
            "status": {"nodeName": NODE, "conditions": [
                {"type": "Launched", "status": "True"},
                {"type": "Registered", "status": "True", "lastTransitionTime": at},
                {"type": "Initialized", "status": "Unknown", "reason": "ResourceNotRegistered",
                 "message": f'Resource "{resource}" was requested but not registered'}]}}


def node(*, taints=(), os_image="Amazon Linux 2023.6.20250115") -> dict:
    return {"metadata": {"name": NODE, "labels": {"karpenter.k8s.aws/instance-family": "g6"}},
            "spec": {"taints": list(taints)}, "status": {"nodeInfo": {"osImage": os_image}}}


def plugin(*, ready=2, desired=2, tolerations=({"key": "nvidia.com/gpu", "operator": "Exists"},), selector=None) -> dict:
    spec = {"tolerations": list(tolerations), "containers": [{"name": "nvidia-device-plugin-ctr"}]}
    if selector:
        spec["nodeSelector"] = selector
    return {"metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": "kube-system"},
            "spec": {"template": {"spec": spec}}, "status": {"desiredNumberScheduled": desired, "numberReady": ready}}


def facts(*daemonsets, the_node=None, unread=()) -> Facts:
    found = Facts(target=Target("pod", "train-0", "ml"), cluster="test", daemonsets=list(daemonsets),
                  nodes={NODE: the_node if the_node is not None else node()})
    found.unread.update(unread)
    return found


def test_the_resource_is_read_from_the_condition():
    assert nodeclaim.unregistered_resource(claim(1, resource="vpc.amazonaws.com/efa")) == "vpc.amazonaws.com/efa"
    assert nodeclaim.stage(claim(1)) == ("registered, initializing", None)
    assert nodeclaim.within_limits(claim(1))


def test_young_is_waiting_whatever_the_cluster_shows():
    assert awaiting_device_plugin(claim(3), facts(), now=NOW)  # no plugin at all, but only 3 minutes
    assert not device_plugin_failed(claim(3), facts(), now=NOW)


@pytest.mark.parametrize("daemonsets, the_node, says", [
    ((), None, "no nvidia device plugin DaemonSet runs in the cluster"),
    ((plugin(tolerations=()),), node(taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]),
     "does not tolerate the node's taint nvidia.com/gpu=true:NoSchedule"),
    ((plugin(selector={"nvidia.com/gpu.present": "true"}),), None, "selects nodes labelled nvidia.com/gpu.present=true"),
    ((plugin(ready=1, desired=3),), None, "has 2 of 3 pods not ready"),
])
def test_past_the_grace_the_plugin_missing_or_unhealthy_is_a_fault(daemonsets, the_node, says):
    found = facts(*daemonsets, the_node=the_node)
    assert says in plugin_fault(claim(40), found)
    assert device_plugin_failed(claim(40), found, now=NOW)


def test_past_the_grace_a_healthy_plugin_is_not_blamed():
    found = facts(plugin(), the_node=node(taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]))
    assert plugin_fault(claim(40), found) is None
    assert awaiting_device_plugin(claim(40), found, now=NOW)


def test_no_daemonset_is_no_evidence_where_the_os_runs_the_plugin_or_daemonsets_were_not_read():
    assert plugin_fault(claim(40), facts(the_node=node(os_image="Bottlerocket OS 1.26.1 (aws-k8s-1.31-nvidia)"))) is None
    assert plugin_fault(claim(40, group="eks.amazonaws.com"), facts()) is None
    assert plugin_fault(claim(40), facts(unread=("daemonsets",))) is None


def test_other_reasons_are_not_this_wait():
    other = claim(40)
    other["status"]["conditions"][2] = {"type": "Initialized", "status": "Unknown", "reason": "StartupTaintsExist"}
    assert not awaiting_device_plugin(other, facts(), now=NOW) and not device_plugin_failed(other, facts(), now=NOW)
