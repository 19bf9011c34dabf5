"""Who may speak for a node: the components believed when an Event says a node's GPU is broken (an Xid,
ECC, NVLink, a device unhealthy), and the node status that corroborates a claim nobody vouches for.

Whoever may create Events in a namespace can write one about any Node and name any component: the API
server checks neither ``involvedObject`` nor ``source`` / ``reportingController``. Nor does a namespace's
name say who runs in it: a tenant allowed to create namespaces can make one called
``node-problem-detector`` or ``gpu-operator``. So a claim counts when the reporting component is on this
table and either

- the event lives in "default": event recorders put the events of cluster-scoped objects, Nodes among
  them, there (a Node's reference has no namespace, client-go tools/reference/ref.go GetReference, and
  both recorders fall back to ``metav1.NamespaceDefault``, client-go tools/record/event.go and
  tools/events/event_recorder.go ``makeEvent``); or
- the component is seen running in the event's namespace: a DaemonSet there with pods ready, whose
  containers run the component's image and whose pods run as a ServiceAccount of their own (creating
  Events takes an RBAC grant, which the component's install binds to that ServiceAccount; a tenant's
  look-alike in a namespace named after the component has no such DaemonSet); or
- the policy names the event's namespace in ``trusted_node_reporters`` (an install we cannot recognise).

Everything else is a claim: shown as "reported by NAMESPACE/COMPONENT, not corroborated", at most a
warning, never a reason to cordon, unless the node's own status (written by kubelet and the node
monitoring agent through nodes/status, which tenants cannot write) shows the same trouble.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from playbooks.analyzers.evidence import event_component
from playbooks.karpenter.resources import quantity

GPU = "nvidia.com/gpu"
# client-go tools/record/event.go makeEvent: `if namespace == "" { namespace = metav1.NamespaceDefault }`
NODE_EVENTS_NAMESPACE = "default"
# The ServiceAccount every namespace has (kube-controller-manager's serviceaccounts controller creates it);
# pods that name none run as it, and no component's install binds its event grant to it.
DEFAULT_SERVICE_ACCOUNT = "default"

# The NVIDIA device plugin's image, nvcr.io/nvidia/k8s-device-plugin (NVIDIA/k8s-device-plugin
# deployments/static/nvidia-device-plugin.yml, its Helm chart, and the GPU Operator's operand).
DEVICE_PLUGIN_IMAGES = ("k8s-device-plugin",)


@dataclass(frozen=True)
class Speaker:
    component: str  # the recorder's component, as source.component / reportingController carry it
    # the last segment of the image repository its DaemonSet runs; () when it is no DaemonSet (kubelet is
    # the node itself, Karpenter a Deployment): then it speaks for a node from "default" only
    images: tuple[str, ...]
    who: str  # what it is, and where upstream names the component

    @property
    def namespaces(self) -> frozenset[str]:
        """Where its node events count whatever is installed."""
        return frozenset({NODE_EVENTS_NAMESPACE})


SPEAKERS: tuple[Speaker, ...] = (
    Speaker("kubelet", (), who="the node's kubelet (kubernetes/kubernetes pkg/kubelet, EventSource component \"kubelet\")"),
    Speaker("eks-node-monitoring-agent", ("eks-node-monitoring-agent",),
            who="the EKS node monitoring agent (aws/eks-node-monitoring-agent cmd/eks-node-monitoring-agent/main.go "
                "GetEventRecorderFor(\"eks-node-monitoring-agent\"), image .../eks/eks-node-monitoring-agent)"),
    Speaker("karpenter", (), who="Karpenter (kubernetes-sigs/karpenter GetEventRecorderFor(\"karpenter\"))"),
    Speaker("nvidia-device-plugin", DEVICE_PLUGIN_IMAGES, who="the NVIDIA device plugin"),
    # the operator itself is a Deployment; where it runs, its operands run as DaemonSets: the device plugin
    # and the validator (NVIDIA/gpu-operator assets/state-device-plugin, state-operator-validation)
    Speaker("nvidia-gpu-operator", (*DEVICE_PLUGIN_IMAGES, "gpu-operator-validator"),
            who="the NVIDIA GPU Operator (NVIDIA/gpu-operator cmd/gpu-operator/main.go "
                "GetEventRecorderFor(\"nvidia-gpu-operator\"))"),
    Speaker("kernel-monitor", ("node-problem-detector",),
            who="node-problem-detector's kernel monitor, reading the node's kernel log "
                "(kubernetes/node-problem-detector config/kernel-monitor.json \"source\", image "
                "registry.k8s.io/node-problem-detector/node-problem-detector)"),
)
_BY_COMPONENT = {s.component: s for s in SPEAKERS}

# The speakers in words, for the text of a claim nobody vouched for.
SPEAKERS_NAMED = ("kubelet, the NVIDIA device plugin or GPU Operator, the EKS node monitoring agent, Karpenter, "
                  "node-problem-detector")


@dataclass(frozen=True)
class Installed:
    """What runs where, as far as the cluster shows it: the speakers seen running in each namespace, the
    namespaces the NVIDIA device plugin runs in, and the namespaces the policy trusts outright."""

    speakers: frozenset[tuple[str, str]] = frozenset()  # (namespace, component)
    device_plugin: frozenset[str] = frozenset()  # namespaces with a device plugin DaemonSet running
    trusted: frozenset[str] = frozenset()  # the policy's trusted_node_reporters

    def speaks(self, namespace: str, component: str) -> bool:
        if component not in _BY_COMPONENT:
            return False
        return (namespace == NODE_EVENTS_NAMESPACE or namespace in self.trusted
                or (namespace, component) in self.speakers)


# Nothing known to run anywhere (a caller that read no DaemonSets): only "default" counts.
NOTHING_INSTALLED = Installed()


def installed(daemonsets: Iterable[dict], *, trusted: Iterable[str] = ()) -> Installed:
    """Which speakers run in which namespace, from the cluster's DaemonSets (``trusted``: the policy's
    ``trusted_node_reporters``)."""
    speakers: set[tuple[str, str]] = set()
    plugins: set[str] = set()
    for ds in daemonsets:
        if not isinstance(ds, dict) or not isinstance(ds.get("metadata"), dict):
            continue  # an object the API would not serve: it proves nothing
        namespace = str(ds["metadata"].get("namespace") or "")
        if not namespace or not _running(ds):
            continue
        images = _images(ds)
        if images & set(DEVICE_PLUGIN_IMAGES):
            plugins.add(namespace)  # its log is read, not written through the API: no grant needed
        if _own_service_account(ds):
            speakers.update((namespace, s.component) for s in SPEAKERS if images & set(s.images))
    return Installed(frozenset(speakers), frozenset(plugins), frozenset(trusted))


def _running(ds: dict) -> bool:
    """Pods of it are ready somewhere (apps/v1 DaemonSetStatus numberReady): created and never scheduled,
    or scaled to no node, it runs nowhere."""
    status = ds.get("status")
    ready = status.get("numberReady") if isinstance(status, dict) else None
    return isinstance(ready, int) and not isinstance(ready, bool) and ready > 0


def _pod_spec(ds: dict) -> dict:
    found = ds
    for key in ("spec", "template", "spec"):
        found = found.get(key) if isinstance(found, dict) else None
    return found if isinstance(found, dict) else {}


def _images(ds: dict) -> set[str]:
    """The last segment of each container's image repository, tag and digest cut off."""
    spec = _pod_spec(ds)
    out = set()
    containers = [c for key in ("containers", "initContainers") if isinstance(spec.get(key), list)
                  for c in spec[key] if isinstance(c, dict)]
    for container in containers:
        image = str(container.get("image") or "").split("@", 1)[0]
        last = image.rsplit("/", 1)[-1]
        out.add(last.split(":", 1)[0])
    return out


def _own_service_account(ds: dict) -> bool:
    spec = _pod_spec(ds)
    account = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_SERVICE_ACCOUNT
    return account != DEFAULT_SERVICE_ACCOUNT

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


def voice_of(event: dict, *, where: Installed = NOTHING_INSTALLED) -> Voice:
    """Who wrote ``event``, trusted when a speaker wrote it where it may (``where``: what the cluster
    shows running; without it, only "default" counts)."""
    namespace = str((event.get("metadata") or {}).get("namespace") or "")
    component = event_component(event).strip()
    return Voice(namespace, component, where.speaks(namespace, component))


def plugin_voice(namespace: str, pod: str, *, where: Installed = NOTHING_INSTALLED) -> Voice:
    """A device plugin pod's log speaks for its node only from a namespace where the plugin's DaemonSet
    runs: a tenant can start a pod with the plugin's labels in a namespace named like the plugin's."""
    return Voice(namespace, f"pod {pod}", namespace in where.device_plugin or namespace in where.trusted)


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
