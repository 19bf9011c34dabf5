"""What the EC2NodeClass and the controller's settings change in Karpenter's estimate of a new node.

aws/karpenter-provider-aws pkg/providers/instancetype/types.go (v1.14.1) DefaultResolver.Resolve passes the
NodeClass's block device mappings, instanceStorePolicy, AMI family and ``kubelet`` block (maxPods,
podsPerCore, kubeReserved, systemReserved, evictionHard, evictionSoft) to NewInstanceType; memory() takes
off ``VM_MEMORY_OVERHEAD_PERCENT`` (pkg/operator/options, default 0.075), a controller setting. Before v1
(v1beta1) the ``kubelet`` block sat on the NodePool template, where playbooks/karpenter/versions.py keeps it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from playbooks import linear

VM_MEMORY_OVERHEAD = 0.075  # aws/karpenter-provider-aws pkg/operator/options/options.go --vm-memory-overhead-percent
GI = 2**30

# pkg/providers/amifamily/{al2,al2023,bottlerocket,windows,custom}.go EphemeralBlockDevice and
# DefaultBlockDeviceMappings (resolver.go DefaultEBS: 20Gi); GetAMIFamily falls back to AL2.
_EPHEMERAL_DEVICE = {"AL2": "/dev/xvda", "AL2023": "/dev/xvda", "Bottlerocket": "/dev/xvdb", "Windows": "/dev/sda1"}
_DEFAULT_VOLUME = {"Windows": 50 * GI}
# resolver.go DefaultFeatureFlags (AL2, AL2023, Custom) against bottlerocket.go and windows.go FeatureFlags
_ENI_LIMITED_MEMORY = ("AL2", "AL2023", "Custom")  # UsesENILimitedMemoryOverhead
_PODS_PER_CORE = ("AL2", "AL2023", "Custom", "Windows")  # PodsPerCoreEnabled
_ENI_LIMITED_PODS = ("AL2", "AL2023", "Custom", "Bottlerocket")  # SupportsENILimitedPodDensity
_EVICTION_SOFT = ("AL2", "AL2023", "Custom", "Windows")  # EvictionSoftEnabled (counted before v1.9)

_VERSION = linear.compile(r"^v?(\d+)\.(\d+)")


def version_tuple(text: str | None) -> tuple[int, int] | None:
    """"1.14.1" / "v1.8.3" -> (1, 14); None when the tag says nothing (a digest, "latest")."""
    match = _VERSION.match(str(text or ""))
    return (int(match.group(1)), int(match.group(2))) if match else None


@dataclass(frozen=True)
class NodeConfig:
    ami_family: str = "AL2"
    block_device_mappings: tuple[dict, ...] = ()
    instance_store_policy: str | None = None
    max_pods: int | None = None
    pods_per_core: int | None = None
    kube_reserved: dict[str, str] = field(default_factory=dict)
    system_reserved: dict[str, str] = field(default_factory=dict)
    eviction_hard: dict[str, str] = field(default_factory=dict)
    eviction_soft: dict[str, str] = field(default_factory=dict)
    vm_overhead: float = VM_MEMORY_OVERHEAD
    version: tuple[int, int] | None = None  # the controller's release; None: not known (read as current)

    @property
    def ephemeral_device(self) -> str | None:
        return _EPHEMERAL_DEVICE.get(self.family_kind)

    @property
    def family_kind(self) -> str:
        return "Windows" if self.ami_family.startswith("Windows") else self.ami_family

    @property
    def default_volume(self) -> float:
        return _DEFAULT_VOLUME.get(self.family_kind, 20 * GI)

    @property
    def eni_limited_memory(self) -> bool:
        return self.family_kind in _ENI_LIMITED_MEMORY

    @property
    def pods_per_core_enabled(self) -> bool:
        return self.family_kind in _PODS_PER_CORE

    @property
    def eni_limited_pods(self) -> bool:
        return self.family_kind in _ENI_LIMITED_PODS

    @property
    def counts_eviction_soft(self) -> bool:
        # aws types.go evictionThreshold: v1.9 counts evictionHard only ("evictionSoft should not impact
        # allocatable"); v1.0-v1.8 took the larger of hard and soft where the AMI family enables soft eviction
        return self.family_kind in _EVICTION_SOFT and self.version is not None and self.version < (1, 9)

    def at_least(self, version: tuple[int, int]) -> bool:
        """Whether the controller is this release or newer; an unknown release is taken as current."""
        return self.version is None or self.version >= version


DEFAULT = NodeConfig()


def ami_family(nodeclass: dict | None) -> str:
    """spec.amiFamily, else the family of an ``alias`` selector term ("al2023@latest", v1), else Custom
    (pkg/apis/v1/ec2nodeclass.go AMIFamily()); AL2, GetAMIFamily's fallback, when the NodeClass is unknown."""
    spec = (nodeclass or {}).get("spec") or {}
    if spec.get("amiFamily"):
        return str(spec["amiFamily"])
    for term in spec.get("amiSelectorTerms") or []:
        alias = str((term or {}).get("alias") or "")
        if alias:
            family = alias.split("@", 1)[0].lower()
            return {"al2": "AL2", "al2023": "AL2023", "bottlerocket": "Bottlerocket",
                    "windows2019": "Windows2019", "windows2022": "Windows2022", "windows2025": "Windows2025"}.get(family, "AL2")
    return "Custom" if nodeclass else "AL2"


def _int(value) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _strings(value) -> dict[str, str]:
    return {str(k): str(v) for k, v in (value or {}).items()} if isinstance(value, dict) else {}


def _overhead_percent(text: str | None) -> float:
    try:
        value = float(text) if text not in (None, "") else VM_MEMORY_OVERHEAD
    except ValueError:
        return VM_MEMORY_OVERHEAD
    return value if 0 <= value < 1 else VM_MEMORY_OVERHEAD


def node_config(*, nodepool: dict | None, nodeclass: dict | None, controller_version: str | None = None,
                vm_overhead: str | None = None) -> NodeConfig:
    """The settings that shape a new node of this NodePool: its NodeClass's (v1) or its template's
    (v1beta1) ``kubelet`` block, storage and AMI family, and the controller's overhead and release."""
    spec = (nodeclass or {}).get("spec") or {}
    template = (((nodepool or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
    kubelet = spec.get("kubelet") or template.get("kubelet") or {}
    return NodeConfig(
        ami_family=ami_family(nodeclass),
        block_device_mappings=tuple(b for b in spec.get("blockDeviceMappings") or [] if isinstance(b, dict)),
        instance_store_policy=spec.get("instanceStorePolicy"),
        max_pods=_int(kubelet.get("maxPods")),
        pods_per_core=_int(kubelet.get("podsPerCore")),
        kube_reserved=_strings(kubelet.get("kubeReserved")),
        system_reserved=_strings(kubelet.get("systemReserved")),
        eviction_hard=_strings(kubelet.get("evictionHard")),
        eviction_soft=_strings(kubelet.get("evictionSoft")),
        vm_overhead=_overhead_percent(vm_overhead),
        version=version_tuple(controller_version),
    )
