"""What an EC2 instance type is, for a diagnosis, and the embedded catalogue of GPU and accelerated types.

The embedded catalogue (data/instance_types.json, written by scripts/gen_instance_catalogue.py from the
DescribeInstanceTypes data moto bundles) answers when EC2 cannot be asked. It holds the same fields as
a DescribeInstanceTypes answer, so one parser reads both.
"""
from __future__ import annotations

import fnmatch
import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Iterable

from playbooks.karpenter import labels as lbl

# aws/karpenter-provider-aws pkg/apis/v1/labels.go: AWSToKubeArchitectures
_KUBE_ARCH = {"x86_64": "amd64", "arm64": "arm64"}


_kabob = lbl.kebab_value  # aws/karpenter-provider-aws pkg/providers/instancetype/types.go: lowerKabobCase


@dataclass(frozen=True)
class InstanceTypeInfo:
    name: str
    vcpus: int
    memory_mib: int
    architectures: tuple[str, ...]
    gpu_count: int
    gpu_name: str | None  # as EC2 spells it: "A100", "H100", "A10G"
    gpu_manufacturer: str | None
    gpu_memory_mib: int | None  # per GPU
    efa_supported: bool
    max_efa_interfaces: int
    # AWS Neuron devices (Inferentia, Trainium): the aws.amazon.com/neuron resource, and cores
    # (aws.amazon.com/neuroncore) = devices x cores per device
    neuron_count: int = 0
    neuron_core_count: int = 0
    # What Karpenter's instance-accelerator-* labels say: the Neuron device, else a lone inference
    # accelerator (Qualcomm AI100 on dl2q)
    accelerator_name: str | None = None
    accelerator_manufacturer: str | None = None
    accelerator_count: int = 0
    max_network_interfaces: int = 0  # over every network card
    # ENIs on the default network card: the only ones the VPC CNI uses for pod IPs
    default_card_network_interfaces: int = 0
    ipv4_per_interface: int = 0
    usage_classes: tuple[str, ...] = ()  # "on-demand", "spot", "capacity-block"
    # InstanceStorageInfo.TotalSizeInGB (decimal GB): ephemeral storage under instanceStorePolicy RAID0;
    # None when the answer does not say (no instance store, or a catalogue that left it out)
    instance_storage_gb: int | None = None

    @property
    def family(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def size(self) -> str:
        return self.name.split(".", 1)[1] if "." in self.name else ""

    @property
    def category(self) -> str:
        """karpenter.k8s.aws/instance-category: "trn" for trn1, "inf" for inf2, "p" for p5 ("" when
        Karpenter's pattern does not match the name and it sets no label)."""
        return lbl.instance_category(self.name) or ""

    @property
    def generation(self) -> str:
        return lbl.instance_generation(self.name) or ""

    @property
    def max_pods(self) -> int:
        """Pods the VPC CNI can give IPs to, which Karpenter uses as ``pods`` capacity by default.

        aws/karpenter-provider-aws pkg/providers/instancetype/types.go ENILimitedPods: ENIs of the
        default network card (less reserved ENIs, 0 by default) x (IPv4 addresses per ENI - 1) + 2.
        """
        if self.default_card_network_interfaces <= 0 or self.ipv4_per_interface <= 0:
            return 0
        return self.default_card_network_interfaces * (self.ipv4_per_interface - 1) + 2

    def karpenter_labels(self, prefix: str = "karpenter.k8s.aws") -> dict[str, str]:
        """Labels Karpenter would put on a node of this type (``eks.amazonaws.com`` on Auto Mode).

        aws/karpenter-provider-aws pkg/providers/instancetype/types.go computeRequirements.
        """
        arch = _KUBE_ARCH.get(self.architectures[0] if self.architectures else "", "")
        labels = {
            "node.kubernetes.io/instance-type": self.name,
            "kubernetes.io/arch": arch,
            f"{prefix}/instance-family": self.family,
            f"{prefix}/instance-size": self.size,
            f"{prefix}/instance-cpu": str(self.vcpus),
            f"{prefix}/instance-memory": str(self.memory_mib),
        }
        if self.category:  # set together, only when the name matches instanceTypeScheme
            labels[f"{prefix}/instance-category"] = self.category
            labels[f"{prefix}/instance-generation"] = self.generation
        if self.gpu_name:  # upstream labels any type with one kind of GPU, even a fractional one (g6f: count 0)
            labels[f"{prefix}/instance-gpu-count"] = str(self.gpu_count)
            labels[f"{prefix}/instance-gpu-name"] = _kabob(self.gpu_name or "")
            labels[f"{prefix}/instance-gpu-manufacturer"] = _kabob(self.gpu_manufacturer or "")
            labels[f"{prefix}/instance-gpu-memory"] = str(self.gpu_memory_mib or 0)
        if self.accelerator_name:
            labels[f"{prefix}/instance-accelerator-name"] = _kabob(self.accelerator_name)
            labels[f"{prefix}/instance-accelerator-manufacturer"] = _kabob(self.accelerator_manufacturer or "")
            labels[f"{prefix}/instance-accelerator-count"] = str(self.accelerator_count)
        return labels


def parse_instance_type(raw: dict) -> InstanceTypeInfo:
    """One DescribeInstanceTypes entry (from EC2 or the embedded catalogue) as an InstanceTypeInfo."""
    gpus = (raw.get("GpuInfo") or {}).get("Gpus") or []
    gpu = gpus[0] if gpus else {}
    neurons = (raw.get("NeuronInfo") or {}).get("NeuronDevices") or []
    inference = (raw.get("InferenceAcceleratorInfo") or {}).get("Accelerators") or []
    net = raw.get("NetworkInfo") or {}
    cards = net.get("NetworkCards") or []
    default_card = next((c for c in cards if c.get("NetworkCardIndex", 0) == net.get("DefaultNetworkCardIndex", 0)), None)
    # aws/karpenter-provider-aws pkg/providers/instancetype/types.go: Neuron labels name the device with
    # manufacturer "aws"; InferenceAcceleratorInfo labels only when there is one and no NeuronInfo.
    if len(neurons) == 1:
        accelerator = (neurons[0].get("Name"), "aws", int(neurons[0].get("Count", 0)))
    elif len(inference) == 1 and not neurons:
        accelerator = (inference[0].get("Name"), inference[0].get("Manufacturer"), int(inference[0].get("Count", 0)))
    else:
        accelerator = (None, None, 0)
    return InstanceTypeInfo(
        name=raw["InstanceType"],
        vcpus=int((raw.get("VCpuInfo") or {}).get("DefaultVCpus", 0)),
        memory_mib=int((raw.get("MemoryInfo") or {}).get("SizeInMiB", 0)),
        architectures=tuple((raw.get("ProcessorInfo") or {}).get("SupportedArchitectures") or ()),
        gpu_count=sum(int(g.get("Count", 0)) for g in gpus),
        gpu_name=gpu.get("Name"),
        gpu_manufacturer=gpu.get("Manufacturer"),
        gpu_memory_mib=(gpu.get("MemoryInfo") or {}).get("SizeInMiB"),
        efa_supported=bool(net.get("EfaSupported")),
        max_efa_interfaces=int((net.get("EfaInfo") or {}).get("MaximumEfaInterfaces", 0)),
        neuron_count=sum(int(d.get("Count", 0)) for d in neurons),
        # awsNeuronCores: the first device's cores per device x its count
        neuron_core_count=(int(neurons[0].get("Count", 0)) * int((neurons[0].get("CoreInfo") or {}).get("Count", 0))
                           if neurons else 0),
        accelerator_name=accelerator[0],
        accelerator_manufacturer=accelerator[1],
        accelerator_count=accelerator[2],
        max_network_interfaces=int(net.get("MaximumNetworkInterfaces", 0)),
        # Without per-card data (older answers) every ENI is on the one card.
        default_card_network_interfaces=int((default_card or net).get("MaximumNetworkInterfaces", 0)),
        ipv4_per_interface=int(net.get("Ipv4AddressesPerInterface", 0)),
        usage_classes=tuple(raw.get("SupportedUsageClasses") or ()),
        instance_storage_gb=(raw.get("InstanceStorageInfo") or {}).get("TotalSizeInGB"),
    )


@dataclass(frozen=True)
class EmbeddedCatalogue:
    """GPU and accelerated instance types as of the data's date; CPU-only types are not in it."""

    types: dict[str, InstanceTypeInfo]
    moto_version: str
    generated: str
    # family -> why it is not in the catalogue (its numbers are not guessed)
    missing: dict[str, str]

    @property
    def source(self) -> str:
        return f"embedded catalogue (moto {self.moto_version} data, {self.generated})"

    def matching(self, patterns: Iterable[str]) -> dict[str, InstanceTypeInfo]:
        """Types matching EC2 instance-type filter values, where ``*`` and ``?`` are wildcards."""
        pats = list(patterns)
        return {name: info for name, info in self.types.items() if any(fnmatch.fnmatchcase(name, p) for p in pats)}

    def instance_types(self, names: Iterable[str]) -> dict[str, InstanceTypeInfo]:
        return {n: self.types[n] for n in sorted(set(names)) if n in self.types}


@functools.cache
def embedded_catalogue() -> EmbeddedCatalogue:
    text = (resources.files("bot.gateway") / "data" / "instance_types.json").read_text()
    data = json.loads(text)
    return EmbeddedCatalogue(
        types={name: parse_instance_type(raw) for name, raw in data["instance_types"].items()},
        moto_version=data["moto_version"],
        generated=data["generated"],
        missing=dict(data.get("missing") or {}),
    )
