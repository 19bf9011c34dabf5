"""GPU health as the EKS node monitoring agent reports it: node conditions and events.

The agent (aws/eks-node-monitoring-agent v1.7, ``pkg/reasons/reasons.yaml``) sets a node condition to
False for a Fatal reason and records a Warning event ``<Reason>: <message>`` (event reason = the condition
type, ``pkg/manager/node_exporter.go``) for a Warning one. The reasons are unique CamelCase words, so one
line is enough whether it is a ``kubectl describe node`` condition row, a YAML ``reason:`` line or an event.

Rules:
- ``monitor.xid``: ``NvidiaXID<n>Error`` (a well-known Xid: condition False) / ``NvidiaXID<n>Warning`` (an
  unknown one: event only), or the message ``detected [unknown ]XID-<n> on the instance``. Xid 13/31/43 stay
  code errors, as for the driver's own Xid line.
- ``monitor.gpu_reason``: the agent's other NVIDIA reasons (double-bit ECC, NVLink, device count, fabric,
  page retirement, PCIe, power, thermal) and DCGM's (``DCGMHealthCode<n>``, ``DCGMDiagnosticFailure``,
  ``DCGMError``, ``DCGMFieldError<n>``).
- ``monitor.device_count``: the message of ``NvidiaDeviceCountMismatch``, with both counts.
- ``monitor.nvlink_errors``: the message of ``NvidiaNVLinkError`` without its reason (monitors/nvidia/dcgm/
  dcgm_policies.go ``handleNvlinkFinding``: ``detected %d NVLink errors on fieldId %v``), as a node condition
  message or an event's message quoted alone.
- ``monitor.accelerated_hardware``: ``AcceleratedHardwareReady False`` with a reason no rule above knows.
- ``monitor.node_condition``: ``KernelReady``, ``NetworkingReady``, ``StorageReady``,
  ``ContainerRuntimeReady`` False in a condition row.

``NvidiaNCCLError`` ("segfault in libnccl.so") is left alone: a crashed NCCL library says nothing about
the GPU. The healthy condition (``NvidiaGPUIsReady``, "Monitoring for the Nvidia GPU system is active")
matches nothing.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.gpu import xid_verdict
from playbooks.signatures.model import Rule, Verdict

# reason -> (code, severity, confidence, what it means). Severities follow reasons.yaml: Fatal reasons
# (condition False, Karpenter node repair replaces the node after 10 minutes) are errors; Warning
# reasons (an event only) are warnings, and low confidence when a single reading can be a blip.
_REASONS: dict[str, tuple[str, str, str, str]] = {
    "NvidiaDoubleBitError": ("gpu.xid_error", "critical", "high", "uncorrectable double-bit ECC error in GPU memory"),
    "NvidiaNVLinkError": ("gpu.unhealthy_device", "error", "high", "NVLink errors between the node's GPUs"),
    "NvidiaDeviceCountMismatch": ("gpu.unhealthy_device", "error", "high", "fewer GPUs visible than the instance type has"),
    "NvidiaFabricError": ("gpu.unhealthy_device", "error", "high", "the NVLink/NVSwitch fabric reports faults"),
    "FabricManagerNotRunning": ("gpu.unhealthy_device", "error", "high", "NVIDIA Fabric Manager is not running, so CUDA cannot use the NVSwitch GPUs"),
    "DCGMDiagnosticFailure": ("gpu.unhealthy_device", "error", "medium", "a DCGM diagnostic test failed"),
    "DCGMError": ("gpu.unhealthy_device", "error", "medium", "DCGM itself failed on the node"),
    "NvidiaPageRetirement": ("gpu.unhealthy_device", "warning", "medium", "GPU memory pages were retired after ECC errors"),
    "NvidiaPCIeError": ("gpu.unhealthy_device", "warning", "low", "PCIe replays on a GPU link"),
    "NvidiaPowerError": ("gpu.unhealthy_device", "warning", "low", "GPU power outside its limits"),
    "NvidiaThermalError": ("gpu.unhealthy_device", "warning", "low", "GPU temperature outside its limits"),
}
_REASON = linear.compile(r"\b(?P<reason>DCGMHealthCode(?P<dcgm_code>\d+)|DCGMFieldError(?P<field_id>\d+)|" + "|".join(_REASONS) + r")\b")
_FALSE = linear.compile(r"\bFalse\b|status: \"?False")


def _monitor_xid(fields: dict[str, str], text: str) -> Verdict | None:
    verdict = xid_verdict(fields, text)
    if verdict is None:
        return None
    if verdict.code is None and (fields.get("level") == "Warning" or "unknown" in fields):
        # The agent raises only an event for an Xid outside its well-known list.
        return Verdict(severity="warning", confidence="medium",
                       title="Node monitoring agent saw Xid {xid} (not on its list of fatal Xids; the node stays Ready)")
    return verdict


def _gpu_reason(fields: dict[str, str], text: str) -> Verdict:
    reason = fields["reason"]
    if reason.startswith("DCGMHealthCode"):
        # Same reason for DCGM's FAIL (Fatal, condition False) and WARN (event) results.
        failed = _FALSE.search(text) is not None
        return Verdict(severity="error" if failed else "warning",
                       title="DCGM health check reported error code {dcgm_code} on a GPU" + (" (AcceleratedHardwareReady=False)" if failed else ""))
    if reason.startswith("DCGMFieldError"):
        return Verdict(severity="warning", confidence="low", title="DCGM reported an error reading GPU field {field_id}")
    code, severity, confidence, meaning = _REASONS[reason]
    return Verdict(code=code, severity=severity, confidence=confidence, title=f"Node monitoring agent: {reason}, {meaning}")


def _node_condition(fields: dict[str, str], text: str) -> Verdict:
    return Verdict(title="Node monitoring agent reports {condition}=False[ ({reason})]")


RULES: tuple[Rule, ...] = (
    Rule(
        name="monitor.xid",
        code="gpu.xid_error",
        severity="critical",
        confidence="high",
        title="GPU hardware fault: Xid {xid} (node monitoring agent, AcceleratedHardwareReady=False)",
        keywords=("NvidiaXID", "XID-"),
        pattern=linear.compile(r"(?:NvidiaXID|detected (?P<unknown>unknown )?XID-)(?P<xid>[0-9]{1,4})(?:(?P<level>Error|Warning)|\b)"),
        refine=_monitor_xid,
        fields_doc="xid, level (Error|Warning), unknown, action and xid_name (from the Xid table, as nvrm.xid)",
        example="  AcceleratedHardwareReady   False   Tue, 10 Mar 2026 08:15:02 +0000   Tue, 10 Mar 2026 08:12:40 +0000   NvidiaXID79Error   detected XID-79 on the instance, review kernel logs for additional information.",
    ),
    Rule(
        name="monitor.gpu_reason",
        code="gpu.unhealthy_device",
        severity="warning",
        confidence="medium",
        title="Node monitoring agent: {reason}",
        keywords=("DCGMHealthCode", "DCGMFieldError", *_REASONS),
        pattern=_REASON,
        refine=_gpu_reason,
        fields_doc="reason, dcgm_code, field_id",
        example="Warning  AcceleratedHardwareReady  4m  eks-node-monitoring-agent  DCGMHealthCode3: DCGM detected issues in health check system with error code 3",
    ),
    Rule(
        name="monitor.device_count",
        code="gpu.unhealthy_device",
        severity="error",
        confidence="high",
        title="Only {detected} of {expected} GPUs are visible on the node: a GPU is missing (likely hardware)",
        keywords=("GPUs for this instance type but only",),
        pattern=linear.compile(r"expected (?P<expected>\d+) GPUs for this instance type but only (?P<detected>\d+) were detected"),
        fields_doc="expected, detected",
        example="NvidiaDeviceCountMismatch: expected 8 GPUs for this instance type but only 7 were detected — possible hardware failure",
    ),
    Rule(
        # aws/eks-node-monitoring-agent v1.7.0 monitors/nvidia/dcgm/dcgm_policies.go handleNvlinkFinding:
        # reasons.NvidiaNVLinkError.Message(fmt.Sprintf("detected %d NVLink errors on fieldId %v", ...)), a Fatal
        # reason (AcceleratedHardwareReady=False). NCCL's "Add NVLink error : could not find DEV" (topo.cc) is a
        # topology lookup, not a link fault: the plural "NVLink errors" is the agent's.
        name="monitor.nvlink_errors",
        code="gpu.unhealthy_device",
        severity="error",
        confidence="high",
        title="Node monitoring agent: NvidiaNVLinkError, NVLink errors between the node's GPUs",
        keywords=("NVLink errors",),
        pattern=linear.compile(r"\bNVLink errors\b"),
        extract=(linear.compile(r"detected (?P<count>\d{1,12}) NVLink errors on fieldId (?P<field_id>\d{1,6})"),),
        unless=("NvidiaNVLinkError", "NVLink errors were reported"),
        refine=lambda f, t: Verdict(fields={"reason": "NvidiaNVLinkError"}),
        fields_doc="reason (NvidiaNVLinkError), count, field_id",
        example="Warning  AcceleratedHardwareReady  1m  eks-node-monitoring-agent  detected 12 NVLink errors on fieldId 409",
    ),
    Rule(
        name="monitor.accelerated_hardware",
        code="gpu.unhealthy_device",
        severity="error",
        confidence="medium",
        title="Node monitoring agent marked the node's accelerators unhealthy: AcceleratedHardwareReady=False[ ({reason})]",
        keywords=("AcceleratedHardwareReady",),
        pattern=linear.compile(r"AcceleratedHardwareReady\s+False\b"),
        extract=(linear.compile(r"[+-]\d{4}\s+(?P<reason>[A-Z][A-Za-z0-9]{2,80})\s"),),
        unless=("NvidiaXID", "XID-", "DCGMHealthCode", "DCGMFieldError", *_REASONS),
        fields_doc="reason",
        example="  AcceleratedHardwareReady   False   Tue, 10 Mar 2026 08:15:02 +0000   Tue, 10 Mar 2026 08:12:40 +0000   NvidiaFutureReason   something new",
    ),
    Rule(
        name="monitor.node_condition",
        code="node.not_ready",
        severity="warning",
        confidence="medium",
        title="Node monitoring agent reports {condition}=False",
        keywords=("KernelReady", "NetworkingReady", "StorageReady", "ContainerRuntimeReady"),
        pattern=linear.compile(r"^\s*(?P<condition>KernelReady|NetworkingReady|StorageReady|ContainerRuntimeReady)\s+False\s"),
        extract=(linear.compile(r"[+-]\d{4}\s+(?P<reason>[A-Z][A-Za-z0-9]{2,80})\s"),),
        refine=_node_condition,
        fields_doc="condition, reason",
        example="  NetworkingReady            False   Tue, 10 Mar 2026 08:15:02 +0000   Tue, 10 Mar 2026 08:01:10 +0000   IPAMDNotReady   IPAMD is not ready",
    ),
)
