"""Whole-document readers: ``kubectl describe node`` (kubectl pkg/describe/describe.go layout) and
``nvidia-smi -q`` (driver 535 layout, leptonai/gpud testdata). Fixtures name their sources in their headers."""
from __future__ import annotations

from pathlib import Path

from playbooks import documents
from playbooks.documents import describe_node, nvidia_smi_q
from playbooks.explain import explain_text

FIXTURES = Path(__file__).parent.parent / "fixtures" / "text"


def text(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_healthy_documents_give_no_signals() -> None:
    for name in ("benign_gpu_describe_node.txt", "benign_gpu_nvidia_smi_q.txt", "benign_gpu_nvidia_smi.txt"):
        assert documents.signals(text(name), source=name) == [], name


def test_allocatable_below_capacity_is_unhealthy_gpus() -> None:
    found = describe_node.read(text("gpu_describe_node_unhealthy.txt"), "describe")
    (gpu,) = [s for s in found if s.code == "gpu.unhealthy_device"]
    assert (gpu.severity, gpu.confidence) == ("error", "high")
    assert "1 of 8 GPUs unhealthy" in gpu.title and "capacity 8, allocatable 7" in gpu.title
    assert gpu.fields["node"] == "ip-10-0-77-12.us-west-2.compute.internal"
    assert gpu.source == "describe"
    assert gpu.line == "nvidia.com/gpu:         7"
    assert text("gpu_describe_node_unhealthy.txt").splitlines()[gpu.lineno - 1].strip() == gpu.line


def test_describe_node_end_to_end_puts_the_xid_first() -> None:
    diagnosis = explain_text(text("gpu_describe_node_unhealthy.txt"), source="describe node")
    assert [f.code for f in diagnosis.findings] == ["gpu.xid_error", "gpu.unhealthy_device"]
    assert diagnosis.findings[1].evidence[0].source.startswith("describe node line ")


def test_gpu_instance_without_nvidia_gpu_is_a_missing_device_plugin() -> None:
    diagnosis = explain_text(text("gpu_describe_node_no_plugin.txt"))
    (finding,) = diagnosis.findings
    assert finding.code == "gpu.device_plugin_missing"
    assert (finding.severity, finding.confidence) == ("error", "high")
    assert "instance-gpu-count=4" in finding.title


def test_a_joining_gpu_node_without_gpus_yet_is_only_a_weak_signal() -> None:
    joining = text("gpu_describe_node_no_plugin.txt").replace(
        "Taints:             nvidia.com/gpu=true:NoSchedule",
        "Taints:             nvidia.com/gpu=true:NoSchedule\n                    karpenter.sh/unregistered:NoExecute")
    found = {s.code: s for s in describe_node.read(joining, "x")}
    assert (found["gpu.device_plugin_missing"].severity, found["gpu.device_plugin_missing"].confidence) == ("warning", "low")
    assert found["scheduling.node_lifecycle_taint"].fields["key"] == "karpenter.sh/unregistered"


def test_instance_type_label_alone_marks_a_gpu_node_but_not_amd_g4ad() -> None:
    base = "\n".join(line for line in text("gpu_describe_node_no_plugin.txt").splitlines() if "karpenter.k8s.aws/instance-gpu" not in line)
    assert [s.code for s in describe_node.read(base, "x")] == ["gpu.device_plugin_missing"]
    assert describe_node.read(base.replace("g5.12xlarge", "g4ad.8xlarge"), "x") == []
    assert describe_node.read(base.replace("g5.12xlarge", "m7i.8xlarge"), "x") == []


def test_mig_resources_count_as_advertised_gpus() -> None:
    mig = text("gpu_describe_node_no_plugin.txt").replace("  pods:                   100\n", "  nvidia.com/mig-1g.10gb:  28\n  pods:                   100\n")
    assert describe_node.read(mig, "x") == []


def test_not_ready_node_with_unreachable_taints_and_cordon() -> None:
    # Taints and Ready=Unknown as in NVIDIA/k8s-device-plugin#302 (node.kubernetes.io/unreachable:NoExecute/NoSchedule)
    broken = text("benign_gpu_describe_node.txt").replace(
        "Taints:             nvidia.com/gpu=true:NoSchedule",
        "Taints:             node.kubernetes.io/unreachable:NoExecute\n                    nvidia.com/gpu=true:NoSchedule\n"
        "                    node.kubernetes.io/unreachable:NoSchedule",
    ).replace("Unschedulable:      false", "Unschedulable:      true").replace(
        "  Ready                      True    Tue, 10 Mar 2026 09:12:40 +0000   Tue, 10 Mar 2026 07:03:01 +0000   KubeletReady                 kubelet is posting ready status",
        "  Ready                      Unknown Tue, 10 Mar 2026 09:12:40 +0000   Tue, 10 Mar 2026 09:13:31 +0000   NodeStatusUnknown            Kubelet stopped posting node status.",
    )
    found = describe_node.read(broken, "x")
    ready = [s for s in found if s.code == "node.not_ready"]
    assert [(s.fields["status"], s.fields["reason"], s.severity) for s in ready] == [("Unknown", "NodeStatusUnknown", "error")]
    taints = sorted(s.fields["key"] for s in found if s.code == "scheduling.node_lifecycle_taint")
    assert taints == ["node.kubernetes.io/unreachable", "node.kubernetes.io/unreachable", "node.kubernetes.io/unschedulable"]
    assert explain_text(broken).findings[0].code == "node.not_ready"


def test_several_nodes_are_read_separately() -> None:
    both = text("gpu_describe_node_unhealthy.txt") + "\n\n" + text("gpu_describe_node_no_plugin.txt").replace("ip-10-0-77-12", "ip-10-0-9-40")
    found = sorted((s.code, s.fields["node"].split(".")[0]) for s in describe_node.read(both, "x"))
    assert found == [("gpu.device_plugin_missing", "ip-10-0-9-40"), ("gpu.unhealthy_device", "ip-10-0-77-12")]


def test_nvidia_smi_q_reads_values_under_their_sections() -> None:
    found = nvidia_smi_q.read(text("gpu_nvidia_smi_q_remap.txt"), "smi")
    got = sorted((s.fields["key"], s.severity, s.confidence) for s in found)
    assert got == [
        ("DRAM Uncorrectable", "error", "medium"),
        ("Drain and Reset Recommended", "error", "high"),
        ("Pending", "warning", "high"),  # Remapped Rows only; MIG Mode and ECC Mode have Pending rows too
    ]
    assert {s.fields["bus"] for s in found} == {"00000000:19:00.0"}
    assert all(s.code == "gpu.unhealthy_device" for s in found)


def test_nvidia_smi_q_remapping_failure_and_older_layouts() -> None:
    failed = text("benign_gpu_nvidia_smi_q.txt").replace("Remapping Failure Occurred        : No", "Remapping Failure Occurred        : Yes", 1)
    (signal,) = nvidia_smi_q.read(failed, "x")
    assert (signal.severity, signal.fields["bus"]) == ("critical", "00000000:19:00.0")
    older = (
        "==============NVSMI LOG==============\n\nGPU 00000000:00:1E.0\n    Product Name                          : Tesla V100-SXM2-16GB\n"
        "    ECC Errors\n        Volatile\n            Single Bit\n                Total                     : 5\n"
        "            Double Bit\n                Total                     : 1\n"
        "    Retired Pages\n        Single Bit ECC                    : 0\n        Double Bit ECC                    : 1\n"
        "        Pending Page Blacklist            : Yes\n"
    )
    assert sorted(s.fields["key"] for s in nvidia_smi_q.read(older, "x")) == ["Pending Page Blacklist", "Total"]


def test_nvidia_smi_q_end_to_end() -> None:
    diagnosis = explain_text(text("gpu_nvidia_smi_q_remap.txt"))
    assert [f.code for f in diagnosis.findings] == ["gpu.unhealthy_device"]
    assert len(diagnosis.findings[0].evidence) == 3
