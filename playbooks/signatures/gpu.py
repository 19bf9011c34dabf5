"""GPU devices: kubelet allocation failures, NVIDIA device plugin health, driver Xid reports.

Device plugin wording is that of NVIDIA/k8s-device-plugin v0.14 to v0.20 (``internal/rm/health.go``,
``internal/plugin/server.go``, ``internal/plugin/factory.go``, ``cmd/nvidia-device-plugin/main.go``); the
GPU Operator deploys the same binary (``nvidia-device-plugin-daemonset`` in the ``gpu-operator``
namespace), and its validator (NVIDIA/gpu-operator ``cmd/nvidia-validator/main.go``) adds
``GPU resources are not discovered by the node``. Rules: kubelet.no_healthy_devices,
device_plugin.xid_unhealthy, nvrm.xid, nvrm.fallen_off_bus, device_plugin.no_nvml.
"""
from __future__ import annotations

import re

from playbooks import linear
from playbooks.failures.tables import XidEntry, xid_entry
from playbooks.signatures.model import Rule, Verdict

# What each Xid means and what the operator does come from playbooks.failures.tables (xid.json: NVIDIA's
# Xid catalogue and the device plugin's application-Xid list, scripts/gen_failure_tables.py), so that a
# finding's title, detail and fix all follow one action and cannot contradict each other.
_XID_CATALOGUE: tuple[XidEntry, ...] = tuple(e for n in range(1, 1000) if (e := xid_entry(n)) is not None)
# Xids that affect only the application that faulted (NVIDIA/k8s-device-plugin internal/rm/health.go
# ignores them for health; NVIDIA's catalogue: RESTART_APP).
APPLICATION_XIDS = frozenset(e.xid for e in _XID_CATALOGUE if e.kind == "application")
# Of those, the ones NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors) attributes to the
# application's CUDA code: 13 Graphics Engine Exception (out-of-range access, illegal instruction), 31 GPU
# memory page fault (illegal address), 43 GPU stopped processing (a software-induced fault, e.g. a
# device-side assert). They come with the job's CUDA error: a code finding, never a hardware one.
CODE_XIDS = frozenset({13, 31, 43}) & APPLICATION_XIDS
# Xids that are the GPU's own hardware reports (ECC, NVLink, the bus); what to do about each differs:
# 94 (contained ECC) ends only the faulting application, 63 (row remap pending) wants a GPU reset at a
# convenient time, 79 or 95 a drain and a new instance.
HARDWARE_XIDS = frozenset(e.xid for e in _XID_CATALOGUE if e.kind == "hardware")

# open-gpu-kernel-modules prints Xid 154 as "GPU recovery action changed from 0x%x (%s) to 0x%x (%s)": the
# new action is what the driver now wants (names seen: None, GPU Reset Required, Node Reboot Required /
# OS Reboot, Drain P2P, Drain and Reset).
_RECOVERY = linear.compile(r"recovery action changed from 0x[0-9a-fA-F]{1,8} \([^)]{0,40}\) to 0x[0-9a-fA-F]{1,8} \((?P<to>[^)]{1,40})\)")
_RECOVERY_ACTIONS = {"none": "none", "gpu reset required": "reset_gpu", "node reboot required": "reboot",
                     "os reboot": "reboot", "drain p2p": "drain", "drain and reset": "drain"}

