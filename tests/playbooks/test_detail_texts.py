"""Detail paragraphs and fix templates that depend on a field of the signal (issue 12): each case runs a real
line through explain_text and checks the text the field calls for, and that the older text still stands
where the field is absent.

Lines come from the other families' tests and fixtures, which cite their upstream sources:
tests/playbooks/test_gpu_health_families.py, test_torch_families.py, test_efa_families.py,
test_node_ec2_families.py, test_documents.py, tests/playbooks/lines.py and tests/fixtures/text/.
"""
from __future__ import annotations

from pathlib import Path

from playbooks.explain import explain_text
from playbooks.model import Finding
from tests.playbooks.test_explain import check_snippet

FIXTURES = Path(__file__).parent.parent / "fixtures" / "text"


def finding(text: str, code: str) -> Finding:
    found = {f.code: f for f in explain_text(text).findings}
    assert code in found, sorted(found)
    return found[code]


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


# --- 1. gpu.device_plugin_missing: the installer and NVML's reason choose the fix ---------------------

# NVIDIA/k8s-device-plugin internal/plugin/factory.go "Failed to initialize NVML: %v." (test_gpu_health_families.py),
# read from a GPU Operator pod with the pod prefix that test uses for the same plugin's server.go line.
OPERATOR_NVML = "gpu-operator/nvidia-device-plugin-daemonset-x7q2n: E0310 08:00:01.1 1 factory.go:99] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND."
PLAIN_NVML = "E0310 08:00:01.1 1 factory.go:99] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND."
# NVML's own string after a driver upgrade without a reboot (test_gpu_health_families.py)
MISMATCH = "Failed to initialize NVML: Driver/library version mismatch"


def test_gpu_operator_plugin_is_looked_for_in_its_own_namespace() -> None:
    fix = finding(OPERATOR_NVML, "gpu.device_plugin_missing").fix
    assert "-n gpu-operator" in fix.snippet and "app=nvidia-device-plugin-daemonset" in fix.snippet
    assert "kube-system" not in fix.snippet and "nvidia-ctk" not in fix.snippet
    check_snippet("generic/gpu.device_plugin_missing.sh.j2", fix.snippet)


def test_plain_plugin_keeps_the_containerd_fix() -> None:
    fix = finding(PLAIN_NVML, "gpu.device_plugin_missing").fix
    assert "nvidia-ctk runtime configure" in fix.snippet and "-n kube-system" in fix.snippet
    assert "gpu-operator" not in fix.snippet
    assert fix.summary == "Make the NVIDIA device plugin see the GPUs (ERROR_LIBRARY_NOT_FOUND)"


def test_driver_library_mismatch_is_a_reboot_not_containerd() -> None:
    found = finding(MISMATCH, "gpu.device_plugin_missing")
    assert found.fix.summary.startswith("Reboot or replace the node")
    assert "kubectl drain" in found.fix.snippet and "nvidia-ctk" not in found.fix.snippet
    assert "reboot" in found.detail and "nvidia-ctk" not in found.detail
    other = finding(PLAIN_NVML, "gpu.device_plugin_missing")
    assert "nvidia-ctk runtime configure" in other.detail and "reboot" not in other.detail


# --- 2. NODE= from describe node -----------------------------------------------------------------------


def test_unhealthy_gpu_fix_names_the_described_node() -> None:
    fix = finding(fixture("gpu_describe_node_unhealthy.txt"), "gpu.unhealthy_device").fix
    assert "NODE=ip-10-0-77-12.us-west-2.compute.internal\n" in fix.snippet
    # the device plugin's line carries no node: the placeholder stays
    plugin = "I0810 15:36:05.551834 1 health.go:169] XidCriticalError: Xid=48 on Device=GPU-455e672a-1f0c-4d1b-9a7e-0c3b5d2e6f70; marking device as unhealthy."
    assert "NODE='<node-name>'\n" in finding(plugin, "gpu.unhealthy_device").fix.snippet


