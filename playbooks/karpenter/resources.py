"""Resource arithmetic as the schedulers do it: a pod's effective requests (kube-scheduler), an instance
type's allocatable after Karpenter's overhead estimate (aws/karpenter-provider-aws), and the daemonset
overhead Karpenter adds to every new node of a NodePool."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from playbooks import linear
from playbooks.karpenter import labels as lbl
from playbooks.karpenter.nodeconfig import DEFAULT, NodeConfig
from playbooks.karpenter.requirements import instance_requirements, nodepool_requirements, pod_terms

CPU, MEMORY, PODS, STORAGE = "cpu", "memory", "pods", "ephemeral-storage"
GPU, AMD_GPU, EFA, NEURON = "nvidia.com/gpu", "amd.com/gpu", "vpc.amazonaws.com/efa", "aws.amazon.com/neuron"
NEURONCORE = "aws.amazon.com/neuroncore"
ACCELERATORS = (GPU, AMD_GPU, NEURON, NEURONCORE, "habana.ai/gaudi")
MIB = 1024 * 1024
GI = 2**30

DEFAULT_MAX_PODS = 110  # aws/karpenter-provider-aws pkg/providers/instancetype/types.go pods(): the fallback

_SUFFIX = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_QUANTITY = linear.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|)$")


def quantity(value) -> float:
    """A Kubernetes quantity ("500m", "64Gi", "1.5", 2) as a number (cores, bytes, units)."""
    match = _QUANTITY.match(str(value).strip())
    if not match:
        raise ValueError(f"not a Kubernetes quantity: {value!r}")
    return float(match.group(1)) * _SUFFIX[match.group(2)]


def _container_requests(container: dict) -> dict[str, float]:
    res = container.get("resources") or {}
    # the API server defaults a request to its limit when only the limit is set
    merged = {**(res.get("limits") or {}), **(res.get("requests") or {})}
    out = {}
    for name, value in merged.items():
        try:
            out[name] = quantity(value)
        except ValueError:
            continue
    return out


def _add(a: dict, b: dict) -> dict:
    return {k: a.get(k, 0) + b.get(k, 0) for k in set(a) | set(b)}


def _max(a: dict, b: dict) -> dict:
    return {k: max(a.get(k, 0), b.get(k, 0)) for k in set(a) | set(b)}


def pod_requests(pod: dict) -> dict[str, float]:
    """kubernetes/kubernetes pkg/api/v1/resource/helpers.go PodRequests: the sum of the containers plus
    restartable init containers (sidecars run alongside), at least the largest init container step
    (each init container with the sidecars started before it), plus pod overhead; one pod slot."""
    spec = pod.get("spec") or {}
    total: dict[str, float] = {}
    for container in spec.get("containers") or []:
        total = _add(total, _container_requests(container))
    sidecars: dict[str, float] = {}
    init_peak: dict[str, float] = {}
    for container in spec.get("initContainers") or []:
        requests = _container_requests(container)
        if container.get("restartPolicy") == "Always":
            total = _add(total, requests)
            sidecars = _add(sidecars, requests)
            step = sidecars
        else:
            step = _add(requests, sidecars)
        init_peak = _max(init_peak, step)
    total = _max(total, init_peak)
    overhead = {k: quantity(v) for k, v in (spec.get("overhead") or {}).items()}
    total = _add(total, overhead)
    total[PODS] = total.get(PODS, 0) + 1
    return {k: v for k, v in total.items() if v}


def _kube_reserved_cpu(vcpus: int) -> float:
    # aws/karpenter-provider-aws pkg/providers/instancetype/types.go kubeReservedResources: 6% of the first
    # core, 1% of the second, 0.5% of the next two, 0.25% of the rest (in millicores, truncated)
    millis = vcpus * 1000
    reserved = 0
    for start, end, pct in ((0, 1000, 0.06), (1000, 2000, 0.01), (2000, 4000, 0.005), (4000, 1 << 31, 0.0025)):
        if millis >= start:
            reserved += int((min(millis, end) - start) * pct)
    return reserved / 1000


def max_pods(info, config: NodeConfig = DEFAULT) -> int:
    """aws types.go pods(): kubelet maxPods when set, else the ENI-limited count (AL2, AL2023, Bottlerocket,
    Custom; 110 when the facts lack ENI data), else 110 (Windows); then at most podsPerCore x vCPUs where the
    AMI family honours podsPerCore (not Bottlerocket)."""
    if config.max_pods is not None:
        count = config.max_pods
    elif config.eni_limited_pods:
        count = _eni_pods(info, config)
    else:
        count = DEFAULT_MAX_PODS
    if config.pods_per_core and config.pods_per_core > 0 and config.pods_per_core_enabled:
        count = min(config.pods_per_core * int(info.vcpus), count)
    return int(count)


def _eni_pods(info, config: NodeConfig = DEFAULT) -> int:
    """types.go ENILimitedPods: (ENIs of the default card - efa-only interfaces the NodeClass puts on card 0)
    x (IPv4 per ENI - 1) + 2; 110 when the facts lack ENI data."""
    enis = int(getattr(info, "default_card_network_interfaces", 0) or 0)
    ips = int(getattr(info, "ipv4_per_interface", 0) or 0)
    if config.efa_only_on_default_card and enis > 0 and ips > 0:
        usable = max(enis - config.efa_only_on_default_card, 0)
        return usable * (ips - 1) + 2 if usable else 0
    return int(getattr(info, "max_pods", None) or DEFAULT_MAX_PODS)


def _memory_mib(info, config: NodeConfig) -> int:
    """aws types.go memory(): Graviton's 64 MiB of CMA off, then the VM overhead (rounded up to a MiB). The
    estimate; capacity() prefers a registered node's own figure (nodeconfig.discovered_memory)."""
    mem_mib = int(info.memory_mib)
    if tuple(getattr(info, "architectures", ()) or ())[:1] == ("arm64",):
        mem_mib -= 64
    return mem_mib - math.ceil(mem_mib * config.vm_overhead)


