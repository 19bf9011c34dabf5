"""When a NodeClaim waiting for a device plugin (Initialized=Unknown ResourceNotRegistered) is a fault.

kubernetes-sigs/karpenter pkg/controllers/nodeclaim/lifecycle/initialization.go (v1.0-v1.14)
RequestedResourcesRegistered waits, with no deadline, until every extended resource the NodeClaim requested
is non-zero in the node's allocatable; the kubelet zeroes extended resources at start and only the device
plugin puts them back. Every GPU node passes through this state. It becomes a finding
(karpenter.resource_not_registered) only when both hold:

- the wait is longer than nodeclaim.RESOURCE_GRACE_S since the NodeClaim registered, and
- the cluster shows why the plugin is not there: no DaemonSet of that plugin at all (on a node whose OS does
  not ship one: Bottlerocket's NVIDIA variants and EKS Auto Mode do), a plugin DaemonSet that cannot run on
  the node (a node taint it does not tolerate, a nodeSelector the node does not match), a plugin DaemonSet
  with pods not ready, or no plugin pod on that node when its pods there were listed.

A long wait with none of these is left to the provisioning analyzer, which calls it stuck without blaming
the plugin (a driver missing from the AMI looks the same from here).
"""
from __future__ import annotations

from datetime import datetime

from playbooks.facts import Facts
from playbooks.karpenter.nodeclaim import RESOURCE_GRACE_S, registered_for, unregistered_resource
from playbooks.karpenter.resources import untolerated

# resource -> the word its device plugin's DaemonSet carries in its name or labels
_VENDOR = (("nvidia.com/", "nvidia"), ("vpc.amazonaws.com/efa", "efa"), ("aws.amazon.com/neuron", "neuron"),
           ("amd.com/", "amd"), ("habana.ai/", "habana"))
# kubernetes/kubernetes pkg/controller/daemon/util/daemonset_util.go AddOrUpdateDaemonPodTolerations: every
# DaemonSet pod tolerates these, whatever its spec says
_DAEMON_TOLERATIONS = [{"key": k, "operator": "Exists"} for k in (
    "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure", "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/network-unavailable")]


def _vendor(resource: str) -> str | None:
    return next((word for prefix, word in _VENDOR if resource.startswith(prefix)), None)


def _plugins(facts: Facts, vendor: str) -> list[dict]:
    out = []
    for ds in facts.daemonsets or facts.device_plugins:
        meta = ds.get("metadata") or {}
        text = " ".join([meta.get("name", ""), *map(str, (meta.get("labels") or {}).values())]).lower()
        if "device-plugin" in text and vendor in text and "mps-control" not in text:
            out.append(ds)
    return out


def _built_in(claim: dict, node: dict | None, vendor: str) -> bool:
    """The OS runs the plugin itself: EKS Auto Mode nodes, Bottlerocket's NVIDIA variants."""
    ref = (claim.get("spec") or {}).get("nodeClassRef") or {}
    if ref.get("group") == "eks.amazonaws.com":
        return True
    os_image = str((((node or {}).get("status") or {}).get("nodeInfo") or {}).get("osImage") or "")
    return vendor == "nvidia" and "bottlerocket" in os_image.lower()


def _as_node(claim: dict) -> dict:
    """The node as the NodeClaim makes it, when the node itself was not read: Karpenter puts the claim's
    labels and taints on it (kubernetes-sigs/karpenter pkg/controllers/nodeclaim/lifecycle/registration.go
    syncNode). Startup taints are left out: Initialized reaches ResourceNotRegistered only once they are gone."""
    return {"metadata": {"labels": (claim.get("metadata") or {}).get("labels") or {}},
            "spec": {"taints": (claim.get("spec") or {}).get("taints") or []}}


def _cannot_run(ds: dict, node: dict) -> str | None:
    spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    taints = (node.get("spec") or {}).get("taints") or []
    kept = untolerated(taints, (spec.get("tolerations") or []) + _DAEMON_TOLERATIONS)
    if kept:
        t = kept[0]
        return f"does not tolerate the node's taint {t.get('key')}{'=' + str(t['value']) if t.get('value') else ''}:{t.get('effect')}"
    labels = (node.get("metadata") or {}).get("labels") or {}
    wrong = {k: v for k, v in (spec.get("nodeSelector") or {}).items() if labels.get(k) != str(v)}
    if wrong:
        return "selects nodes labelled " + ", ".join(f"{k}={v}" for k, v in sorted(wrong.items())) + ", which the node is not"
    return None


def _name(ds: dict) -> str:
    meta = ds.get("metadata") or {}
    return f"daemonset/{meta.get('namespace', '')}/{meta.get('name', '?')}"


def plugin_fault(claim: dict, facts: Facts) -> str | None:
    """What shows the device plugin for the awaited resource missing or unhealthy on the claim's node, in
    words; None when nothing does (or the DaemonSets could not be read)."""
    resource = unregistered_resource(claim)
    vendor = _vendor(resource or "")
    if vendor is None or "daemonsets" in facts.unread:
        return None
    node_name = (claim.get("status") or {}).get("nodeName") or ""
    node = facts.nodes.get(node_name) or _as_node(claim)
    if _built_in(claim, node, vendor):
        return None
    plugins = _plugins(facts, vendor)
    if not plugins:
        return f"no {vendor} device plugin DaemonSet runs in the cluster to register {resource}"
    if node:
        reasons = [(ds, _cannot_run(ds, node)) for ds in plugins]
        if all(why for _, why in reasons):
            ds, why = reasons[0]
            return f"{_name(ds)} {why}, so no plugin pod runs on node {node_name}"
    for ds in plugins:
        status = ds.get("status") or {}
        desired, ready = int(status.get("desiredNumberScheduled") or 0), int(status.get("numberReady") or 0)
        if desired and ready < desired:
            return f"{_name(ds)} has {desired - ready} of {desired} pods not ready"
    if node_name in facts.device_plugin_logs and not facts.device_plugin_logs[node_name]:
        return f"no device plugin pod was found on node {node_name}"
    return None


def awaiting_device_plugin(claim: dict, facts: Facts, *, now: datetime | None = None) -> bool:
    """A NodeClaim waiting for a resource to register, with nothing (yet) to say the plugin failed: young,
    or past the grace with no evidence against the plugin."""
    if unregistered_resource(claim) is None:
        return False
    waited = registered_for(claim, now=now)
    young = waited is None or waited <= RESOURCE_GRACE_S
    return young or plugin_fault(claim, facts) is None


def device_plugin_failed(claim: dict, facts: Facts, *, now: datetime | None = None) -> bool:
    """Waited past the grace, and the cluster shows the plugin missing or unhealthy on the node."""
    return unregistered_resource(claim) is not None and not awaiting_device_plugin(claim, facts, now=now)