def test_not_ready_fix_names_the_described_node() -> None:
    # Ready=Unknown row as in NVIDIA/k8s-device-plugin#302 (test_documents.py builds the same node)
    broken = fixture("benign_gpu_describe_node.txt").replace(
        "  Ready                      True    Tue, 10 Mar 2026 09:12:40 +0000   Tue, 10 Mar 2026 07:03:01 +0000   KubeletReady                 kubelet is posting ready status",
        "  Ready                      Unknown Tue, 10 Mar 2026 09:12:40 +0000   Tue, 10 Mar 2026 09:13:31 +0000   NodeStatusUnknown            Kubelet stopped posting node status.",
    )
    fix = finding(broken, "node.not_ready").fix
    assert "NODE=ip-10-0-77-12.us-west-2.compute.internal\n" in fix.snippet


# --- 3. GPU health: node repair, pending remaps, what to collect -----------------------------------------

# aws/eks-node-monitoring-agent rows and events (test_gpu_health_families.py)
NVLINK_ROW = "  AcceleratedHardwareReady   False   Tue, 10 Mar 2026 08:15:02 +0000   Tue, 10 Mar 2026 08:12:40 +0000   NvidiaNVLinkError   detected 12 NVLink errors on fieldId 409"
DCGM_EVENT = "Warning  AcceleratedHardwareReady  4m  eks-node-monitoring-agent  DCGMHealthCode3: DCGM detected issues in health check system with error code 3"
AGENT_XID = "NvidiaXID79Error: detected XID-79 on the instance, review kernel logs for additional information."
AGENT_XID_WARNING = "Warning  AcceleratedHardwareReady  1m  eks-node-monitoring-agent  NvidiaXID154Warning: detected unknown XID-154 on the instance, review kernel logs for additional information."
# NVIDIA/k8s-device-plugin health.go and the driver's own Xid line (tests/playbooks/lines.py)
PLUGIN_XID = "I0810 15:36:05.551834 1 health.go:169] XidCriticalError: Xid=48 on Device=GPU-455e672a-1f0c-4d1b-9a7e-0c3b5d2e6f70; marking device as unhealthy."
NVRM_XID = "[ 5123.456789] NVRM: Xid (PCI:0000:10:1c): 79, pid=2451, GPU has fallen off the bus."


def test_agent_reasons_explain_karpenter_node_repair() -> None:
    for line in (NVLINK_ROW, DCGM_EVENT):
        detail = finding(line, "gpu.unhealthy_device").detail
        assert "node repair (feature gate NodeRepair, Karpenter v1.1+" in detail, line
        assert "False for 10 minutes" in detail and "20% of the NodePool" in detail
        assert "device plugin marked" not in detail
    assert "DCGM health error code 3" in finding(DCGM_EVENT, "gpu.unhealthy_device").detail


def test_device_plugin_line_keeps_its_text_without_node_repair() -> None:
    detail = finding(PLUGIN_XID, "gpu.unhealthy_device").detail
    assert detail.startswith("The NVIDIA device plugin marked GPU(s) unhealthy after Xid 48 (double-bit ECC error).")
    assert "NodeRepair" not in detail and "grep -i xid" not in detail


def test_agent_xid_gets_node_repair_and_the_driver_line_does_not() -> None:
    agent = finding(AGENT_XID, "gpu.xid_error").detail
    assert agent.startswith("The EKS node monitoring agent reported Xid 79: GPU has fallen off the bus.")
    assert "False for 10 minutes" in agent and "PCI ?" not in agent
    driver = finding(NVRM_XID, "gpu.xid_error").detail
    assert driver.startswith("The GPU driver reported Xid 79 on PCI 0000:10:1c: GPU has fallen off the bus.")
    assert "NodeRepair" not in driver


def test_agent_warning_xid_says_repair_does_not_act() -> None:
    detail = finding(AGENT_XID_WARNING, "gpu.xid_error").detail
    assert "only a Warning event" in detail and "node repair does not act" in detail
    assert "False for 10 minutes" not in detail


def test_pending_row_remap_is_applied_by_a_reset() -> None:
    found = finding(fixture("gpu_nvidia_smi_q_remap.txt"), "gpu.unhealthy_device")
    assert "a GPU reset (nvidia-smi -r -i <index>, no process on the GPU) or a reboot then applies the remap" in found.detail
    assert "collect next: dmesg | grep -i xid" in found.detail