def ephemeral_storage(info, config: NodeConfig = DEFAULT) -> float | None:
    """aws types.go ephemeralStorage(): with instanceStorePolicy RAID0 the instance store's total (decimal
    GB); else the blockDeviceMapping marked rootVolume, for a Custom AMI the last mapping, else the mapping
    of the family's ephemeral device (/dev/xvda, Bottlerocket /dev/xvdb, Windows /dev/sda1); else the
    family's default (20Gi, Windows 50Gi).

    A type without an instance store under RAID0 takes the root volume like any other: aws/karpenter-provider-aws
    v1.14.1 pkg/providers/instancetype/types.go ephemeralStorage uses InstanceStorageInfo.TotalSizeInGB only
    when EC2 states it and otherwise falls through. EC2 (and the embedded catalogue, which keeps
    InstanceStorageInfo) leaves it out exactly for types with no instance store (inf2, g5g, dl2q ...)."""
    if config.instance_store_policy == "RAID0":
        total_gb = getattr(info, "instance_storage_gb", None)
        if total_gb is not None:
            return float(total_gb) * 1e9
    mappings = config.block_device_mappings
    if mappings:
        root = next((b for b in mappings if b.get("rootVolume")), None)
        size = _volume_size(root)
        if size is not None:
            return size
        if config.ami_family == "Custom":
            size = _volume_size(mappings[-1])
            return size if size is not None else config.default_volume
        device = next((b for b in mappings if b.get("deviceName") == config.ephemeral_device), None)
        size = _volume_size(device)
        if size is not None:
            return size
    return config.default_volume


def _volume_size(mapping: dict | None) -> float | None:
    value = ((mapping or {}).get("ebs") or {}).get("volumeSize")
    try:
        return quantity(value) if value is not None else None
    except ValueError:
        return None


def _eviction_signal(capacity_value: float, signal: str) -> float:
    """aws types.go computeEvictionSignal: a percentage of capacity (100% disables it), else a quantity."""
    text = str(signal).strip()
    if text.endswith("%"):
        pct = float(text.rstrip("%"))
        return math.ceil(capacity_value / 100 * (0 if pct == 100 else pct))
    return quantity(text)


def _eviction(memory: float, storage: float | None, config: NodeConfig) -> dict[str, float]:
    """aws types.go evictionThreshold: 100Mi of memory and 10% of ephemeral storage unless evictionHard
    names memory.available / nodefs.available; before v1.9 the larger of hard and soft counted."""
    out = {MEMORY: 100.0 * MIB}
    if storage is not None:
        out[STORAGE] = float(math.ceil(storage / 100 * 10))
    signals = [config.eviction_hard] + ([config.eviction_soft] if config.counts_eviction_soft else [])
    override: dict[str, float] = {}
    for signal in signals:
        for key, resource, base in (("memory.available", MEMORY, memory), ("nodefs.available", STORAGE, storage)):
            if key in signal and base is not None:
                try:
                    value = _eviction_signal(base, signal[key])
                except ValueError:
                    continue
                override[resource] = max(override.get(resource, 0.0), value)
    return {**out, **override}


def _reserved(values: dict[str, str]) -> dict[str, float]:
    out = {}
    for name, value in values.items():
        try:
            out[name] = quantity(value)
        except ValueError:
            continue
    return out


