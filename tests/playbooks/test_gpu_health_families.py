"""GPU health from text: NVIDIA device plugin (NVIDIA/k8s-device-plugin v0.14-v0.20), EKS node monitoring agent
(aws/eks-node-monitoring-agent v1.7 pkg/reasons/reasons.yaml), nvidia-smi tables and errors. Each line cites where
its text comes from; the negatives are healthy near-misses."""
from __future__ import annotations

from pathlib import Path

import pytest

from playbooks.explain import explain_text
from playbooks.signatures import scan_line

FIXTURES = Path(__file__).parent.parent / "fixtures" / "text"


def signals(line: str):
    return [(s.code, s.severity, s.confidence, dict(s.fields)) for s in scan_line(line, source="test")]


@pytest.mark.parametrize(
    ("line", "code", "fields"),
    [
        # device plugin internal/rm/health.go: "unable to get device handle from UUID: %v; marking it as unhealthy"
        ("I0310 08:51:13.4 1 health.go:92] unable to get device handle from UUID: GPU Lost; marking it as unhealthy", "gpu.unhealthy_device", {}),
        # health.go: "Marking device %v as unhealthy: %v" (too old to support health checking)
        ("I0310 08:51:13.4 1 health.go:109] Marking device GPU-566e6f65-c38e-b12f-4824-6944218668b9 as unhealthy: ERROR_NOT_SUPPORTED",
         "gpu.unhealthy_device", {"device": "GPU-566e6f65-c38e-b12f-4824-6944218668b9"}),
        # server.go: "'%s' device marked unhealthy: %s", in a GPU Operator pod's log
        ("gpu-operator/nvidia-device-plugin-daemonset-x7q2n: I0310 08:51:13.4 1 server.go:279] 'nvidia.com/gpu' device marked unhealthy: GPU-566e6f65-c38e-b12f-4824-6944218668b9",
         "gpu.unhealthy_device", {"resource": "nvidia.com/gpu", "installer": "gpu-operator"}),
        # factory.go: klog.Errorf("Failed to initialize NVML: %v.", ret) with go-nvml's name when libnvidia-ml is missing
        ("E0310 08:00:01.1 1 factory.go:99] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.", "gpu.device_plugin_missing", {"nvml_error": "ERROR_LIBRARY_NOT_FOUND"}),
        # go-nvlib info/property-extractor.go: "could not load NVML library: %v"
        ("I0310 08:00:01.1 1 factory.go:104] Detected non-NVML platform: could not load NVML library: libnvidia-ml.so.1: cannot open shared object file: No such file or directory",
         "gpu.device_plugin_missing", {}),
        # nvidia-smi after a driver upgrade without reboot (NVML's own string)
        ("Failed to initialize NVML: Driver/library version mismatch", "gpu.device_plugin_missing", {"nvml_error": "Driver/library version mismatch"}),
        # gpu-operator cmd/nvidia-validator/main.go: fmt.Errorf("GPU resources are not discovered by the node")
        ('time="2026-03-10T08:10:00Z" level=info msg="GPU resources are not discovered by the node"', "gpu.device_plugin_missing", {}),
        # NVSentinel#155: the 570 driver's probe wording
        ("[ 1843.308145] NVRM: fallen off the bus and is not responding to commands.", "gpu.xid_error", {"xid": "79"}),
        # eks-node-monitoring-agent dcgm_devices.go
        ("NvidiaDeviceCountMismatch: expected 8 GPUs for this instance type but only 7 were detected — possible hardware failure",
         "gpu.unhealthy_device", {"expected": "8", "detected": "7"}),
        ("  AcceleratedHardwareReady   False   Tue, 10 Mar 2026 08:15:02 +0000   Tue, 10 Mar 2026 08:12:40 +0000   NvidiaNVLinkError   detected 12 NVLink errors on fieldId 409",
         "gpu.unhealthy_device", {"reason": "NvidiaNVLinkError"}),
        ("    reason: FabricManagerNotRunning", "gpu.unhealthy_device", {"reason": "FabricManagerNotRunning"}),
        ("Warning  AcceleratedHardwareReady  1m  eks-node-monitoring-agent  NvidiaDoubleBitError: detected 1 Nvidia Double Bit error(s) on location 0",
         "gpu.xid_error", {"reason": "NvidiaDoubleBitError"}),
        ("  KernelReady   False   Tue, 10 Mar 2026 08:15:02 +0000   Tue, 10 Mar 2026 08:01:10 +0000   ForkFailedOutOfPIDs   fork failed",
         "node.not_ready", {"condition": "KernelReady", "reason": "ForkFailedOutOfPIDs"}),
        # nvidia-smi: GPU lost (nvidia-container-toolkit#69 spelling without a space, NVIDIA/open-gpu-kernel-modules#387 with one)
        ("Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error", "gpu.unhealthy_device", {"pci": "0000:0B:00.0", "error": "Unknown Error"}),
        ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
         "gpu.device_plugin_missing", {}),
    ],
)
def test_gpu_health_line(line: str, code: str, fields: dict[str, str]) -> None:
    found = [f for c, _, _, f in signals(line) if c == code]
    assert found, signals(line)
    assert any(all(f.get(k) == v for k, v in fields.items()) for f in found), found


