"""GPU nodes in trouble: NotReady, GPUs the device plugin took out of allocatable, no GPUs advertised,
a false condition of the EKS node monitoring agent, or the agent's (and other) GPU warnings as events.

Every problem of one node shares the node as its storm group: twelve Xids on eight GPUs of one node are
one message. A GPU warning counts only from a writer that can speak for the node (playbooks/speakers.py);
anyone else's is a low warning naming who said it, unless the node's status shows the same trouble. An
event that cannot be read becomes a gap, never the end of the sweep. Sources: kubernetes/kubernetes pkg/controller/nodelifecycle (Ready, grace period),
NVIDIA/k8s-device-plugin internal/rm/health.go (unhealthy GPUs leave allocatable, not capacity),
aws/eks-node-monitoring-agent pkg/reasons/reasons.yaml (conditions, reasons, which are events only).
"""
from __future__ import annotations

import re
from datetime import datetime

from playbooks.analyzers.evidence import event_count, event_time, field, from_event
from playbooks.failures.tables import device_plugin_ignored_xids
from playbooks.karpenter.resources import quantity
from playbooks.model import Evidence, Remediation, Target
from playbooks.problems import Problem
from playbooks.remediations import InvalidRemediation, cordon_gpu_node
from playbooks.signatures.catalogue import scan_line
from playbooks.sweep.merge import merge
from playbooks.speakers import SPEAKERS_NAMED, node_vouches, voice_of
from playbooks.sweep.objects import condition, labels_of, meta, name_of, seconds_since

GPU = "nvidia.com/gpu"
GPU_COUNT_LABELS = ("karpenter.k8s.aws/instance-gpu-count", "eks.amazonaws.com/instance-gpu-count")
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"  # NVIDIA GPU feature discovery
# Seconds a node may be NotReady before it is a problem: longer than kubelet's status update gap
# (node-monitor-grace-period, 40-50 s) and a reboot, shorter than pod eviction (300 s).
NOT_READY_AFTER = 120.0
# Seconds a joining node (karpenter.sh/unregistered) may stay NotReady: GPU AMIs boot and register in
# 2-5 minutes; Karpenter deletes a NodeClaim whose node has not registered after 15.
JOINING_AFTER = 600.0
# Seconds a Ready GPU node may advertise no GPUs: the device plugin starts within a minute or two.
DEVICE_PLUGIN_AFTER = 600.0
# Events older than this are history (the API server keeps events one hour by default, --event-ttl).
EVENT_WINDOW = 3600.0
# aws/eks-node-monitoring-agent pkg/reasons/reasons.yaml: conditions the agent sets on a node.
MONITORING_CONDITIONS = ("AcceleratedHardwareReady", "NetworkingReady", "KernelReady", "StorageReady",
                         "ContainerRuntimeReady")
# An Xid is at most four digits (NVIDIA's catalogue stops in the hundreds); a longer one is unreadable.
_XID_REASON = re.compile(r"^NvidiaXID(?P<xid>[0-9]{1,4})(?P<level>Error|Warning)$")
_XID_LIKE = re.compile(r"^NvidiaXID[0-9]")
_XID_TOO_LONG = re.compile(r"(?:NvidiaXID|XID-|Xid=|NVRM: Xid \(PCI:[0-9a-fA-F:.]{4,20}\): )[0-9]{5}")
# Reasons of GPU health the agent reports as events (warnings; the fatal ones also set the condition).
_GPU_EVENT_REASONS = re.compile(
    r"^(DCGMHealthCode\d+|DCGMFieldError\d+|DCGMDiagnosticFailure|DCGMError|NvidiaDoubleBitError|NvidiaNVLinkError"
    r"|NvidiaPageRetirement|NvidiaPCIeError|NvidiaPowerError|NvidiaThermalError|NvidiaDeviceCountMismatch"
    r"|NvidiaFabricError|FabricManagerNotRunning)$")