def capacity(info, config: NodeConfig = DEFAULT) -> dict[str, float]:
    """Capacity as Karpenter computes it (aws types.go computeCapacity): memory already less the VM overhead,
    pods as kubelet will allow them. NodePool limits count this (scheduler.go filterByRemainingResources)."""
    # aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/instancetype.go get(): the memory a
    # registered node of this type reported replaces the estimate (discoveredCapacityCache, v1.1+)
    memory = config.discovered_memory.get(getattr(info, "name", ""))
    out = {CPU: float(info.vcpus), MEMORY: float(memory) if memory else float(_memory_mib(info, config)) * MIB,
           PODS: float(max_pods(info, config)), "nodes": 1.0}
    storage = ephemeral_storage(info, config)
    if storage is not None:
        out[STORAGE] = storage
    return {**out, **_devices(info, config)}


def allocatable(info, config: NodeConfig = DEFAULT) -> dict[str, float]:
    """Allocatable as Karpenter estimates it before launch: capacity less kube-reserved, system-reserved and
    the eviction threshold (aws/karpenter-provider-aws pkg/providers/instancetype/types.go NewInstanceType;
    kubernetes-sigs/karpenter pkg/cloudprovider/types.go Allocatable). Kube-reserved: cpu by ranges, memory
    11 MiB per pod + 255 MiB (pods ENI-limited on AL2 / AL2023 / Custom whatever maxPods says), 1Gi of
    ephemeral storage; the NodeClass's kubelet kubeReserved replaces each value it names."""
    cap = capacity(info, config)
    reserved_pods = _eni_pods(info, config) if config.eni_limited_memory else max_pods(info, config)
    kube = {CPU: _kube_reserved_cpu(info.vcpus), MEMORY: float(11 * reserved_pods + 255) * MIB, STORAGE: float(GI)}
    kube.update(_reserved(config.kube_reserved))
    system = _reserved(config.system_reserved)
    # types.go NewInstanceType computes the eviction threshold from memory()'s estimate, before get() swaps in
    # a discovered capacity
    eviction = _eviction(float(_memory_mib(info, config)) * MIB, cap.get(STORAGE), config)
    out = dict(cap)
    out.pop("nodes", None)
    for overhead in (kube, system, eviction):
        for name, value in overhead.items():
            if name in out:
                out[name] -= value
    if STORAGE not in cap:
        out.pop(STORAGE, None)
    return out


def _devices(info, config: NodeConfig = DEFAULT) -> dict[str, float]:
    """Extended resources by manufacturer (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go
    computeCapacity: nvidiaGPUs, amdGPUs, habanaGaudis, awsNeuronDevices, awsNeuronCores, efas). Neuron cores:
    the first Neuron device's count x its cores (InstanceTypeInfo.neuron_core_count, v1.1+). EFA: the
    EC2NodeClass's efa-only networkInterfaces when it sets the field, else MaximumEfaInterfaces."""
    out = {}
    if info.gpu_count:
        manufacturer = (getattr(info, "gpu_manufacturer", None) or "NVIDIA").upper()
        out[{"AMD": AMD_GPU, "HABANA": "habana.ai/gaudi"}.get(manufacturer, GPU)] = float(info.gpu_count)
    efa = config.efa_only_interfaces
    efa = getattr(info, "max_efa_interfaces", 0) if efa is None else efa
    if efa:
        out[EFA] = float(efa)
    if getattr(info, "neuron_count", 0):
        out[NEURON] = float(info.neuron_count)
    if getattr(info, "neuron_core_count", 0):
        out[NEURONCORE] = float(info.neuron_core_count)
    return out


def nodeclass_compatible(info, config: NodeConfig = DEFAULT) -> bool:
    """aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/compatibility/compatibility.go
    networkInterfaceCheck (FilterForNodeClass): with networkInterfaces set, a type needs as many network cards
    and ENIs per card as the interfaces name, and at least as many EFA interfaces as the efa-only ones. Only
    what the facts state is checked."""
    if config.network_interfaces is None or not config.at_least((1, 11)):
        return True
    efa_only = config.efa_only_interfaces or 0
    if efa_only and efa_only > int(getattr(info, "max_efa_interfaces", 0) or 0):
        return False
    return True


def shortfall(requests: dict[str, float], available: dict[str, float]) -> list[str]:
    """Resources the request does not fit in, cpu and memory first."""
    order = [CPU, MEMORY, PODS, GPU, EFA, NEURON, NEURONCORE]
    missing = [k for k, v in requests.items() if v > available.get(k, 0) + 1e-9]
    return sorted(missing, key=lambda k: (order.index(k) if k in order else len(order), k))