# action -> (severity, confidence, title). The fix template (generic/gpu.xid_error.sh.j2) branches on the
# same action, and details_gpu.xid_error says the same thing in prose.
_XID_VERDICTS = {
    "none": ("info", "high", "GPU driver reported Xid {xid} ({xid_name}): no action needed"),
    "restart_app": ("warning", "medium",
                    "GPU driver reported Xid {xid} ({xid_name}): only the application that faulted is affected; restart it, the GPU stays in service"),
    "reset_gpu": ("error", "high",
                  "GPU Xid {xid} ({xid_name})[ on PCI {pci}]: the GPU needs a reset at a convenient time (drain the node when the job allows)"),
    "drain": ("critical", "high", "GPU hardware fault: Xid {xid} ({xid_name})[ on PCI {pci}]: drain the node and replace the instance"),
    "reboot": ("critical", "high", "GPU Xid {xid} ({xid_name})[ on PCI {pci}]: the driver asks for a node reboot; drain the node and reboot or replace it"),
    "investigate": ("error", "medium", "GPU driver reported Xid {xid}[ on PCI {pci}], not in NVIDIA's Xid catalogue as read: check dmesg and nvidia-smi -q before acting"),
}
# A catalogued Xid whose action is an investigation (NVIDIA's CONTACT_SUPPORT for Xids it lists as unused on
# Ampere and newer, or this project's reading where the catalogue gives no fixed step): same action, so the
# fix template still reads dmesg and nvidia-smi -q, but the title does not call it unknown.
_XID_INVESTIGATE_KNOWN = ("error", "medium", "GPU driver reported Xid {xid} ({xid_name})[ on PCI {pci}]: NVIDIA gives no fixed step for it; check dmesg and nvidia-smi -q before acting")


def xid_number(raw: str | None) -> int | None:
    """An Xid as a number: at most four ASCII digits (NVIDIA's catalogue stops in the hundreds), else None,
    so a line with a 5,000-digit "Xid" is no Xid at all instead of an int() that raises."""
    raw = raw or ""
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 4 else None


def xid_action(xid: int, text: str) -> str:
    """What the operator does: the catalogue's action; for Xid 154 the recovery action the line names
    ("investigate" when the line does not say, as the node monitoring agent's event does not)."""
    entry = xid_entry(xid)
    if entry is None:
        return "investigate"
    if xid == 154:
        m = _RECOVERY.search(text)
        return _RECOVERY_ACTIONS.get(m.group("to").strip().lower(), "investigate") if m else "investigate"
    return entry.action


def _xid_name(xid: int) -> str:
    entry = xid_entry(xid)
    return entry.name if entry else "not in the catalogue"


def xid_verdict(fields: dict[str, str], text: str) -> Verdict | None:
    xid = xid_number(fields.get("xid", "0"))
    if xid is None:
        return None  # not an Xid the driver can print: no match
    action = xid_action(xid, text)
    facts = {"action": action, "xid_name": _xid_name(xid)}
    if xid in CODE_XIDS:
        return Verdict(code="training.code_error", severity="warning", confidence="medium", fields=facts,
                       title="GPU driver reported Xid {xid} ({xid_name}), a fault of the job's CUDA code (not the hardware)")
    severity, confidence, title = (_XID_INVESTIGATE_KNOWN if action == "investigate" and xid_entry(xid) is not None
                                   else _XID_VERDICTS[action])
    return Verdict(severity=severity, confidence=confidence, title=title, fields=facts)


def _no_healthy(fields: dict[str, str], text: str) -> Verdict:
    resource = {"resource": fields.get("resource", "nvidia.com/gpu")}
    if "healthy" in text:
        return Verdict(fields=resource)
    # A bare UnexpectedAdmissionError: some device allocation failed, not necessarily a GPU.
    return Verdict(confidence="medium", title="kubelet rejected the pod at admission (UnexpectedAdmissionError)", fields=resource)


def _plugin_marked(fields: dict[str, str], text: str) -> Verdict:
    if "Marking all devices" in text:
        return Verdict(title="NVIDIA device plugin marked all GPUs on the node unhealthy")
    return Verdict()


# NVML's reasons (nvmlErrorString, or go-nvml's ERROR_* names when the library is not loaded) that mean the
# node's driver stack is unusable for the plugin, against those that point at a GPU.
_NVML_NOT_LOADED = ("ERROR_LIBRARY_NOT_FOUND", "ERROR_DRIVER_NOT_LOADED", "Driver Not Loaded", "could not load NVML", "NVML Shared Library Not Found")
_NVML_MISMATCH = ("Driver/library version mismatch", "ERROR_LIB_RM_VERSION_MISMATCH")
_NVML_LOST = ("GPU is lost", "ERROR_GPU_IS_LOST")
_NVML_UNKNOWN = ("Unknown Error", "ERROR_UNKNOWN")


