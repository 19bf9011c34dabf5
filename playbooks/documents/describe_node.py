"""``kubectl describe node(s)`` read as a whole: what no single line says.

The layout is kubectl's node describer (kubernetes/kubectl ``pkg/describe/describe.go``,
``describeNode``): top-level ``Key:`` fields at column 0, ``Labels:`` and ``Taints:`` continuing on
indented lines, a ``Conditions:`` table (Type, Status, LastHeartbeatTime, LastTransitionTime, Reason,
Message), ``Capacity:`` and ``Allocatable:`` as indented ``resource: quantity`` lines. Several nodes
(``kubectl describe nodes``) are split at each ``Name:``.

From one node:
- capacity ``nvidia.com/gpu`` N, allocatable M < N: the device plugin marked N-M GPUs unhealthy (they stay
  in capacity; NVIDIA/k8s-device-plugin#58 shows capacity 16, allocatable 0) -> gpu.unhealthy_device;
- a GPU instance (instance-type label p*/g*, ``karpenter.k8s.aws/instance-gpu-count`` or
  ``eks.amazonaws.com/instance-gpu-count`` > 0, ``nvidia.com/gpu.present=true``) whose capacity has no
  ``nvidia.com/gpu`` (nor MIG resources) -> gpu.device_plugin_missing, weaker while the node is still joining;
- ``Ready`` False/Unknown and ``MemoryPressure``/``DiskPressure``/``PIDPressure``/``NetworkUnavailable``
  True -> node.not_ready (with the node's name, which a condition row lacks);
- a cordon or a lifecycle taint that keeps new GPU pods off the node -> scheduling.node_lifecycle_taint.
  Taints GPU pods are meant to tolerate (``nvidia.com/gpu``) are normal and stay quiet.
``AcceleratedHardwareReady`` and the other node monitoring agent rows are left to the line rules.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from playbooks import linear
from playbooks.signatures.catalogue import iter_lines
from playbooks.signatures.model import Signal, trim

MARKERS = ("Capacity:", "Allocatable:")
GPU = "nvidia.com/gpu"
_TOP = linear.compile(r"^(?P<key>[A-Z][A-Za-z ]{1,40}):(?:\s+(?P<value>.*))?$")
_ITEM = linear.compile(r"^\s+(?P<key>[\w./-]+):\s+(?P<value>\S+)\s*$")
_CONDITION = linear.compile(r"^\s+(?P<type>[A-Za-z]+)\s+(?P<status>True|False|Unknown)\s+(?P<rest>.*)$")
_REASON = linear.compile(r"(?:[+-]\d{4}|<unset>|\d{4}Z?)\s+(?P<reason>[A-Z][A-Za-z0-9]{2,80})(?:\s+(?P<message>.*))?$")
# p3, p4d, p5, p5e, p5en, p6-b200, g4dn, g5, g5g, g6, g6e ... (NVIDIA); g4ad carries AMD GPUs.
_GPU_TYPE = linear.compile(r"^(?:p[3-9]|g[4-9])[a-z-]*[0-9a-z]*\.")
_GPU_COUNT_LABELS = ("karpenter.k8s.aws/instance-gpu-count", "eks.amazonaws.com/instance-gpu-count", "nvidia.com/gpu.count")
_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
_PRESSURE = {"MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"}
# Taints that keep every new pod off the node for a while: still joining, going away, or cordoned.
_LIFECYCLE = ("node.kubernetes.io/unschedulable", "karpenter.sh/disrupted", "karpenter.sh/unregistered",
              "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "karpenter.sh/not-ready",
              "node.cloudprovider.kubernetes.io/uninitialized", "ToBeDeletedByClusterAutoscaler")


@dataclass
class _Node:
    name: str = "?"
    name_line: int = 0
    labels: dict[str, tuple[int, str]] = field(default_factory=dict)
    taints: list[tuple[int, str]] = field(default_factory=list)
    conditions: list[tuple[int, str, str, str]] = field(default_factory=list)  # lineno, type, status, reason
    capacity: dict[str, tuple[int, str]] = field(default_factory=dict)
    allocatable: dict[str, tuple[int, str]] = field(default_factory=dict)
    unschedulable: tuple[int, str] | None = None
    lines: dict[int, str] = field(default_factory=dict)


def _nodes(text: str) -> list[_Node]:
    nodes: list[_Node] = []
    node: _Node | None = None
    section = ""
    for lineno, raw in enumerate(iter_lines(text), start=1):
        line = raw.rstrip()
        top = _TOP.match(line)
        if top is not None:
            section, value = top.group("key"), (top.group("value") or "").strip()
            if section == "Name":
                node = _Node(name=value, name_line=lineno)
                nodes.append(node)
                continue
            if node is None:
                continue
            node.lines[lineno] = line
            if section == "Labels" and value:
                _label(node, lineno, value)
            elif section == "Taints" and value and value != "<none>":
                node.taints.append((lineno, value))
            elif section == "Unschedulable" and value == "true":
                node.unschedulable = (lineno, line)
            continue
        if node is None or not line.startswith((" ", "\t")):
            section = "" if line else section
            continue
        node.lines[lineno] = line
        _section_line(node, section, lineno, line)
    return nodes


def _label(node: _Node, lineno: int, value: str) -> None:
    key, _, label = value.partition("=")
    node.labels[key.strip()] = (lineno, label.strip())


def _section_line(node: _Node, section: str, lineno: int, line: str) -> None:
    stripped = line.strip()
    if section == "Labels" and "=" in stripped:
        _label(node, lineno, stripped)
    elif section == "Taints" and ":" in stripped:
        node.taints.append((lineno, stripped))
    elif section == "Conditions":
        row = _CONDITION.match(line)
        if row is not None:
            reason = _REASON.search(row.group("rest"))
            node.conditions.append((lineno, row.group("type"), row.group("status"), reason.group("reason") if reason else ""))
    elif section in ("Capacity", "Allocatable"):
        item = _ITEM.match(line)
        if item is not None:
            target = node.capacity if section == "Capacity" else node.allocatable
            target[item.group("key")] = (lineno, item.group("value"))


def _signal(node: _Node, lineno: int, source: str, *, code: str, severity: str, confidence: str, title: str,
            fields: dict[str, str]) -> Signal:
    return Signal(code=code, severity=severity, confidence=confidence, title=title, line=trim(node.lines.get(lineno, "")),
                  source=source, lineno=lineno, fields={"node": node.name, **fields})


def _count(value: str) -> int | None:
    return int(value) if value.isdigit() else None


def _gpu_instance(node: _Node) -> str | None:
    """Why this looks like an NVIDIA GPU instance, or None."""
    manufacturer = node.labels.get("karpenter.k8s.aws/instance-gpu-manufacturer", (0, ""))[1]
    if manufacturer and manufacturer != "nvidia":
        return None
    for key in _GPU_COUNT_LABELS:
        count = _count(node.labels.get(key, (0, ""))[1])
        if count:
            return f"{key}={count}"
    if node.labels.get("nvidia.com/gpu.present", (0, ""))[1] == "true":
        return "nvidia.com/gpu.present=true"
    for key in _TYPE_LABELS:
        instance_type = node.labels.get(key, (0, ""))[1]
        if _GPU_TYPE.match(instance_type) and not instance_type.startswith("g4ad"):
            return instance_type
    return None


def _joining(node: _Node) -> bool:
    ready = [status for _, kind, status, _ in node.conditions if kind == "Ready"]
    return (ready != ["True"]) or any("karpenter.sh/unregistered" in taint for _, taint in node.taints)


def _gpu_signals(node: _Node, source: str) -> list[Signal]:
    if GPU in node.capacity:
        cap_line, cap = node.capacity[GPU]
        alloc_line, alloc = node.allocatable.get(GPU, (cap_line, cap))
        capacity, allocatable = _count(cap), _count(alloc)
        if capacity is not None and allocatable is not None and allocatable < capacity:
            unhealthy = capacity - allocatable
            return [_signal(node, alloc_line, source, code="gpu.unhealthy_device", severity="error", confidence="high",
                            title=f"Node {node.name}: {unhealthy} of {capacity} GPUs unhealthy (nvidia.com/gpu capacity {capacity}, allocatable {allocatable})",
                            fields={"capacity": cap, "allocatable": alloc, "unhealthy": str(unhealthy), "resource": GPU})]
        if capacity:
            return []
    if any(key.startswith("nvidia.com/mig-") for key in node.capacity):
        return []  # MIG "mixed" strategy advertises nvidia.com/mig-<profile> instead
    why = _gpu_instance(node)
    if why is None or not node.capacity:
        return []
    lineno = min(line for line, _ in node.capacity.values())
    if _joining(node):
        return [_signal(node, lineno, source, code="gpu.device_plugin_missing", severity="warning", confidence="low",
                        title=f"GPU node {node.name} ({why}) advertises no nvidia.com/gpu yet; it is not Ready, so the device plugin may still be starting",
                        fields={"gpu_evidence": why})]
    return [_signal(node, lineno, source, code="gpu.device_plugin_missing", severity="error", confidence="high",
                    title=f"GPU node {node.name} ({why}) advertises no nvidia.com/gpu: the NVIDIA device plugin is not running there",
                    fields={"gpu_evidence": why})]


def _condition_signals(node: _Node, source: str) -> list[Signal]:
    found = []
    for lineno, kind, status, reason in node.conditions:
        if kind == "Ready" and status != "True":
            found.append(_signal(node, lineno, source, code="node.not_ready", severity="error", confidence="high",
                                 title=f"Node {node.name} is NotReady (Ready={status}{', ' + reason if reason else ''})",
                                 fields={"condition": "Ready", "status": status, "reason": reason}))
        elif kind in _PRESSURE and status == "True":
            found.append(_signal(node, lineno, source, code="node.not_ready", severity="warning", confidence="medium",
                                 title=f"Node {node.name} reports {kind}{' (' + reason + ')' if reason else ''}",
                                 fields={"condition": kind, "status": status, "reason": reason}))
    return found


def _taint_signals(node: _Node, source: str) -> list[Signal]:
    found = []
    for lineno, taint in node.taints:
        key = taint.split("=", 1)[0].split(":", 1)[0]
        if key in _LIFECYCLE:
            found.append(_signal(node, lineno, source, code="scheduling.node_lifecycle_taint", severity="warning", confidence="low",
                                 title=f"Node {node.name} carries {taint}: no new pods land there until it is lifted",
                                 fields={"key": key, "taint": taint}))
    if node.unschedulable is not None and not any(s.fields.get("key") == "node.kubernetes.io/unschedulable" for s in found):
        lineno, _ = node.unschedulable
        found.append(_signal(node, lineno, source, code="scheduling.node_lifecycle_taint", severity="warning", confidence="low",
                             title=f"Node {node.name} is cordoned (Unschedulable: true): no new pods land there",
                             fields={"key": "node.kubernetes.io/unschedulable"}))
    return found


def read(text: str, source: str) -> list[Signal]:
    found: list[Signal] = []
    for node in _nodes(text):
        found += _gpu_signals(node, source) + _condition_signals(node, source) + _taint_signals(node, source)
    return found
