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
    # instance type -> memory capacity (bytes) a registered node of that type reported (discovered_memory)
    discovered_memory: dict[str, float] = field(default_factory=dict)
    # EC2NodeClass spec.networkInterfaces (v1.11+); None: the field is not set
    network_interfaces: tuple[dict, ...] | None = None

    @property
    def efa_only_interfaces(self) -> int | None:
        """EFA capacity the NodeClass sets: its efa-only interfaces, whatever the type supports; None: the type's
        own MaximumEfaInterfaces counts (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go
        efas(): "If the network interface field is specified on the NodeClass, this overrides the EFAs that the
        instance type supports"; since v1.11.0)."""
        if self.network_interfaces is None or not self.at_least((1, 11)):
            return None
        return sum(1 for n in self.network_interfaces if n.get("interfaceType") == "efa-only")

    @property
    def efa_only_on_default_card(self) -> int:
        """types.go ENILimitedPods: efa-only interfaces on network card 0 take an ENI from pod networking."""
        if self.network_interfaces is None or not self.at_least((1, 11)):
            return 0
        return sum(1 for n in self.network_interfaces
                   if n.get("interfaceType") == "efa-only" and int(n.get("networkCardIndex") or 0) == 0)

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


def _memory_bytes(value) -> float | None:
    match = _MEMORY.match(str(value or "").strip())
    if not match:
        return None
    return float(match.group(1)) * _MEMORY_SUFFIX[match.group(2)]


_MEMORY = linear.compile(r"^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|k|M|G|T|)$")
_MEMORY_SUFFIX = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
REGISTERED = "karpenter.sh/registered"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
NODECLASS_LABEL = "karpenter.k8s.aws/ec2nodeclass"


def discovered_memory(nodes, *, nodeclass_name: str, nodeclass: dict | None, nodeclaims: dict[str, dict],
                      controller_version: str | None = None) -> dict[str, float]:
    """instance type -> the smallest memory capacity a registered node of that type reported, for nodes
    launched from this EC2NodeClass with one of its current AMIs.

    aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/instancetype.go get(): a type's
    Capacity[memory] is taken from discoveredCapacityCache when it holds the type (key: instance type and the
    NodeClass's AMIs), so the VM overhead estimate (memory(), vmMemoryOverheadPercent) counts only for types
    no node has shown yet. UpdateInstanceTypeCapacityFromNode fills it from node.status.capacity.memory, the
    lowest seen, when the NodeClaim's image is one of the NodeClass's AMIs;
    pkg/controllers/providers/instancetype/capacity/controller.go does so once the node carries
    karpenter.sh/registered=true. Since v1.1.0 (pkg/cache/cache.go DiscoveredCapacityCacheTTL: 60 days)."""
    version = version_tuple(controller_version)
    if version is not None and version < (1, 1):
        return {}
    ami_ids = {a.get("id") for a in ((nodeclass or {}).get("status") or {}).get("amis") or [] if a.get("id")}
    claims = {((c.get("status") or {}).get("nodeName")): c for c in (nodeclaims or {}).values() if c}
    out: dict[str, float] = {}
    for node in nodes:
        meta = (node or {}).get("metadata") or {}
        labels = meta.get("labels") or {}
        type_name = labels.get(INSTANCE_TYPE)
        if not type_name or labels.get(REGISTERED) != "true":
            continue
        claim = claims.get(meta.get("name"))
        owner = labels.get(NODECLASS_LABEL) or (((claim or {}).get("spec") or {}).get("nodeClassRef") or {}).get("name")
        if owner != nodeclass_name:
            continue
        image = ((claim or {}).get("status") or {}).get("imageID")
        if image and ami_ids and image not in ami_ids:
            continue  # launched from an AMI the NodeClass no longer resolves: another cache key
        memory = _memory_bytes((((node or {}).get("status") or {}).get("capacity") or {}).get("memory"))
        if memory:
            out[type_name] = min(memory, out.get(type_name, memory))
    return out


def node_config(*, nodepool: dict | None, nodeclass: dict | None, controller_version: str | None = None,
                vm_overhead: str | None = None, discovered: dict[str, float] | None = None) -> NodeConfig:
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
        discovered_memory=dict(discovered or {}),
        network_interfaces=(tuple(n for n in spec["networkInterfaces"] if isinstance(n, dict))
                            if isinstance(spec.get("networkInterfaces"), list) else None),
    )