def test_nvidia_smi_table_asks_for_the_xid_too() -> None:
    found = finding(fixture("gpu_nvidia_smi_err.txt"), "gpu.unhealthy_device")
    assert "collect next: dmesg | grep -i xid" in found.detail
    assert "applies the remap" not in found.detail


# --- 4. ncclSystemError ----------------------------------------------------------------------------------


def test_nccl_system_error_is_a_failed_call_on_this_host() -> None:
    detail = finding(fixture("torch_nccl_system_error.log"), "nccl.peer_unresponsive").detail
    assert detail.startswith(
        "A system call inside NCCL failed on this host: a socket (peer gone, firewall or security group), /dev/shm, "
        "or a device call. Before NCCL 2.13 a peer that exited also read this way. Rerun with NCCL_DEBUG=INFO: the "
        "WARN line before the error names the call.")
    assert "EFA error 4126" not in detail


def test_nccl_remote_error_keeps_the_peer_text() -> None:
    # NVIDIA/nccl ncclRemoteError as PyTorch prints it (tests/playbooks/lines.py)
    line = "[rank0]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."
    assert finding(line, "nccl.peer_unresponsive").detail.startswith("Another rank stopped answering")


# --- 5. unhandled cuda error inside NCCL -------------------------------------------------------------------


def test_cuda_failure_inside_nccl_names_its_meaning() -> None:
    # NVIDIA/nccl src/include/checks.h "Cuda failure '%s'" (test_torch_families.py)
    line = "ip-10-1-77-12:105:180 [1] NCCL WARN Cuda failure 'invalid device ordinal'"
    detail = finding(line, "nccl.invalid_usage").detail
    assert detail.startswith("A CUDA call inside NCCL failed ('invalid device ordinal': a rank asked for a GPU the pod does not have")
    assert "reported as training.cuda_oom" in detail and "NCCL_P2P_DISABLE=1" in detail
    assert "ncclInvalidUsage" not in detail


def test_bare_unhandled_cuda_error_and_other_invalid_usage() -> None:
    bare = finding("[rank0]: ncclUnhandledCudaError: Call to CUDA function failed.", "nccl.invalid_usage").detail
    assert bare.startswith("A CUDA call inside NCCL failed. The NCCL WARN 'Cuda failure' line names it")
    # NVIDIA/nccl ncclGetErrorString "invalid usage" wrapped by ProcessGroupNCCL (tests/playbooks/lines.py)
    usage = ("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, "
             "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.27.5")
    assert finding(usage, "nccl.invalid_usage").detail.startswith("NCCL rejected the job's configuration (ncclInvalidUsage)")
    duplicate = "llama-3-8b-worker-0:105:105 [1] init.cc:1018 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1d000"
    assert finding(duplicate, "nccl.invalid_usage").detail.startswith("Two ranks of the job landed on the same GPU")


# --- 6. subnets, node group launches, EFA devices, EFA resource exhaustion ---------------------------------

# aws/amazon-vpc-cni-k8s "add cmd: failed to assign an IP address to container" (test_node_ec2_families.py)
POD_IP = ('  Warning  FailedCreatePodSandBox  23m  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = failed '
          'to setup network for sandbox "14bffa7734d01abd808dead23744386135518961ab240ba48b88a9e269398126": plugin type="aws-cni" '
          'name="aws-cni" failed (add): add cmd: failed to assign an IP address to container')


def test_pod_ip_exhaustion_is_the_vpc_cni() -> None:
    found = finding(POD_IP, "karpenter.subnet_problem")
    assert found.detail.startswith("The VPC CNI (aws-node / ipamd) could not assign the pod an IP address")
    assert "ENABLE_PREFIX_DELEGATION" in found.detail and "WARM_IP_TARGET" in found.detail
    assert "Subnet  has" not in found.detail and "EC2NodeClass status.subnets" not in found.detail
    assert "ENABLE_PREFIX_DELEGATION" in found.fix.snippet
    check_snippet("generic/karpenter.subnet_problem.yaml.j2", found.fix.snippet)


