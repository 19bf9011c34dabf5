"""CUDA OOM advice for the GPU the job really has: from the node's labels (instance type, Karpenter's
GPU labels, GPU feature discovery) or, in explain, from the message's own "total capacity".

OOM lines: PyTorch's c10/cuda/CUDACachingAllocator.cpp format ("GPU 0 has a total capacity of ... of
which ... is free"). The totals are as public reports print them: 79.19 GiB for an H100 (issue 12's own
PyTorch 2.11 run), 14.75 GiB for a T4 (hpcaitech/Open-Sora#697), 39.49 GiB for an A100 40 GB
(tests/fixtures/text/seed000_cuda_oom.log), 31.75 GiB for a V100 32 GB (hiyouga/LlamaFactory#182, the
PyTorch < 2.1 spelling), 139.81 GiB for an H200 (8xH200 SFT reports). Labels: Karpenter
(aws/karpenter-provider-aws pkg/providers/instancetype/types.go: kebab-case GPU name, memory in MiB) and
GPU feature discovery (NVIDIA/k8s-device-plugin internal/lm/resource.go; "NVIDIA-H100-80GB-HBM3",
"Tesla-T4" as public node listings show them).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from playbooks import hardware
from playbooks.analyzers import training
from playbooks.explain import explain_text
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.model import Target
from tests.playbooks.test_explain import check_snippet

CATALOGUE = Path(__file__).parents[2] / "bot" / "gateway" / "data" / "instance_types.json"

H100_OOM = ("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
            "capacity of 79.19 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 77.90 GiB "
            "memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.31 GiB is reserved by "
            "PyTorch but unallocated.")
A100_40_OOM = ("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 has a total "
               "capacity of 39.49 GiB of which 119.38 MiB is free. Including non-PyTorch memory, this process has "
               "38.90 GiB memory in use.")
T4_OOM = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 160.00 MiB. GPU 0 has a total capacity "
          "of 14.75 GiB of which 73.06 MiB is free. Process 82243 has 14.67 GiB memory in use. Of the allocated memory "
          "14.55 GiB is allocated by PyTorch, and 23.38 MiB is reserved by PyTorch but unallocated.")
V100_32_OOM = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 50.00 MiB (GPU 0; 31.75 GiB total "
               "capacity; 5.22 GiB already allocated; 44.69 MiB free; 5.22 GiB reserved in total by PyTorch)")
H200_OOM = ("[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 37.09 GiB. GPU 5 has a total "
            "capacity of 139.80 GiB of which 35.64 GiB is free. Including non-PyTorch memory, this process has "
            "104.15 GiB memory in use.")


# -- the GPU table agrees with the instance catalogue ----------------------------------------------

def test_families_agree_with_the_instance_catalogue() -> None:
    catalogue = json.loads(CATALOGUE.read_text())["instance_types"]
    checked = set()
    for name, raw in catalogue.items():
        gpus = (raw.get("GpuInfo") or {}).get("Gpus") or []
        family = hardware.family_of(name)
        if not gpus or not gpus[0].get("Count"):
            continue  # fractional GPUs (g6f, gr6f) are no place to move a training job
        assert family in hardware.FAMILIES, name
        assert hardware.FAMILIES[family] == (gpus[0]["Name"], gpus[0]["MemoryInfo"]["SizeInMiB"]), name
        assert gpus[0]["Name"] in hardware.COMPUTE_MAJOR, name
        checked.add(family)
    assert {"g4dn", "g5", "g6e", "p4d", "p4de", "p5", "p5e", "p6-b200"} <= checked
    for memory, _, families in hardware.LADDER:
        assert all(hardware.FAMILIES[f][1] == memory for f in families)


@pytest.mark.parametrize(("gpu", "bf16"), [("V100", False), ("T4", False), ("K80", False), ("A100", True),
                                           ("a10g", True), ("L4", True), ("l40s", True), ("H100", True),
                                           ("H200", True), ("B200", True), ("rtx-pro-server-6000", True),
                                           ("MI300X", None)])
def test_bf16_only_from_ampere_on(gpu: str, bf16: bool | None) -> None:
    assert hardware.bf16_of(gpu) is bf16


def test_the_next_gpu_up_is_never_the_one_the_job_has() -> None:
    def up(family: str) -> list[str]:
        name, memory = hardware.FAMILIES[family]
        return [s.text for s in hardware.bigger_than(hardware.Gpu(name, memory))]
    assert up("p5") == ["141 GiB H200 (p5e / p5en)", "179 GiB B200 (p6-b200)"]
    assert up("p4de") == up("p5")  # an 80 GB A100 is not pointed at an 80 GB H100
    assert up("p4d")[0] == "80 GiB A100 or H100 (p4de / p5)"
    assert up("g4dn")[0] == "22 GiB A10G or L4 (g5 / g6)"
    assert up("p6-b300") == []


# -- which GPU a node has ---------------------------------------------------------------------------

@pytest.mark.parametrize(("labels", "name", "mib", "bf16"), [
    ({"node.kubernetes.io/instance-type": "p5.48xlarge"}, "H100", 81920, True),
    ({"node.kubernetes.io/instance-type": "p3dn.24xlarge"}, "V100", 32768, False),
    ({"karpenter.k8s.aws/instance-gpu-name": "l40s", "karpenter.k8s.aws/instance-gpu-memory": "45776"}, "L40S", 45776, True),
    ({"eks.amazonaws.com/instance-gpu-name": "a100", "eks.amazonaws.com/instance-gpu-memory": "81920"}, "A100", 81920, True),
    ({"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.memory": "15109", "nvidia.com/gpu.compute.major": "7"}, "T4", 15109, False),
    ({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.memory": "81559"}, "H100", 81559, True),
])
def test_gpu_of_node(labels: dict, name: str, mib: int, bf16: bool) -> None:
    gpu = hardware.gpu_of_node(labels)
    assert (gpu.name, gpu.memory_mib, gpu.bf16) == (name, mib, bf16)


def test_a_node_without_gpu_labels_names_no_gpu() -> None:
    assert hardware.gpu_of_node({"node.kubernetes.io/instance-type": "m7i.large"}) is None


def test_capacity_alone_says_bf16_only_when_every_gpu_of_that_size_agrees() -> None:
    assert hardware.gpu_from_capacity(79.19).bf16 is True  # A100 80 GB or H100
    assert hardware.gpu_from_capacity(14.75).bf16 is False  # T4 / V100 16 GB
    assert hardware.gpu_from_capacity(31.75).bf16 is None  # V100 32 GB or RTX PRO 4500


# -- explain: the message's own total ---------------------------------------------------------------

def _oom(text: str):
    finding = explain_text(text).findings[0]
    assert finding.code == "training.cuda_oom"
    return finding


def _config(finding) -> dict:
    check_snippet("generic/training.cuda_oom.json.j2", finding.fix.snippet)
    return json.loads(finding.fix.snippet)


def test_h100_is_pointed_to_h200_or_b200_never_80_gb() -> None:
    finding = _oom(H100_OOM)
    assert "H200 (p5e / p5en)" in finding.detail and "B200" in finding.detail
    assert "80 GiB" not in finding.detail and "p4de" not in finding.detail
    config = _config(finding)
    assert config["bf16"] == {"enabled": True} and "fp16" not in config


def test_a100_40_gb_is_pointed_to_80_gb() -> None:
    finding = _oom(A100_40_OOM)
    assert "80 GiB A100 or H100 (p4de / p5)" in finding.detail
    assert _config(finding)["bf16"]["enabled"] is True


def test_t4_gets_fp16_with_loss_scaling_and_a_24_gb_step() -> None:
    finding = _oom(T4_OOM)
    assert "22 GiB A10G or L4 (g5 / g6)" in finding.detail
    config = _config(finding)
    assert "bf16" not in config and config["fp16"]["enabled"] and config["fp16"]["loss_scale"] == 0
    assert "has no bf16" in config["_comment"]


def test_ambiguous_size_gets_fp16_and_says_when_bf16_is_right() -> None:
    config = _config(_oom(V100_32_OOM))
    assert "bf16" not in config and "use bf16 instead" in config["_comment"]


def test_h200_is_pointed_to_blackwell() -> None:
    detail = _oom(H200_OOM).detail
    assert "179 GiB B200 (p6-b200)" in detail and "141 GiB" not in detail


def test_oom_without_figures_names_no_size() -> None:
    finding = _oom("RuntimeError: CUDA error: out of memory")
    assert "GiB" not in finding.detail and "p4de" not in finding.detail
    assert "fp16" in _config(finding)


def test_the_top_of_the_range_says_shard() -> None:
    line = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 9.00 GiB. GPU 0 has a total capacity of "
            "265.20 GiB of which 2.00 GiB is free. Including non-PyTorch memory, this process has 263.00 GiB memory in use.")
    detail = _oom(line).detail
    assert "no AWS GPU has more memory" in detail and "shard" in detail


# -- live: the node's labels ------------------------------------------------------------------------

def _facts(labels: dict, log: str = H100_OOM) -> Facts:
    pod = PodFacts(pod={"metadata": {"name": "train-0", "namespace": "ml"},
                        "spec": {"nodeName": "n1", "containers": [{"name": "trainer"}]}, "status": {"phase": "Failed"}},
                   logs={("trainer", False): log})
    return Facts(target=Target(kind="pod", name="train-0", namespace="ml"), cluster="test", pods=[pod],
                 nodes={"n1": {"metadata": {"name": "n1", "labels": labels}}})


def test_live_h100_node_names_its_gpu_and_the_next_size_up() -> None:
    labels = {"node.kubernetes.io/instance-type": "p5.48xlarge", "karpenter.k8s.aws/instance-gpu-name": "h100",
              "karpenter.k8s.aws/instance-gpu-memory": "81920"}
    finding = next(training.analyze_oom(_facts(labels)))
    assert "H100 80 GiB on p5.48xlarge" in finding.title
    assert "H200 (p5e / p5en)" in finding.detail and "p4de" not in finding.detail
    assert "H200" in finding.fix.summary
    assert json.loads(finding.fix.snippet)["bf16"]["enabled"] is True
    assert any("instance-gpu-memory" in e.text for e in finding.evidence)


def test_live_t4_node_gets_fp16_even_when_its_total_looks_like_other_gpus() -> None:
    finding = next(training.analyze_oom(_facts({"node.kubernetes.io/instance-type": "g4dn.12xlarge"}, log=T4_OOM)))
    config = json.loads(finding.fix.snippet)
    assert "bf16" not in config and config["fp16"]["enabled"]
    assert "T4" in finding.title and "no bf16" in finding.detail


def test_live_gpu_feature_discovery_labels_when_karpenter_has_none() -> None:
    labels = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.memory": "40960"}
    finding = next(training.analyze_oom(_facts(labels, log=A100_40_OOM)))
    assert "A100 40 GiB" in finding.title and "80 GiB A100 or H100" in finding.detail


def test_live_unknown_node_uses_the_message_never_a_default() -> None:
    finding = next(training.analyze_oom(_facts({})))
    assert "79.19 GiB GPU" in finding.title
    assert "40" not in finding.fix.summary


def test_live_fix_template_renders_without_a_gpu() -> None:
    fix = render_fix("cuda_oom.json.j2")
    assert json.loads(fix.snippet)["fp16"]["enabled"] and fix.summary