def nvml_verdict(fields: dict[str, str], text: str) -> Verdict:
    """What an NVML initialisation failure says: no driver for the plugin, a stale driver, or a lost GPU."""
    if "No devices found" in text:
        return Verdict(confidence="high")
    if any(s in text for s in _NVML_LOST):
        return Verdict(code="gpu.unhealthy_device", confidence="high", title="NVML reports a GPU is lost: the GPU dropped off (Xid 79 class); replace the node")
    if any(s in text for s in _NVML_MISMATCH):
        return Verdict(confidence="high",
                       title="NVML: driver/library version mismatch: the NVIDIA driver was updated without a reboot; no GPU is usable until the node reboots or is replaced")
    if any(s in text for s in _NVML_UNKNOWN):
        # In a container this is mostly the GPU device cgroup rules being reset under a running container
        # (NVIDIA/nvidia-container-toolkit#48); on the host, a failing GPU. The text cannot tell which.
        return Verdict(code="gpu.unhealthy_device", severity="warning", confidence="low",
                       title="NVML failed with Unknown Error: the container lost access to its GPUs or a GPU is failing")
    if any(s in text for s in _NVML_NOT_LOADED):
        return Verdict(confidence="high", title="NVIDIA device plugin cannot load NVML (no driver or NVIDIA runtime in its container): the node advertises no nvidia.com/gpu")
    if "GPU resources are not discovered" in text:
        return Verdict(title="GPU Operator validator: the node never advertised nvidia.com/gpu (device plugin not registered)")
    return Verdict()