# NVIDIA/k8s-device-plugin internal/rm/health.go: Xids caused by the application, not the GPU (the list
# the plugin itself skips, from the generated Xid table).
APPLICATION_XIDS = device_plugin_ignored_xids()


def is_gpu_node(node: dict) -> bool:
    labels = labels_of(node)
    if any(labels.get(k) not in (None, "", "0") for k in GPU_COUNT_LABELS) or labels.get(GPU_PRESENT_LABEL) == "true":
        return True
    return _gpus(node, "capacity") > 0


def _gpus(node: dict, which: str) -> int:
    try:
        return int(quantity(((node.get("status") or {}).get(which) or {}).get(GPU, 0)))
    except ValueError:
        return 0


class Unreadable(ValueError):
    """An event that says it is a GPU report but cannot be read as one."""


def node_problems(nodes: list[dict], events: list[dict], *, cluster: str, now: datetime,
                  gaps: list[str] | None = None) -> list[Problem]:
    """Problems of GPU nodes; ``events`` are Warning events about nodes (others are ignored). What could
    not be read is added to ``gaps`` ("not checked: <what> (<why>)") and the rest is swept."""
    gaps = [] if gaps is None else gaps
    by_node: dict[str, list[dict]] = {}
    for event in events:
        involved = event.get("involvedObject") or event.get("regarding") or {}
        if involved.get("kind") == "Node" and event.get("type") == "Warning":
            by_node.setdefault(str(involved.get("name")), []).append(event)
    problems: list[Problem] = []
    for node in nodes:
        if not is_gpu_node(node) or meta(node).get("deletionTimestamp"):
            continue
        name = name_of(node)
        try:
            found = _not_ready(node, cluster=cluster, now=now) + _gpu_count(node, cluster=cluster, now=now)
            found += _monitoring(node, cluster=cluster)
        except Exception as exc:  # noqa: BLE001 - one node's failure is its gap, the others are still swept
            gaps.append(f"not checked: node {name[:253]} (could not read it: {_why(exc)})")
            found = []
        problems += found + _events(node, by_node.get(name, []), cluster=cluster, now=now, gaps=gaps)
    return merge(problems)


def _why(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc)[:200]}" if not isinstance(exc, Unreadable) else str(exc)[:200]


def _problem(node: dict, *, code: str, severity: str, title: str, detail: str, evidence: list[Evidence],
             cluster: str, cordon: bool = False) -> Problem:
    name = name_of(node)
    return Problem(code=code, severity=severity, target=Target(kind="node", name=name), title=title, cluster=cluster,
                   detail=detail, evidence=tuple(evidence), group=f"node/{name}",
                   nodepool=labels_of(node).get("karpenter.sh/nodepool"),
                   remediations=_cordon(name) if cordon else ())


def _cordon(name: str) -> tuple[Remediation, ...]:
    try:
        return (cordon_gpu_node(node=name),)
    except InvalidRemediation:
        return ()


def _kind(node: dict) -> str:
    itype = labels_of(node).get("node.kubernetes.io/instance-type")
    return f"GPU node {name_of(node)}" + (f" ({itype})" if itype else "")


def _taints(node: dict) -> set[str]:
    return {str(t.get("key")) for t in (node.get("spec") or {}).get("taints") or []}