def test_node_group_subnet_issues_have_their_own_sentences() -> None:
    # botocore eks NodegroupIssueCode in describe-nodegroup JSON (test_node_ec2_families.py)
    expected = {
        "InsufficientFreeAddresses": "has no free IP addresses for new nodes",
        "Ec2SubnetNotFound": "no longer exists",
        "Ec2SubnetInvalidConfiguration": "does not auto-assign public IPv4 addresses",
    }
    for issue, words in expected.items():
        detail = finding(f'                    "code": "{issue}",', "karpenter.subnet_problem").detail
        assert f"({issue})" in detail and words in detail, issue


def test_ec2_subnet_error_keeps_the_subnet_text() -> None:
    line = ("Could not launch On-Demand Instances. InsufficientFreeAddressesInSubnet - There are not enough free addresses in "
            "subnet 'subnet-0a1b2c3d4e5f67890' to satisfy the requested number of instances.")
    detail = finding(line, "karpenter.subnet_problem").detail
    assert detail.startswith("Subnet subnet-0a1b2c3d4e5f67890 has no free IP addresses.")


def test_asg_launch_failures_point_at_the_scaling_activities() -> None:
    found = finding('                    "code": "AsgInstanceLaunchFailures",', "karpenter.insufficient_capacity")
    assert "aws autoscaling describe-scaling-activities" in found.detail
    assert "Karpenter's launch errors" not in found.detail and "EC2 has no capacity" not in found.detail
    assert "describe-scaling-activities" in found.fix.summary
    check_snippet("generic/karpenter.insufficient_capacity.yaml.j2", found.fix.snippet)
    capacity = finding(fixture("ec2_nodegroup_degraded.txt"), "karpenter.insufficient_capacity")
    assert capacity.detail.startswith("EC2 has no capacity for p5.48xlarge in us-east-1a")


def test_no_efa_device_in_the_container() -> None:
    found = finding(fixture("efa_no_device.log"), "efa.resource_unavailable")
    assert found.detail.startswith("The container sees no usable EFA device")
    assert "Request vpc.amazonaws.com/efa in the pod" in found.detail
    assert "Pods request vpc.amazonaws.com/efa" not in found.detail
    assert "vpc.amazonaws.com/efa: 32" in found.fix.snippet
    check_snippet("generic/efa.resource_unavailable.yaml.j2", found.fix.snippet)
    # kube-scheduler's "Insufficient vpc.amazonaws.com/efa" (tests/playbooks/lines.py): the old text
    line = "0/4 nodes are available: 4 Insufficient vpc.amazonaws.com/efa. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
    scheduler = finding(line, "efa.resource_unavailable")
    assert scheduler.detail.startswith("Pods request vpc.amazonaws.com/efa but no node offers it.")
    assert "tolerations" in scheduler.fix.snippet


def aws_ofi_nccl(prov_errno: int, message: str) -> str:
    # aws/aws-ofi-nccl include/nccl_ofi_platform.h log_cq_error format (test_efa_families.py)
    return (f"ip-10-1-2-3:311:395 [0] NCCL WARN NET/OFI Request 0x7f5e2c0a8f40 (send) completed with error: err: 12, flags: 2050, "
            f"prov_errno: {prov_errno}, strerror: {message} My EFA addr: fi_addr_efa://[fe80::8d8:57ff:fe1a:b2c3]:0:1583190451")


def test_efa_resource_exhaustion_does_not_lead_with_security_groups() -> None:
    for errno, message in ((4105, "Out of memory"), (4108, "RX entries exhausted"), (4109, "TX entries exhausted")):
        found = finding(aws_ofi_nccl(errno, message), "efa.network_unreachable")
        assert found.detail.startswith(f"libfabric reported error {errno} ({message}): the EFA provider on this host ran out")
        assert "not a security group" in found.detail and "security group rules" not in found.detail
        assert "security group" not in found.fix.summary and "authorize-security-group" not in found.fix.snippet
    unreachable = finding(aws_ofi_nccl(15, "Unreachable remote - never received a response"), "efa.network_unreachable")
    assert "'Unreachable remote' (15) is most often security groups" in unreachable.detail
    assert "authorize-security-group-ingress" in unreachable.fix.snippet