RULES: tuple[Rule, ...] = (
    Rule(
        name="kubelet.no_healthy_devices",
        code="gpu.unhealthy_device",
        severity="error",
        confidence="high",
        title="kubelet cannot allocate {resource}: no healthy devices on the node",
        keywords=("no healthy devices", "cannot allocate unhealthy devices", "UnexpectedAdmissionError"),
        extract=(linear.compile(r"unhealthy devices (?P<resource>[a-z0-9.-]+/[a-z0-9.-]+)"),),
        refine=_no_healthy,
        fields_doc="resource",
        example="Warning  UnexpectedAdmissionError  3m2s  kubelet  Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu, which is unexpected",
    ),
    Rule(
        name="device_plugin.xid_unhealthy",
        code="gpu.unhealthy_device",
        severity="error",
        confidence="high",
        title="NVIDIA device plugin marked GPU[ {device}] unhealthy[ after Xid {xid}]",
        # health.go: "XidCriticalError: Xid=%d on Device=%s; marking device as unhealthy.", "unable to get device
        # handle from UUID: %v; marking it as unhealthy", "Marking device %v as unhealthy: %v" (too old for
        # health checks), "...; Marking all devices as unhealthy"; server.go: "'%s' device marked unhealthy: %s".
        keywords=("marking device as unhealthy", "device marked unhealthy", "Marking all devices as unhealthy", "Marking it unhealthy",
                  "marking it unhealthy", "marking it as unhealthy", "Marking device "),
        pattern=linear.compile(r"unhealthy", re.IGNORECASE),
        extract=(
            linear.compile(r"Xid=(?P<xid>[0-9]{1,4})\b"),
            linear.compile(r"(?P<device>GPU-[0-9a-fA-F-]{4,}|MIG-[0-9a-fA-F-]{4,})"),
            linear.compile(r"'(?P<resource>[a-z0-9.-]+/[a-z0-9.-]+)' device marked unhealthy"),
            linear.compile(r"(?P<installer>gpu-operator)"),
        ),
        refine=_plugin_marked,
        fields_doc="xid, device (GPU-uuid), resource, installer (gpu-operator when the line names it)",
        example="I0810 15:36:05.551834 1 health.go:169] XidCriticalError: Xid=48 on Device=GPU-455e672a-1f0c-4d1b-9a7e-0c3b5d2e6f70; marking device as unhealthy.",
    ),
    Rule(
        name="nvrm.xid",
        code="gpu.xid_error",
        severity="critical",
        confidence="high",
        title="GPU driver reported Xid {xid} on PCI {pci}",
        keywords=("NVRM: Xid",),
        pattern=linear.compile(r"NVRM: Xid \(PCI:(?P<pci>[0-9a-fA-F:.]{4,20})\): (?P<xid>[0-9]{1,4}),(?: pid=(?P<pid>[^,\s]{0,40}),)?(?: name=[^,]{0,100},)?\s*(?P<description>[^\n]{0,200})"),
        refine=xid_verdict,
        fields_doc="xid, pci, pid, description, action (none|restart_app|reset_gpu|drain|reboot|investigate), xid_name",
        example="NVRM: Xid (PCI:0000:10:1c): 79, pid=1234, GPU has fallen off the bus.",
    ),
    Rule(
        name="nvrm.fallen_off_bus",
        code="gpu.xid_error",
        severity="critical",
        confidence="high",
        title="GPU[ {pci}] has fallen off the bus (Xid 79): the GPU is gone until the instance is replaced",
        # NVRM's line without the Xid prefix (open-gpu-kernel-modules: NV_DEV_PRINTF(..., "GPU has fallen off
        # the bus.\n"), printed as "NVRM: GPU 0000:53:00.0: ...") and the 570-series probe wording "NVRM: fallen
        # off the bus and is not responding to commands." (NVIDIA/NVSentinel#155). The Xid line belongs to nvrm.xid.
        keywords=("GPU has fallen off the bus", "fallen off the bus and is not responding"),
        extract=(linear.compile(r"GPU (?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)"),),
        unless=("NVRM: Xid",),
        refine=lambda f, t: Verdict(fields={"xid": "79", "action": xid_action(79, t), "xid_name": _xid_name(79)}),
        fields_doc="pci, xid (79), action (drain), xid_name",
        example="[ 8712.331102] NVRM: GPU 0000:53:00.0: GPU has fallen off the bus.",
    ),
    Rule(
        name="device_plugin.no_nvml",
        code="gpu.device_plugin_missing",
        severity="error",
        confidence="medium",
        title="NVIDIA device plugin found no GPUs (NVML unavailable): the node advertises no nvidia.com/gpu",
        # factory.go: "Failed to initialize NVML: %v." then, without failOnInitError, "nvml init failed: %v";
        # go-nvlib: "could not load NVML library: %v"; main.go: "No devices found. Waiting indefinitely.";
        # gpu-operator validator: "GPU resources are not discovered by the node". nvidia-smi prints the same
        # "Failed to initialize NVML: <reason>" with NVML's own strings.
        keywords=("Incompatible strategy detected", "Incompatible platform detected", "No devices found. Waiting indefinitely",
                  "could not load NVML library", "Failed to initialize NVML", "nvml init failed", "GPU resources are not discovered by the node"),
        extract=(
            linear.compile(r"(?P<detail>Incompatible strategy detected \w+|Incompatible platform detected|No devices found|could not load NVML library[^,]{0,120}|GPU resources are not discovered by the node)"),
            linear.compile(r"(?:Failed to initialize NVML|nvml init failed): (?P<nvml_error>[^.\n]{1,120})"),
            linear.compile(r"(?P<installer>gpu-operator)"),
        ),
        unless=("GPU resources are not yet discovered",),
        refine=nvml_verdict,
        fields_doc="detail, nvml_error (NVML's reason), installer (gpu-operator when the line names it)",
        example="E1119 17:44:43.345466       1 factory.go:112] Incompatible strategy detected auto",
    ),
)