def _not_ready(node: dict, *, cluster: str, now: datetime) -> list[Problem]:
    ready = condition(node, "Ready")
    # Karpenter taints a node it is removing (karpenter.sh/disrupted): NotReady then is the plan. A node
    # still joining (karpenter.sh/unregistered) is NotReady until its CNI is up: late only after the time
    # a GPU node needs to boot and register.
    if ready is None or ready.get("status") == "True" or "karpenter.sh/disrupted" in _taints(node):
        return []
    joining = "karpenter.sh/unregistered" in _taints(node)
    since = seconds_since(meta(node).get("creationTimestamp") if joining else ready.get("lastTransitionTime"), now)
    if since is not None and since < (JOINING_AFTER if joining else NOT_READY_AFTER):
        return []
    status = ready.get("status", "Unknown")
    reason = ready.get("reason") or ("NodeStatusUnknown" if status == "Unknown" else "no reason given")
    return [_problem(
        node, code="node.not_ready", severity="error", cluster=cluster,
        title=f"{_kind(node)} is NotReady ({reason})" + (" while joining the cluster" if joining else ""),
        detail=(f"Ready={status}: {ready.get('message', '')}".strip() + " Its pods are evicted after the not-ready "
                "toleration (300 s by default) and no new pod lands there. On EKS: the VPC CNI not initialising "
                "(IAM permissions), kubelet unable to reach the API server, disk or memory pressure, or the "
                "instance itself failing (check its EC2 status checks)."),
        evidence=[field(f"node/{name_of(node)}", "status.conditions[Ready]", ready)],
    )]


def _gpu_count(node: dict, *, cluster: str, now: datetime) -> list[Problem]:
    capacity, allocatable = _gpus(node, "capacity"), _gpus(node, "allocatable")
    status = node.get("status") or {}
    name = name_of(node)
    if capacity and allocatable < capacity:
        lost = capacity - allocatable
        return [_problem(
            node, code="gpu.unhealthy_device", severity="error", cluster=cluster, cordon=True,
            title=f"{_kind(node)}: {lost} of {capacity} GPUs unhealthy (allocatable {allocatable})",
            detail=("The NVIDIA device plugin took GPUs out of allocatable: it marks a GPU unhealthy on a critical "
                    "Xid and never gives it back by itself. Pods asking for all the node's GPUs cannot land here. "
                    "Cordon the node, then replace it (delete its NodeClaim) or restart the device plugin pod "
                    "after a transient fault."),
            evidence=[field(f"node/{name}", "status", {"capacity": {GPU: str(capacity)},
                                                        "allocatable": {GPU: str(allocatable)}})],
        )]
    labels = labels_of(node)
    declared = next((labels[k] for k in GPU_COUNT_LABELS if labels.get(k) not in (None, "", "0")), None)
    ready = condition(node, "Ready") or {}
    age = seconds_since(meta(node).get("creationTimestamp"), now)
    if declared and not capacity and ready.get("status") == "True" and (age is None or age >= DEVICE_PLUGIN_AFTER):
        return [_problem(
            node, code="gpu.device_plugin_missing", severity="error", cluster=cluster,
            title=f"{_kind(node)} advertises no {GPU} ({declared} GPUs installed)",
            detail=("The node is Ready but its capacity has no nvidia.com/gpu: the NVIDIA device plugin is not "
                    "running there (missing, crashing, or not tolerating the node's taints)."),
            evidence=[field(f"node/{name}", "status.capacity", status.get("capacity") or {}),
                      field(f"node/{name}", "spec.taints", (node.get("spec") or {}).get("taints") or [])],
        )]
    return []


def _monitoring(node: dict, *, cluster: str) -> list[Problem]:
    """A false condition of the node monitoring agent: the agent's fatal issues, which EKS node auto
    repair acts on (replace or reboot) when it is enabled."""
    out = []
    for kind in MONITORING_CONDITIONS:
        cond = condition(node, kind)
        if cond is None or cond.get("status") != "False":
            continue
        reason = str(cond.get("reason") or "")
        evidence = [field(f"node/{name_of(node)}", f"status.conditions[{kind}]", cond)]
        xid = _XID_REASON.match(reason)
        if kind == "AcceleratedHardwareReady":
            code, severity = ("gpu.xid_error", "critical") if xid else ("gpu.unhealthy_device", "error")
            what = f"Xid {xid.group('xid')}" if xid else reason or "a GPU fault"
            detail = (f"The EKS node monitoring agent reports {kind}=False ({reason}): {cond.get('message', '')} "
                      "A fatal GPU issue: jobs on this node fail or hang. Cordon it and replace it (EKS node auto "
                      "repair does so when enabled); keep the instance ID for an AWS support case.")
            out.append(_problem(node, code=code, severity=severity, cluster=cluster, cordon=True, evidence=evidence,
                                title=f"{_kind(node)}: {what} ({kind}=False)", detail=detail.replace("  ", " ")))
        else:
            detail = (f"The EKS node monitoring agent reports {kind}=False ({reason}): {cond.get('message', '')} "
                      "A fatal node issue: pods on it may fail. Replace the node if it persists (EKS node auto "
                      "repair does so when enabled).")
            out.append(_problem(node, code="node.not_ready", severity="error", cluster=cluster, evidence=evidence,
                                title=f"{_kind(node)}: {kind}=False ({reason or 'no reason given'})",
                                detail=detail.replace("  ", " ")))
    return out


