"""What an Alertmanager alert's labels say: which object it is about, how bad it is, which finding code
it is, and which storm it belongs to.

Label names come from the exporters that write them, not from us:
- kube-state-metrics (kube-prometheus-stack rules): ``pod``, ``namespace``, ``node``, ``job_name``
  (a batch Job; ``job`` is Prometheus' scrape job and never names a workload);
- Karpenter (kubernetes-sigs/karpenter pkg/metrics/constants.go): ``nodepool``, ``reason``,
  ``resource_type``;
- DCGM exporter (NVIDIA/dcgm-exporter internal/pkg/rendermetrics/render_metrics.go): ``gpu``, ``UUID``,
  ``modelName``, the node as ``Hostname`` (renamed ``hostname`` in #655), the pod using the GPU as
  ``pod`` / ``namespace`` (internal/pkg/transformation/const.go). When the ServiceMonitor does not
  honour labels, Prometheus keeps the scraped ones as ``exported_pod`` / ``exported_namespace`` and
  ``pod`` names the exporter itself.
"""
from __future__ import annotations

import ipaddress
from typing import Mapping

from playbooks import linear
from playbooks.analyzers.owners import OWNER_KINDS
from playbooks.model import Target

# RFC 1123 subdomain (pods, jobs, nodes, NodePools) and label (namespaces), as bot/targets.py checks them.
_SUBDOMAIN = linear.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = linear.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_PORT = linear.compile(r":\d{1,5}$")

# The kinds a diagnosis can be run on (bot/targets.py KINDS). An alert that names none of them gets a
# target of kind "alert": it is posted as it came, with nothing to diagnose.
DIAGNOSABLE = ("pod", *OWNER_KINDS, "node", "nodepool")

# Severity label values seen in the wild, mapped onto ours (playbooks.model.SEVERITIES).
_SEVERITY = {
    "critical": "critical", "page": "critical",
    "error": "error", "high": "error",
    "warning": "warning", "warn": "warning",
    "info": "info", "none": "info", "low": "info",
}
DEFAULT_SEVERITY = "warning"  # an alert someone wrote a rule for deserves a look, whatever it forgot to say

# Pods of a GPU metrics exporter: a `pod` label with one of these prefixes names the exporter that was
# scraped (gpu-operator's DaemonSet "nvidia-dcgm-exporter", the standalone chart's "dcgm-exporter"),
# not a workload.
_EXPORTER_PODS = ("nvidia-dcgm-exporter-", "dcgm-exporter-")
_GPU_DEVICE_LABELS = ("UUID", "gpu", "modelName")


def severity_for(labels: Mapping[str, str]) -> str:
    return _SEVERITY.get(labels.get("severity", "").strip().lower(), DEFAULT_SEVERITY)


def code_for(labels: Mapping[str, str]) -> str:
    """The finding code (docs/findings.md) for an alert we know, else ``alertmanager/<alertname>``.

    Only alerts whose evidence is the finding's own evidence are mapped: an alert that merely hints at
    a cause (low utilisation, a launch timeout) keeps its own name rather than borrow a code whose fix
    would be wrong."""
    alertname = labels["alertname"]
    mapped = _CODES.get(alertname)
    if callable(mapped):
        mapped = mapped(labels)
    return mapped or f"alertmanager/{alertname}"


def _karpenter_launch_failure(labels: Mapping[str, str]) -> str | None:
    # Our KarpenterProvisioningFailed rule keeps the `reason` of karpenter_nodeclaims_disrupted_total:
    # the lifecycle controller deletes a NodeClaim with reason "insufficient_capacity" when the cloud
    # provider had no capacity (pkg/controllers/nodeclaim/lifecycle/launch.go) and "registration_timeout"
    # when its node never registered within 15 minutes (lifecycle/liveness.go). "launch_timeout" and
    # "nodeclass_not_ready" have no finding of their own: they stay alertmanager/KarpenterProvisioningFailed.
    return {"insufficient_capacity": "karpenter.insufficient_capacity",
            "registration_timeout": "karpenter.node_registration_failed"}.get(labels.get("reason", ""))


