"""GPU facts for advice: which GPU a node has, whether it computes in bf16, and which bigger GPUs exist.

Playbooks may not import the bot's instance catalogue, so the few facts advice needs live here, each
from its upstream source (tests check them against bot/gateway/data/instance_types.json):

- per-GPU memory and GPU name by instance family: EC2 DescribeInstanceTypes ``GpuInfo.Gpus[].Name`` and
  ``MemoryInfo.SizeInMiB`` (AWS "Accelerated computing instances" specifications; p3 from the same page,
  it is absent from the generated catalogue);
- bf16: CUDA compute capability 8.0 and newer (Ampere, Ada, Hopper, Blackwell) has bf16 tensor cores;
  Volta (7.0) and Turing (7.5) do not (NVIDIA CUDA C++ Programming Guide, "Compute Capabilities").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

GIB_MIB = 1024

# EC2 GpuInfo Name -> CUDA compute capability major version.
COMPUTE_MAJOR: dict[str, int] = {
    "K80": 3, "M60": 5, "T4": 7, "T4g": 7, "V100": 7,
    "A100": 8, "A10G": 8, "L4": 8, "L40S": 8,
    "H100": 9, "H200": 9,
    "B200": 10, "B300": 10, "RTX PRO 4500": 12, "RTX PRO Server 6000": 12,
}

# Instance family -> (EC2 GPU name, MiB per GPU), as DescribeInstanceTypes reports them.
FAMILIES: dict[str, tuple[str, int]] = {
    "p2": ("K80", 12288), "g3": ("M60", 8192), "p3": ("V100", 16384), "p3dn": ("V100", 32768),
    "g4dn": ("T4", 16384), "g5g": ("T4g", 16384), "g5": ("A10G", 22888), "g6": ("L4", 22888),
    "gr6": ("L4", 22888), "g6e": ("L40S", 45776), "g7": ("RTX PRO 4500", 32768),
    "g7e": ("RTX PRO Server 6000", 98304), "p4d": ("A100", 40960), "p4de": ("A100", 81920),
    "p5": ("H100", 81920), "p5e": ("H200", 144384), "p5en": ("H200", 144384),
    "p6-b200": ("B200", 183359), "p6-b300": ("B300", 275040),
}

# Where to go for more memory per GPU, smallest first: the training-class families of each size.
# Fractional GPUs (g6f, gr6f) and graphics types are not places to move a training job to.
LADDER: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (22888, "A10G or L4", ("g5", "g6")),
    (45776, "L40S", ("g6e",)),
    (81920, "A100 or H100", ("p4de", "p5")),
    (144384, "H200", ("p5e", "p5en")),
    (183359, "B200", ("p6-b200",)),
    (275040, "B300", ("p6-b300",)),
)

# A step up must add at least a quarter more memory per GPU: less rarely rescues an OOM, and it keeps
# the GPU a job already has (80 GB A100 vs H100, 40 GB A100 vs 48 GB L40S) out of the suggestions.
STEP = 1.25
# CUDA reports a little less than the nominal size ("79.19 GiB" for an 80 GB H100, "14.56 GiB" for a
# 16 GB T4 with ECC on): a nominal size within this fraction above the reported total is the same GPU.
REPORTED_SLACK = 0.15


@dataclass(frozen=True)
class Gpu:
    """The GPU a job runs on, as far as it is known (name None: only the memory is)."""

    name: str | None
    memory_mib: int
    instance_type: str | None = None
    bf16: bool | None = None  # None: not known
    by_size: bool = False  # name guessed from the memory CUDA reported, not read from the node

    @property
    def memory_gib(self) -> float:
        return self.memory_mib / GIB_MIB

    @property
    def label(self) -> str:
        if self.by_size:
            guess = f" (by its size: {self.name})" if self.name else ""
            return f"{self.memory_gib:.2f} GiB GPU{guess}"
        what = f"{self.name} {self.memory_gib:.0f} GiB"
        return f"{what} on {self.instance_type}" if self.instance_type else what


@dataclass(frozen=True)
class Step:
    memory_mib: int
    gpus: str
    families: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{self.memory_mib / GIB_MIB:.0f} GiB {self.gpus} ({' / '.join(self.families)})"


def family_of(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


def bf16_of(name: str | None) -> bool | None:
    major = COMPUTE_MAJOR.get(_canonical(name or ""))
    return None if major is None else major >= 8


def _canonical(name: str) -> str:
    """An EC2 GPU name from any spelling: Karpenter's kebab case ("rtx-pro-server-6000") or EC2's."""
    wanted = name.lower().replace("-", " ").strip()
    return next((known for known in COMPUTE_MAJOR if known.lower() == wanted), name)


# NVIDIA/k8s-device-plugin internal/lm/resource.go: GPU feature discovery labels nvidia.com/gpu.product
# with the NVML name, spaces replaced by dashes ("NVIDIA-H100-80GB-HBM3", "Tesla-T4",
# "NVIDIA-A100-SXM4-40GB"), nvidia.com/gpu.memory in MiB and nvidia.com/gpu.compute.major.
_PRODUCT_GPU = re.compile(r"(?<![A-Z0-9])(A100|A10G|H100|H200|B200|B300|L40S|L4|T4G|T4|V100|K80|M60)(?![A-Z0-9])")


def gpu_of_node(labels: dict[str, str]) -> Gpu | None:
    """The node's GPU from its labels: instance type (EC2 facts), Karpenter / EKS Auto Mode GPU labels,
    then GPU feature discovery."""
    itype = labels.get("node.kubernetes.io/instance-type")
    known = FAMILIES.get(family_of(itype)) if itype else None
    if known is not None:
        return Gpu(known[0], known[1], itype, bf16_of(known[0]))
    for prefix in ("karpenter.k8s.aws", "eks.amazonaws.com"):
        name, memory = labels.get(f"{prefix}/instance-gpu-name"), labels.get(f"{prefix}/instance-gpu-memory")
        if name and memory and memory.isdigit() and int(memory) > 0:
            canonical = _canonical(name)
            return Gpu(canonical, int(memory), itype, bf16_of(canonical))
    product = labels.get("nvidia.com/gpu.product", "")
    memory = labels.get("nvidia.com/gpu.memory", "")
    if product and memory.isdigit():
        found = _PRODUCT_GPU.search(product.upper())
        name = _canonical(found.group(1)) if found else product
        major = labels.get("nvidia.com/gpu.compute.major", "")
        bf16 = int(major) >= 8 if major.isdigit() else bf16_of(name)
        return Gpu(name, int(memory), itype, bf16)
    return None


def gpu_from_capacity(total_gib: float) -> Gpu:
    """What the OOM message's "total capacity" says about the GPU when no node is known: its memory,
    and bf16 when every AWS GPU of that size agrees (80 GB: A100 and H100 both have it; 32 GB: V100
    has not, RTX PRO 4500 has)."""
    total_mib = total_gib * GIB_MIB
    sizes = [(name, mib) for name, mib in set(FAMILIES.values()) if total_mib <= mib <= total_mib * (1 + REPORTED_SLACK)]
    names = sorted({name for name, _ in sizes})
    verdicts = {bf16_of(name) for name in names}
    bf16 = verdicts.pop() if len(verdicts) == 1 else None
    return Gpu(" or ".join(names) if names else None, round(total_mib), None, bf16, by_size=True)


def bigger_than(gpu: Gpu, *, limit: int = 2) -> list[Step]:
    """The next sizes up the ladder that add real memory per GPU; empty at the top."""
    floor = gpu.memory_mib * STEP
    return [Step(mib, name, families) for mib, name, families in LADDER if mib >= floor][:limit]


def advice(gpu: Gpu | None) -> dict:
    """Template variables for an OOM fix: the GPU, bf16, and where more memory per GPU is."""
    if gpu is None:
        return {"gpu_label": "", "gpu_memory_gib": None, "bf16": None, "bigger": []}
    return {"gpu_label": gpu.label, "gpu_memory_gib": round(gpu.memory_gib, 1), "bf16": gpu.bf16,
            "bigger": [step.text for step in bigger_than(gpu)]}