@pytest.mark.parametrize(
    "line",
    [
        # healthy near-misses: the agent's True rows, plugin start-up, nvidia-smi rows, a transient in-progress retry
        "  AcceleratedHardwareReady   True    Tue, 10 Mar 2026 09:14:21 +0000   Tue, 10 Mar 2026 07:04:02 +0000   NvidiaGPUIsReady   Monitoring for the Nvidia GPU system is active",
        "  KernelReady                True    Tue, 10 Mar 2026 09:14:21 +0000   Tue, 10 Mar 2026 07:04:02 +0000   KernelIsReady      Monitoring for the Kernel system is active",
        "I0101 12:00:00.103224       1 factory.go:104] Detected NVML platform: found NVML library",
        "I0101 12:00:00.155100       1 server.go:160] Devices: [GPU-455e672a-1f0c-4d1b-9a7e-0c3b5d2e6f70]",
        "|   0  NVIDIA H100 80GB HBM3          On  |   00000000:19:00.0 Off |                    0 |",
        "|   1  NVIDIA A10G                    On  |   00000000:00:1E.0 Off |                  N/A |",
        "|  No running processes found                                                             |",
        'time="2026-03-10T08:10:00Z" level=info msg="GPU resources are not yet discovered by the node, retry: 3"',
        "        Pending                           : Disabled",
        "Normal  AcceleratedHardwareReady  1m  eks-node-monitoring-agent  NvidiaNCCLError: NCCL communication error caused by segfault in libnccl.so",
    ],
)
def test_healthy_gpu_lines_stay_quiet(line: str) -> None:
    assert signals(line) == []


def test_application_xids_from_the_agent_stay_code_errors() -> None:
    # dcgm_policies.go: an Xid outside WellKnownXidCodes is a Warning event "detected unknown XID-%d ..."
    (code, severity, _, fields), = signals(
        "Warning  AcceleratedHardwareReady  1m  eks-node-monitoring-agent  NvidiaXID31Warning: detected unknown XID-31 on the instance, review kernel logs for additional information.")
    assert (code, fields["xid"]) == ("training.code_error", "31")
    assert severity == "warning"


def test_unknown_xid_warning_is_weaker_than_a_fatal_one() -> None:
    warn = signals("Warning  AcceleratedHardwareReady  1m  eks-node-monitoring-agent  NvidiaXID154Warning: detected unknown XID-154 on the instance, review kernel logs for additional information.")
    fatal = signals("NvidiaXID79Error: detected XID-79 on the instance, review kernel logs for additional information.")
    assert [(c, s) for c, s, _, _ in warn] == [("gpu.xid_error", "warning")]
    assert [(c, s, k) for c, s, k, _ in fatal] == [("gpu.xid_error", "critical", "high")]


def test_dcgm_health_code_is_an_error_only_when_it_sets_the_condition() -> None:
    event = signals("Warning  AcceleratedHardwareReady  4m  eks-node-monitoring-agent  DCGMHealthCode3: DCGM detected issues in health check system with error code 3")
    row = signals("  AcceleratedHardwareReady   False   Tue, 10 Mar 2026 08:15:02 +0000   Tue, 10 Mar 2026 08:12:40 +0000   DCGMHealthCode3   DCGM detected issues in health check system with error code 3")
    assert [(c, s, f["dcgm_code"]) for c, s, _, f in event] == [("gpu.unhealthy_device", "warning", "3")]
    assert [(c, s) for c, s, _, _ in row] == [("gpu.unhealthy_device", "error")]


def test_unknown_agent_reason_still_counts_when_the_condition_is_false() -> None:
    (code, _, confidence, fields), = signals(
        "  AcceleratedHardwareReady   False   Tue, 10 Mar 2026 08:15:02 +0000   Tue, 10 Mar 2026 08:12:40 +0000   NvidiaRowRemapFailure   row remapping failed")
    assert (code, confidence, fields["reason"]) == ("gpu.unhealthy_device", "medium", "NvidiaRowRemapFailure")


def test_nvml_unknown_error_is_low_confidence_and_lost_gpu_is_high() -> None:
    unknown = signals("Failed to initialize NVML: Unknown Error")
    lost = signals("E0310 08:51:20.0 1 factory.go:99] Failed to initialize NVML: GPU is lost.")
    assert [(c, k) for c, _, k, _ in unknown] == [("gpu.unhealthy_device", "low")]
    assert [(c, k) for c, _, k, _ in lost] == [("gpu.unhealthy_device", "high")]


def test_lone_power_err_is_low_confidence() -> None:
    # Azure/azhpc-diagnostics#77: ERR! for power alone is transient
    (code, severity, confidence, _), = signals("| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |      0%      Default |")
    assert (code, severity, confidence) == ("gpu.unhealthy_device", "warning", "low")


def test_volatile_ecc_count_in_a_gpu_row() -> None:
    (code, _, _, fields), = signals("|   3  NVIDIA H100 80GB HBM3          On  |   00000000:5D:00.0 Off |                    2 |")
    assert (code, fields["ecc"], fields["index"], fields["pci"]) == ("gpu.unhealthy_device", "2", "3", "00000000:5D:00.0")


def test_err_table_names_the_lost_gpu_only() -> None:
    (finding,) = explain_text((FIXTURES / "gpu_nvidia_smi_err.txt").read_text()).findings
    assert finding.code == "gpu.unhealthy_device"
    assert (finding.severity, finding.confidence) == ("error", "high")
    assert "GPU 0 (00000000:19:00.0)" in finding.title
    assert all("A40" not in e.text for e in finding.evidence)


def test_device_plugin_agent_and_driver_agree_on_one_gpu() -> None:
    diagnosis = explain_text((FIXTURES / "gpu_health_lines.log").read_text())
    by_code = {f.code: f for f in diagnosis.findings}
    assert set(by_code) == {"gpu.xid_error", "gpu.unhealthy_device"}
    assert diagnosis.findings[0].code == "gpu.xid_error"  # critical: the cause; unhealthy devices follow from it
    assert "Xid 79" in by_code["gpu.unhealthy_device"].title
    assert len(by_code["gpu.xid_error"].evidence) == 2  # the agent's event and NVRM's line, not the comments