def _events(node: dict, events: list[dict], *, cluster: str, now: datetime, gaps: list[str]) -> list[Problem]:
    """GPU warnings about the node: the agent's reasons (NvidiaXID<n>Warning, DCGMHealthCode<n>, ...) and
    any warning whose message carries a driver Xid line (node-problem-detector and the like). Split by
    who said them: speakers for the node, and the rest, which the node's status may bear out."""
    heard: dict[bool, _Heard] = {True: _Heard(), False: _Heard()}
    claimants: set[str] = set()
    for event in events:
        try:
            voice = voice_of(event)
            if _hear(event, heard[voice.trusted], now=now) and not voice.trusted:
                claimants.add(voice.label)
        except Exception as exc:  # noqa: BLE001 - one event's failure is its gap, the others still count
            gaps.append(f"not checked: {_event_ref(event)} about node {name_of(node)[:253]} "
                        f"(could not read it: {_why(exc)})")
    if node_vouches(node) is not None:  # the node's status bears the claims out: they count as told
        heard[True].add(heard[False])
        heard[False] = _Heard()
    return _told(node, heard[True], cluster=cluster) + _claims(node, heard[False], claimants=sorted(claimants),
                                                                cluster=cluster)


class _Heard:
    """GPU warnings about one node: Xid -> [(event, level)], and other GPU health events."""

    def __init__(self) -> None:
        self.xids: dict[str, list[tuple[dict, str]]] = {}
        self.health: list[dict] = []

    def add(self, other: "_Heard") -> None:
        for xid, found in other.xids.items():
            self.xids.setdefault(xid, []).extend(found)
        self.health += other.health


def _hear(event: dict, heard: _Heard, *, now: datetime) -> bool:
    """Count the event if it is a recent GPU warning; True when it was one."""
    if (now - event_time(event)).total_seconds() > EVENT_WINDOW:
        return False
    reason = str(event.get("reason") or "")
    match = _XID_REASON.match(reason)
    if match is None and _XID_LIKE.match(reason):
        shown = reason if len(reason) <= 24 else reason[:24] + "..."
        raise Unreadable(f"reason {shown} is no NvidiaXID<n>Error|Warning with an Xid of at most four digits")
    if match:
        xid = str(int(match.group("xid")))
        if match.group("level") == "Warning" and int(xid) in APPLICATION_XIDS:
            return False
        heard.xids.setdefault(xid, []).append((event, match.group("level")))
        return True
    if _GPU_EVENT_REASONS.match(reason):
        heard.health.append(event)
        return True
    message = str(event.get("message") or event.get("note") or "")
    if _XID_TOO_LONG.search(message):
        raise Unreadable("its message carries an Xid of more than four digits")
    for signal in scan_line(message, source="event"):
        xid = signal.fields.get("xid") or ""
        if signal.code == "gpu.xid_error" and signal.severity != "info" and xid.isascii() and xid.isdigit():
            heard.xids.setdefault(str(int(xid)), []).append((event, "Error"))
            return True
    return False


def _event_ref(event: dict) -> str:
    found = meta(event)
    name = str(found.get("name") or "")
    return f"event {str(found.get('namespace') or '')[:63]}/{name if len(name) <= 120 else name[:117] + '...'}"


