"""Resource arithmetic as the schedulers do it: a pod's effective requests (kube-scheduler), an instance
type's allocatable after Karpenter's overhead estimate (aws/karpenter-provider-aws), and the daemonset
overhead Karpenter adds to every new node of a NodePool."""
from __future__ import annotations

import math
from dataclasses import dataclass

from playbooks import linear
from playbooks.karpenter import labels as lbl
from playbooks.karpenter.requirements import nodepool_requirements, pod_terms

CPU, MEMORY, PODS = "cpu", "memory", "pods"
GPU, AMD_GPU, EFA, NEURON = "nvidia.com/gpu", "amd.com/gpu", "vpc.amazonaws.com/efa", "aws.amazon.com/neuron"
ACCELERATORS = (GPU, AMD_GPU, NEURON, "aws.amazon.com/neuroncore", "habana.ai/gaudi")
MIB = 1024 * 1024

# aws/karpenter-provider-aws pkg/operator/options: --vm-memory-overhead-percent defaults to 0.075
VM_MEMORY_OVERHEAD = 0.075
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


def max_pods(info) -> int:
    """The ENI-limited max pods when the instance-type facts carry it, else Karpenter's fallback of 110."""
    return int(getattr(info, "max_pods", None) or DEFAULT_MAX_PODS)


def allocatable(info, *, vm_overhead: float = VM_MEMORY_OVERHEAD) -> dict[str, float]:
    """Allocatable as Karpenter estimates it before launch (aws/karpenter-provider-aws pkg/providers/
    instancetype/types.go): capacity minus kube-reserved (cpu by ranges; memory 11 MiB per pod + 255 MiB)
    minus the 100Mi eviction threshold, memory first reduced by the VM overhead."""
    pods = max_pods(info)
    mem_mib = int(info.memory_mib)
    if tuple(getattr(info, "architectures", ()) or ())[:1] == ("arm64",):
        mem_mib -= 64  # Graviton reserves 64 MiB of CMA memory (types.go memory())
    mem_mib -= math.ceil(mem_mib * vm_overhead)
    out = {
        CPU: info.vcpus - _kube_reserved_cpu(info.vcpus),
        MEMORY: (mem_mib - (11 * pods + 255) - 100) * MIB,
        PODS: float(pods),
    }
    return {**out, **_devices(info)}


def _devices(info) -> dict[str, float]:
    """Extended resources by manufacturer (types.go nvidiaGPUs, amdGPUs, habanaGaudis, awsNeuronDevices, efas)."""
    out = {}
    if info.gpu_count:
        manufacturer = (getattr(info, "gpu_manufacturer", None) or "NVIDIA").upper()
        out[{"AMD": AMD_GPU, "HABANA": "habana.ai/gaudi"}.get(manufacturer, GPU)] = float(info.gpu_count)
    if getattr(info, "max_efa_interfaces", 0):
        out[EFA] = float(info.max_efa_interfaces)
    if getattr(info, "neuron_count", 0):
        out[NEURON] = float(info.neuron_count)
    return out


def capacity(info) -> dict[str, float]:
    """Capacity (before overhead): what NodePool limits count (scheduler.go filterByRemainingResources)."""
    out = {CPU: float(info.vcpus), MEMORY: float(info.memory_mib) * MIB, PODS: float(max_pods(info)), "nodes": 1.0}
    return {**out, **_devices(info)}


def shortfall(requests: dict[str, float], available: dict[str, float]) -> list[str]:
    """Resources the request does not fit in, cpu and memory first."""
    order = [CPU, MEMORY, PODS, GPU, EFA, NEURON]
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


def daemonset_overhead(daemonsets: list[dict], nodepool: dict, *, auto_mode: bool) -> tuple[dict[str, float], list[str]]:
    """Requests of the DaemonSets whose pods would run on every new node of the NodePool, and their names
    (kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/scheduler.go isDaemonPodCompatible:
    tolerates the template taints, strict requirements compatible with the template)."""
    spec = ((nodepool.get("spec") or {}).get("template") or {}).get("spec") or {}
    taints = spec.get("taints") or []
    np_reqs = nodepool_requirements(nodepool)
    total: dict[str, float] = {}
    names = []
    for ds in daemonsets or []:
        template = ((ds.get("spec") or {}).get("template")) or {}
        pod = {"spec": template.get("spec") or {}}
        if untolerated(taints, pod["spec"].get("tolerations") or []):
            continue
        if not any(np_reqs.compatible(term, allow_undefined=lbl.well_known(auto_mode=auto_mode)) is None
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


def fit(requests: dict[str, float], overhead: dict[str, float], types: dict) -> Fit:
    total = _add(requests, overhead)
    missing = {name: shortfall(total, allocatable(info)) for name, info in types.items()}
    return Fit({n: types[n] for n, m in missing.items() if not m}, {n: m for n, m in missing.items() if m})


def show(resource: str, value: float) -> str:
    """A quantity as a person would write it."""
    if resource == MEMORY or resource.endswith("storage"):
        return f"{value / 2**30:.1f}Gi" if value >= 2**30 else f"{value / MIB:.0f}Mi"
    if resource == CPU:
        return f"{value:g}" if value >= 1 and value == int(value) else f"{round(value * 1000)}m"
    return f"{value:g}"


def show_all(values: dict[str, float]) -> str:
    return ", ".join(f"{k}={show(k, v)}" for k, v in sorted(values.items()))