# -- daemonset overhead --------------------------------------------------------------------------------

def tolerates(taint: dict, tolerations: list[dict]) -> bool:
    """k8s.io/api core/v1 toleration.go ToleratesTaint, as kubernetes-sigs/karpenter pkg/scheduling/taints.go
    applies it: matching effect (empty tolerates all), key (empty with Exists tolerates all), value."""
    for tol in tolerations or []:
        if tol.get("effect") and tol["effect"] != taint.get("effect"):
            continue
        if tol.get("key") and tol["key"] != taint.get("key"):
            continue
        if not tol.get("key") and tol.get("operator") != "Exists":
            continue
        if tol.get("operator") == "Exists" or str(tol.get("value", "")) == str(taint.get("value", "")):
            return True
    return False


def untolerated(taints: list[dict], tolerations: list[dict]) -> list[dict]:
    """Taints that keep the pod off: NoSchedule and NoExecute (PreferNoSchedule is only a preference)."""
    return [t for t in taints or [] if t.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(t, tolerations)]


def daemonset_overhead(daemonsets: list[dict], nodepool: dict, *, auto_mode: bool, info=None,
                       prefix: str = lbl.OSS_PREFIX) -> tuple[dict[str, float], list[str]]:
    """Requests of the DaemonSets whose pods would run on a new node of the NodePool, and their names
    (kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/scheduler.go isDaemonPodCompatible:
    tolerates the template taints, strict requirements compatible with the template, each required term
    tried in turn). With ``info`` (v1.14+, buildDaemonOverheadGroups, kubernetes-sigs/karpenter#2975) a
    term must also intersect that instance type's requirements: a DaemonSet pinned to GPU types adds no
    overhead to the others. Before v1.14 (getDaemonOverhead) one overhead counted on every type."""
    spec = ((nodepool.get("spec") or {}).get("template") or {}).get("spec") or {}
    taints = spec.get("taints") or []
    np_reqs = nodepool_requirements(nodepool)
    type_reqs = instance_requirements(info, prefix=prefix) if info is not None else None
    total: dict[str, float] = {}
    names = []
    for ds in daemonsets or []:
        template = ((ds.get("spec") or {}).get("template")) or {}
        pod = {"spec": template.get("spec") or {}}
        if untolerated(taints, pod["spec"].get("tolerations") or []):
            continue
        if not any(np_reqs.compatible(term, allow_undefined=lbl.well_known(auto_mode=auto_mode)) is None
                   and (type_reqs is None or type_reqs.intersects(term) is None)
                   for term in pod_terms(pod)):
            continue
        requests = pod_requests(pod)
        requests.pop(PODS, None)
        total = _add(total, requests)
        total[PODS] = total.get(PODS, 0) + 1
        names.append((ds.get("metadata") or {}).get("name", "?"))
    return total, names


@dataclass(frozen=True)
class Fit:
    """The result of fitting a pod (plus daemonset overhead) into the allowed instance types."""

    fitting: dict  # instance type -> info
    missing: dict[str, list[str]]  # instance type -> resources that do not fit
    allocatable: dict = field(default_factory=dict)  # instance type -> its allocatable estimate


def fit(requests: dict[str, float], overhead: dict[str, float], types: dict, *, config: NodeConfig = DEFAULT,
        per_type: dict[str, dict[str, float]] | None = None) -> Fit:
    """``per_type``: the daemonset overhead of each instance type where it differs by type (v1.14+);
    ``overhead`` counts for the rest. A resource whose allocatable is not known (ephemeral storage with RAID0
    on an instance store the facts do not size) is not held against the type."""
    alloc = {name: allocatable(info, config) for name, info in types.items()}
    missing = {}
    for name in types:
        total = _add(requests, (per_type or {}).get(name, overhead))
        if STORAGE not in alloc[name]:
            total.pop(STORAGE, None)
        missing[name] = shortfall(total, alloc[name])
    return Fit({n: types[n] for n, m in missing.items() if not m}, {n: m for n, m in missing.items() if m}, alloc)


def show(resource: str, value: float) -> str:
    """A quantity as a person would write it."""
    if resource == MEMORY or resource.endswith("storage"):
        return f"{value / 2**30:.1f}Gi" if value >= 2**30 else f"{value / MIB:.0f}Mi"
    if resource == CPU:
        return f"{value:g}" if value >= 1 and value == int(value) else f"{round(value * 1000)}m"
    return f"{value:g}"


def show_all(values: dict[str, float]) -> str:
    return ", ".join(f"{k}={show(k, v)}" for k, v in sorted(values.items()))