def _told(node: dict, heard: _Heard, *, cluster: str) -> list[Problem]:
    """What speakers for the node said (and claims the node's status bears out)."""
    ref = f"node/{name_of(node)}"
    borne_out = node_vouches(node)
    status = [Evidence(source=f"{ref} status", text=borne_out)] if borne_out else []
    out = []
    if heard.xids:
        xids = heard.xids
        fatal = any(level == "Error" for found in xids.values() for _, level in found)
        times = sum(event_count(e) for found in xids.values() for e, _ in found)
        listed = ", ".join(sorted(xids, key=int))
        # One reporter alone never makes a node critical nor offers a cordon: the node's status or a second,
        # independent reporter must agree (a forged event must not cost a node).
        reporters = {voice_of(e).label for found in xids.values() for e, _ in found}
        agreed = bool(borne_out) or len(reporters) > 1
        alone = "" if agreed else f" by {sorted(reporters)[0]} alone" if reporters else ""
        out.append(_problem(
            node, code="gpu.xid_error", severity=("critical" if agreed else "error") if fatal else "warning",
            cluster=cluster, cordon=fatal and agreed,
            title=f"{_kind(node)}: GPU Xid {listed} reported {times} time{'s' if times != 1 else ''}{alone}",
            detail=("The NVIDIA driver reported Xid errors on this node (79: fallen off the bus; 48: double-bit ECC; "
                    "63/64: page retirement; 94/95: contained/uncontained ECC; 119/120: GSP). Critical Xids make the "
                    "device plugin mark the GPU unhealthy; cordon the node and replace it."),
            evidence=([from_event(ref, e) for found in xids.values() for e, _ in found][:5] + status),
        ))
    if heard.health:
        reasons = sorted({str(e.get("reason")) for e in heard.health})
        out.append(_problem(
            node, code="gpu.unhealthy_device", severity="warning", cluster=cluster,
            title=f"{_kind(node)}: GPU health warnings ({', '.join(reasons[:4])})",
            detail=("The EKS node monitoring agent reported GPU health warnings (DCGM health checks, ECC page "
                    "retirement, PCIe replays, power or thermal limits). Not fatal yet; watch for "
                    "AcceleratedHardwareReady=False and for jobs slowing down on this node."),
            evidence=[from_event(ref, e) for e in heard.health][:5] + status,
        ))
    return out


def _claims(node: dict, heard: _Heard, *, claimants: list[str], cluster: str) -> list[Problem]:
    """GPU warnings only writers that cannot speak for the node made, the node's status showing none of
    it: one low warning per code that says who reported it, never a cordon."""
    ref = f"node/{name_of(node)}"
    who = ", ".join(claimants[:3]) + (f" and {len(claimants) - 3} more" if len(claimants) > 3 else "")
    caveat = f"reported by {who}, not corroborated"
    why = (f"No component that can speak for the node ({SPEAKERS_NAMED}) reported it in a namespace it writes to, "
           "and the node's status shows no lost GPU (allocatable equals capacity) and no "
           "AcceleratedHardwareReady=False. Anyone who may create events in a namespace can write one about any "
           "node: check the node (nvidia-smi -q, the device plugin's log) before acting on it.")
    out = []
    if heard.xids:
        listed = ", ".join(sorted(heard.xids, key=int))
        out.append(_problem(
            node, code="gpu.xid_error", severity="warning", cluster=cluster,
            title=f"{_kind(node)}: GPU Xid {listed} {caveat}", detail=why,
            evidence=[from_event(ref, e) for found in heard.xids.values() for e, _ in found][:5],
        ))
    if heard.health:
        reasons = sorted({str(e.get("reason"))[:64] for e in heard.health})
        out.append(_problem(
            node, code="gpu.unhealthy_device", severity="warning", cluster=cluster,
            title=f"{_kind(node)}: GPU health warnings ({', '.join(reasons[:4])}) {caveat}", detail=why,
            evidence=[from_event(ref, e) for e in heard.health][:5],
        ))
    return out
