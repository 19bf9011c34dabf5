"""Who may speak for a node: the components believed when an Event says a node's GPU is broken (an Xid,
ECC, NVLink, a device unhealthy), and the node status that corroborates a claim nobody vouches for.

Whoever may create Events in a namespace can write one about any Node and name any component: the API
server checks neither ``involvedObject`` nor ``source`` / ``reportingController``. What a tenant cannot
do is write into a namespace it does not own. Event recorders put the events of cluster-scoped objects,
Nodes among them, in "default": a Node's reference has no namespace (client-go tools/reference/ref.go
GetReference) and both recorders fall back to ``metav1.NamespaceDefault`` (client-go
tools/record/event.go and tools/events/event_recorder.go, ``makeEvent``). So a claim counts when both
hold: the reporting component is on this table, and the event lives in "default" or in a namespace the
component is installed in (where a recorder that sets its own namespace on the reference writes).

Everything else is a claim: shown as "reported by NAMESPACE/COMPONENT, not corroborated", at most a
warning, never a reason to cordon, unless the node's own status (written by kubelet and the node
monitoring agent through nodes/status, which tenants cannot write) shows the same trouble.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from playbooks.analyzers.evidence import event_component
from playbooks.karpenter.resources import quantity

GPU = "nvidia.com/gpu"
# client-go tools/record/event.go makeEvent: `if namespace == "" { namespace = metav1.NamespaceDefault }`
NODE_EVENTS_NAMESPACE = "default"
# Where the NVIDIA device plugin runs: kube-system (static manifest, EKS add-on), its Helm chart's
# nvidia-device-plugin, or the GPU Operator's gpu-operator / nvidia-gpu-operator (OpenShift).
DEVICE_PLUGIN_NAMESPACES = frozenset({"kube-system", "nvidia-device-plugin", "gpu-operator", "nvidia-gpu-operator"})


@dataclass(frozen=True)
class Speaker:
    component: str  # the recorder's component, as source.component / reportingController carry it
    namespaces: frozenset[str]  # where its node events may live (always "default")
    who: str  # what it is, and where upstream names the component


def _speaker(component: str, *installed: str, who: str) -> Speaker:
    return Speaker(component, frozenset({NODE_EVENTS_NAMESPACE, *installed}), who)


SPEAKERS: tuple[Speaker, ...] = (
    _speaker("kubelet", who="the node's kubelet (kubernetes/kubernetes pkg/kubelet, EventSource component \"kubelet\")"),
    _speaker("eks-node-monitoring-agent", "kube-system",
             who="the EKS node monitoring agent (aws/eks-node-monitoring-agent cmd/eks-node-monitoring-agent/main.go "
                 "GetEventRecorderFor(\"eks-node-monitoring-agent\"), installed in kube-system)"),
    _speaker("karpenter", "kube-system", "karpenter",
             who="Karpenter (kubernetes-sigs/karpenter GetEventRecorderFor(\"karpenter\"))"),
    _speaker("nvidia-device-plugin", *DEVICE_PLUGIN_NAMESPACES, who="the NVIDIA device plugin"),
    _speaker("nvidia-gpu-operator", "gpu-operator", "nvidia-gpu-operator",
             who="the NVIDIA GPU Operator (NVIDIA/gpu-operator cmd/gpu-operator/main.go "
                 "GetEventRecorderFor(\"nvidia-gpu-operator\"))"),
    _speaker("kernel-monitor", "kube-system", "node-problem-detector",
             who="node-problem-detector's kernel monitor, reading the node's kernel log "
                 "(kubernetes/node-problem-detector config/kernel-monitor.json \"source\")"),
)

# The speakers in words, for the text of a claim nobody vouched for.
SPEAKERS_NAMED = ("kubelet, the NVIDIA device plugin or GPU Operator, the EKS node monitoring agent, Karpenter, "
                  "node-problem-detector")

# Longest namespace a cluster accepts (a DNS label); a component is shown no longer than this either.
SHOWN = 63


@dataclass(frozen=True)
class Voice:
    """Who wrote one event, and whether that writer may speak for a node."""

    namespace: str
    component: str
    trusted: bool

    @property
    def label(self) -> str:
        return f"{_shown(self.namespace) or '(no namespace)'}/{_shown(self.component) or '(no component)'}"

    @property
    def caveat(self) -> str:
        return f"reported by {self.label}, not corroborated"


def voice_of(event: dict, *, speakers: tuple[Speaker, ...] = SPEAKERS) -> Voice:
    namespace = str((event.get("metadata") or {}).get("namespace") or "")
    component = event_component(event).strip()
    trusted = any(s.component == component and namespace in s.namespaces for s in speakers)
    return Voice(namespace, component, trusted)


def plugin_voice(namespace: str, pod: str) -> Voice:
    """A device plugin pod's log speaks for its node only from a namespace the plugin is installed in:
    a tenant can start a pod with the plugin's labels in its own namespace."""
    return Voice(namespace, f"pod {pod}", namespace in DEVICE_PLUGIN_NAMESPACES)


def hardware_claim(code: str, fields: Mapping[str, str]) -> bool:
    """A claim that a node's GPU is at fault: any gpu.* finding (Xid, ECC, NVLink, DCGM, unhealthy
    device, see playbooks/codes.py), or any line that carries an Xid (an application Xid too)."""
    return code.startswith("gpu.") or "xid" in fields


def node_vouches(node: dict | None) -> str | None:
    """What the node's own status says of a broken GPU, or None: GPUs in capacity missing from
    allocatable (the device plugin took them out, NVIDIA/k8s-device-plugin internal/rm/health.go), or the
    node monitoring agent's AcceleratedHardwareReady=False (aws/eks-node-monitoring-agent reasons.yaml)."""
    status = (node or {}).get("status") or {}
    capacity, allocatable = _gpus(status, "capacity"), _gpus(status, "allocatable")
    if capacity and allocatable is not None and allocatable < capacity:
        return f"node status: allocatable {GPU} {allocatable:g} of capacity {capacity:g}"
    for cond in status.get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == "AcceleratedHardwareReady" and cond.get("status") == "False":
            return f"node status: AcceleratedHardwareReady=False ({_shown(str(cond.get('reason') or 'no reason given'))})"
    return None


def _gpus(status: dict, which: str) -> float | None:
    value = (status.get(which) or {}).get(GPU)
    if value is None:
        return None
    try:
        return quantity(value)
    except ValueError:
        return None


def _shown(text: str) -> str:
    """Tenant-chosen text as one short line: printable characters only, at most SHOWN of them."""
    flat = "".join(c if c.isprintable() and not c.isspace() else " " for c in text)
    flat = " ".join(flat.split())
    return flat if len(flat) <= SHOWN else flat[:SHOWN - 3] + "..."