_CODES = {
    # deploy/prometheus/gpubot-rules.yaml. Near the limit is the same problem as at the limit, told early:
    # the fix (raise spec.limits or free capacity) is the one karpenter.nodepool_limit_reached gives,
    # and the sweep's "at or above 90 % of a limit" check uses it too, so both open one incident.
    "GPUNodePoolNearLimit": "karpenter.nodepool_limit_reached",
    "KarpenterProvisioningFailed": _karpenter_launch_failure,
    # DCGM_FI_DEV_XID_ERRORS is the driver's last Xid for the GPU: the evidence gpu.xid_error rests on.
    "GPUXidError": "gpu.xid_error",
    "DCGMXidError": "gpu.xid_error",
    # kube-prometheus-stack (kubernetes-mixin) rules whose evidence is exactly a finding's:
    # kube_node_status_condition{condition="Ready"} != true, and the unreachable taint the node
    # lifecycle controller sets when Ready turns Unknown.
    "KubeNodeNotReady": "node.not_ready",
    "KubeNodeUnreachable": "node.not_ready",
    # kube_pod_container_status_waiting_reason{reason="CrashLoopBackOff"}: training.crash_loop is the
    # code for a restart loop that nothing more specific explains, which the diagnosis may refine.
    "KubePodCrashLooping": "training.crash_loop",
}

# Codes about a GPU node's hardware: the node is the target even when the series names the pod that
# was using the GPU (an Xid is the node's fault, not the job's, and cordoning acts on the node).
_NODE_FIRST = ("gpu.", "node.")


def target_for(labels: Mapping[str, str], *, code: str, am_fingerprint: str) -> Target:
    """The object an alert is about, from the most specific label that names one."""
    pod = _workload_pod(labels)
    job = job_for(labels)
    node = node_for(labels)
    nodepool_name = _name(labels.get("nodepool"))
    nodepool = Target(kind="nodepool", name=nodepool_name) if nodepool_name else None
    order = [node, pod, job, nodepool] if code.startswith(_NODE_FIRST) else [pod, job, node, nodepool]
    for target in order:
        if target is not None:
            return target
    # Nothing we could diagnose: one problem per Alertmanager alert (its fingerprint hashes its labels).
    # A namespace it is labelled with stays its namespace, so the policy decides who may read it.
    namespace = _namespace(labels.get("exported_namespace") or labels.get("namespace"))
    return Target(kind="alert", name=f"{labels['alertname']}/{am_fingerprint}", namespace=namespace)


def node_for(labels: Mapping[str, str]) -> Target | None:
    for key in ("node", "kubernetes_node", "Hostname", "hostname"):
        name = _name(labels.get(key))
        if name:
            return Target(kind="node", name=name)
    # `instance` is the scraped host:port; it names a node only where the target is addressed by its
    # node name (ip-10-0-1-23.ec2.internal:9100), never by a bare IP address.
    instance = _PORT.sub("", labels.get("instance", ""))
    if _name(instance) and not _is_ip(instance):
        return Target(kind="node", name=instance)
    return None


def job_for(labels: Mapping[str, str]) -> Target | None:
    namespace = _namespace(labels.get("exported_namespace") or labels.get("namespace"))
    if namespace is None:
        return None
    for key, kind in (("pytorchjob", "pytorchjob"), ("job_name", "job")):
        name = _name(labels.get(key))
        if name:
            return Target(kind=kind, name=name, namespace=namespace)
    return None


def group_for(labels: Mapping[str, str], *, code: str, target: Target) -> str | None:
    """The storm an alert belongs to: GPUs of one node, pods of one job, nodes of one NodePool."""
    if target.kind == "node" and (code.startswith("gpu.") or any(k in labels for k in _GPU_DEVICE_LABELS)):
        return f"{code}@node/{target.name}"
    if target.kind == "pod":
        job = job_for(labels)
        return f"{code}@{job.kind}/{job.namespace}/{job.name}" if job else None
    nodepool = _name(labels.get("nodepool"))
    if target.kind == "node" and nodepool:
        return f"{code}@nodepool/{nodepool}"
    return None


def workload_namespace(labels: Mapping[str, str]) -> str | None:
    """The namespace of the workload an alert names besides its object (DCGM's ``pod`` / ``namespace``
    beside ``Hostname``), or of anything it is labelled with; the exporter's own pod names none."""
    if not labels.get("exported_namespace") and (labels.get("pod") or "").startswith(_EXPORTER_PODS):
        return None
    return _namespace(labels.get("exported_namespace") or labels.get("namespace"))


def _workload_pod(labels: Mapping[str, str]) -> Target | None:
    if labels.get("exported_pod"):
        name, namespace = labels.get("exported_pod"), labels.get("exported_namespace") or labels.get("namespace")
    else:
        name, namespace = labels.get("pod"), labels.get("namespace")
        if name and name.startswith(_EXPORTER_PODS):
            return None
    name, namespace = _name(name), _namespace(namespace)
    return Target(kind="pod", name=name, namespace=namespace) if name and namespace else None


def _name(value: str | None) -> str | None:
    return value if value and len(value) <= 253 and _SUBDOMAIN.match(value) else None


def _namespace(value: str | None) -> str | None:
    return value if value and len(value) <= 63 and _LABEL.match(value) else None


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value.strip("[]"))
    except ValueError:
        return False
    return True
