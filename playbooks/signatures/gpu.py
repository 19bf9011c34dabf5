"""GPU devices: kubelet allocation failures, NVIDIA device plugin health, driver Xid reports."""
from __future__ import annotations

import re

from playbooks.signatures.model import Rule, Verdict

# Xids the NVIDIA device plugin treats as application errors (it ignores them for health).
APPLICATION_XIDS = frozenset({13, 31, 43, 45, 68, 109})
# Of those, the ones NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors) attributes to the
# application: 13 Graphics Engine Exception (out-of-range access, illegal instruction), 31 GPU memory page
# fault (illegal address), 43 GPU stopped processing (a software-induced fault, e.g. a device-side assert).
# They come with the job's CUDA error: a code finding, never a hardware one.
CODE_XIDS = frozenset({13, 31, 43})
# Xids that mean the GPU (or its memory / NVLink) is broken: drain and replace the node.
HARDWARE_XIDS = frozenset({48, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140})


def _xid(fields: dict[str, str], text: str) -> Verdict:
    xid = int(fields.get("xid", "0"))
    if xid in CODE_XIDS:
        return Verdict(code="training.code_error", severity="warning", confidence="medium",
                       title="GPU driver reported Xid {xid}, a fault of the job's CUDA code (not the hardware)")
    if xid in APPLICATION_XIDS:
        return Verdict(severity="warning", confidence="medium", title="GPU driver reported application-level Xid {xid} (a CUDA fault in the job, not the hardware)")
    if xid in HARDWARE_XIDS:
        return Verdict()
    return Verdict(severity="error", confidence="medium")


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


RULES: tuple[Rule, ...] = (
    Rule(
        name="kubelet.no_healthy_devices",
        code="gpu.unhealthy_device",
        severity="error",
        confidence="high",
        title="kubelet cannot allocate {resource}: no healthy devices on the node",
        keywords=("no healthy devices", "cannot allocate unhealthy devices", "UnexpectedAdmissionError"),
        extract=(re.compile(r"unhealthy devices (?P<resource>[a-z0-9.-]+/[a-z0-9.-]+)"),),
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
        keywords=("marking device as unhealthy", "device marked unhealthy", "Marking all devices as unhealthy", "Marking it unhealthy", "marking it unhealthy"),
        extract=(
            re.compile(r"Xid=(?P<xid>\d+)"),
            re.compile(r"(?P<device>GPU-[0-9a-fA-F-]{4,}|MIG-[0-9a-fA-F-]{4,})"),
            re.compile(r"'(?P<resource>[a-z0-9.-]+/[a-z0-9.-]+)' device marked unhealthy"),
        ),
        refine=_plugin_marked,
        fields_doc="xid, device (GPU-uuid), resource",
        example="I0810 15:36:05.551834 1 health.go:169] XidCriticalError: Xid=48 on Device=GPU-455e672a-1f0c-4d1b-9a7e-0c3b5d2e6f70; marking device as unhealthy.",
    ),
    Rule(
        name="nvrm.xid",
        code="gpu.xid_error",
        severity="critical",
        confidence="high",
        title="GPU hardware fault: Xid {xid} on PCI {pci}",
        keywords=("NVRM: Xid",),
        pattern=re.compile(r"NVRM: Xid \(PCI:(?P<pci>[0-9a-fA-F:.]{4,20})\): (?P<xid>\d+),(?: pid=(?P<pid>[^,\s]{0,40}),)?(?: name=[^,]{0,100},)?\s*(?P<description>[^\n]{0,200})"),
        refine=_xid,
        fields_doc="xid, pci, pid, description",
        example="NVRM: Xid (PCI:0000:10:1c): 79, pid=1234, GPU has fallen off the bus.",
    ),
    Rule(
        name="device_plugin.no_nvml",
        code="gpu.device_plugin_missing",
        severity="error",
        confidence="medium",
        title="NVIDIA device plugin found no GPUs (NVML unavailable): the node advertises no nvidia.com/gpu",
        keywords=("Incompatible strategy detected", "Incompatible platform detected", "No devices found. Waiting indefinitely", "could not load NVML library"),
        extract=(re.compile(r"(?P<detail>Incompatible strategy detected \w+|Incompatible platform detected|No devices found|could not load NVML library[^,]{0,120})"),),
        refine=lambda f, t: Verdict(confidence="high") if "No devices found" in t else Verdict(),
        fields_doc="detail",
        example="E1119 17:44:43.345466       1 factory.go:112] Incompatible strategy detected auto",
    ),
)
