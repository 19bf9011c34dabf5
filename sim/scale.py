"""A synthetic large cluster (thousands of nodes, 100k pods) for load and pagination tests.

Generated objects share every sub-dict that does not vary per object (capacity, conditions,
container lists, label sets per job). That is safe because the store never mutates a stored
object: patches build new dicts along the changed path (copy on write).
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from typing import Iterator

from sim.cluster import Cluster

PODS_PER_JOB = 8
PODS_PER_NAMESPACE = 2000
MAX_NAMESPACES = 100
TIMESTAMP = "2025-12-01T00:00:00Z"
ZONES = ("ap-northeast-2a", "ap-northeast-2b", "ap-northeast-2c", "ap-northeast-2d")


@dataclass(frozen=True)
class _InstanceType:
    name: str
    cpu: str
    memory: str
    gpus: int


_GPU_TYPES = (
    _InstanceType("p4d.24xlarge", "96", "1152Gi", 8),
    _InstanceType("p5.48xlarge", "192", "2048Gi", 8),
    _InstanceType("g5.12xlarge", "48", "192Gi", 4),
)
_CPU_TYPES = (
    _InstanceType("m6i.16xlarge", "64", "256Gi", 0),
    _InstanceType("c6i.16xlarge", "64", "128Gi", 0),
)


def parse_scale(text: str) -> tuple[int, int]:
    """"nodes=5000,pods=100000" -> (5000, 100000)."""
    values: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",")):
        key, sep, raw = part.partition("=")
        key = key.strip()
        if not sep or key not in ("nodes", "pods"):
            raise ValueError(f"bad scale {text!r}: expected nodes=N,pods=M (e.g. nodes=5000,pods=100000)")
        try:
            values[key] = int(raw)
        except ValueError:
            raise ValueError(f"bad scale {text!r}: {key} must be an integer, got {raw.strip()!r}") from None
        if values[key] < 0:
            raise ValueError(f"bad scale {text!r}: {key} must not be negative")
    if set(values) != {"nodes", "pods"}:
        raise ValueError(f"bad scale {text!r}: give both nodes and pods, e.g. nodes=5000,pods=100000")
    return values["nodes"], values["pods"]


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _resources(itype: _InstanceType) -> dict:
    amounts = {"cpu": itype.cpu, "memory": itype.memory, "pods": "110", "ephemeral-storage": "200Gi"}
    if itype.gpus:
        amounts["nvidia.com/gpu"] = str(itype.gpus)
    return amounts


_READY_CONDITIONS = [
    {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
     "lastHeartbeatTime": TIMESTAMP, "lastTransitionTime": TIMESTAMP},
]
_CLAIM_CONDITIONS = [
    {"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": TIMESTAMP}
    for t in ("Launched", "Registered", "Initialized", "Ready")
]
# Every field the typed client requires (it validates on deserialisation), shared by all nodes.
_NODE_INFO = {
    "kubeletVersion": "v1.33.3-eks-sim", "kubeProxyVersion": "", "containerRuntimeVersion": "containerd://1.7.27",
    "osImage": "Amazon Linux 2023", "kernelVersion": "6.1.0", "architecture": "amd64",
    "operatingSystem": "linux", "bootID": "", "machineID": "", "systemUUID": "",
}


@dataclass(frozen=True)
class _NodePlan:
    name: str
    pool: str
    itype: _InstanceType
    zone: str
    ip: str


def _plan_nodes(*, nodes: int, rng: random.Random) -> list[_NodePlan]:
    gpu_count = (nodes + 1) // 2
    plans = []
    for index in range(nodes):
        gpu = index < gpu_count
        itype = rng.choice(_GPU_TYPES if gpu else _CPU_TYPES)
        ip = f"10.{(index >> 16) & 255}.{(index >> 8) & 255}.{index & 255}"
        pool = "scale-gpu" if gpu else "scale-cpu"
        plans.append(_NodePlan(f"scale-node-{index + 1:05d}", pool, itype, rng.choice(ZONES), ip))
    return plans


def _node_objects(plans: list[_NodePlan], rng: random.Random) -> Iterator[dict]:
    shared_labels: dict[tuple, dict] = {}
    shared_status: dict[str, dict] = {}
    for plan in plans:
        group = (plan.pool, plan.itype.name, plan.zone)
        if group not in shared_labels:
            shared_labels[group] = {
                "karpenter.sh/nodepool": plan.pool,
                "karpenter.sh/capacity-type": "on-demand",
                "node.kubernetes.io/instance-type": plan.itype.name,
                "topology.kubernetes.io/zone": plan.zone,
                "topology.kubernetes.io/region": "ap-northeast-2",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/os": "linux",
                **({"nvidia.com/gpu.present": "true"} if plan.itype.gpus else {}),
            }
        if plan.itype.name not in shared_status:
            amounts = _resources(plan.itype)
            shared_status[plan.itype.name] = {"capacity": amounts, "allocatable": amounts}
        labels = {**shared_labels[group], "kubernetes.io/hostname": plan.name}
        instance_id = f"i-{rng.getrandbits(68):017x}"
        provider_id = f"aws:///{plan.zone}/{instance_id}"
        claim_name = f"{plan.pool}-{plan.name[-5:]}"
        yield {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": plan.name, "uid": _uid(rng), "creationTimestamp": TIMESTAMP, "labels": labels},
            "spec": {"providerID": provider_id},
            "status": {**shared_status[plan.itype.name], "conditions": _READY_CONDITIONS, "nodeInfo": _NODE_INFO,
                       "addresses": [{"type": "InternalIP", "address": plan.ip}]},
        }
        yield {
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodeClaim",
            "metadata": {"name": claim_name, "uid": _uid(rng), "creationTimestamp": TIMESTAMP,
                         "labels": shared_labels[group]},
            "spec": {"nodeClassRef": _NODE_CLASS_REF, "requirements": []},
            "status": {"nodeName": plan.name, "providerID": provider_id, "conditions": _CLAIM_CONDITIONS,
                       **shared_status[plan.itype.name]},
        }



_NODE_CLASS_REF = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}


def _nodepool(name: str, types: tuple[_InstanceType, ...]) -> dict:
    requirements = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [t.name for t in types]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    ]
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name, "creationTimestamp": TIMESTAMP},
        "spec": {
            "template": {"spec": {"nodeClassRef": _NODE_CLASS_REF, "requirements": requirements}},
            "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m"},
            "limits": {"cpu": "100000", "nvidia.com/gpu": "50000" if types[0].gpus else "0"},
        },
        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
                                   "lastTransitionTime": TIMESTAMP}]},
    }


def _container(*, gpu: bool) -> list[dict]:
    limits = {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"} if gpu else {"cpu": "250m", "memory": "512Mi"}
    return [{"name": "trainer" if gpu else "worker", "image": "public.ecr.aws/sim/trainer:1.0",
             "resources": {"limits": limits, "requests": limits}}]


def _pod_templates() -> dict[bool, tuple[dict, dict]]:
    """(spec without nodeName, status without hostIP) for GPU and CPU pods."""
    templates = {}
    for gpu in (True, False):
        containers = _container(gpu=gpu)
        spec = {"containers": containers, "restartPolicy": "Never", "schedulerName": "default-scheduler",
                "serviceAccountName": "default", "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                                                                   "effect": "NoSchedule"}] if gpu else []}
        running = {"running": {"startedAt": TIMESTAMP}}
        status = {
            "phase": "Running",
            "qosClass": "Guaranteed",
            "startTime": TIMESTAMP,
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": TIMESTAMP}
                           for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
            "containerStatuses": [
                {"name": containers[0]["name"], "ready": True, "restartCount": 0, "started": True,
                 "image": containers[0]["image"], "imageID": "", "state": running}
            ],
        }
        templates[gpu] = (spec, status)
    return templates


def _placements(plans: list[_NodePlan], pods: int) -> Iterator[tuple[_NodePlan, bool]]:
    """GPU pods fill GPU nodes up to their GPU capacity; the rest are small CPU pods round-robin."""
    gpu_slots = [p for p in plans if p.itype.gpus for _ in range(p.itype.gpus)]
    cpu_nodes = [p for p in plans if not p.itype.gpus] or plans
    gpu_pods = min(pods // 5, len(gpu_slots))
    for index in range(pods):
        if index < gpu_pods:
            yield gpu_slots[index], True
        else:
            yield cpu_nodes[index % len(cpu_nodes)], False


def _pod_and_event_objects(
    *, plans: list[_NodePlan], pods: int, namespaces: int, rng: random.Random
) -> Iterator[dict]:
    templates = _pod_templates()
    statuses: dict[tuple[str, bool], dict] = {}
    job_labels: dict[int, dict] = {}
    for index, (plan, gpu) in enumerate(_placements(plans, pods)):
        job = index // PODS_PER_JOB
        namespace = f"scale-{job % namespaces}"
        if job not in job_labels:
            job_labels[job] = {"job-name": f"scale-job-{job}", "app": "scale-train",
                               "accelerator": "gpu" if gpu else "cpu"}
        spec, status = templates[gpu]
        if (plan.name, gpu) not in statuses:
            statuses[(plan.name, gpu)] = {**status, "hostIP": plan.ip}
        name = f"scale-job-{job}-worker-{index % PODS_PER_JOB}"
        uid = _uid(rng)
        yield {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": uid, "creationTimestamp": TIMESTAMP,
                         "labels": job_labels[job]},
            "spec": {**spec, "nodeName": plan.name},
            "status": statuses[(plan.name, gpu)],
        }
        if index % 10 == 0:
            yield _event(pod=name, namespace=namespace, uid=uid, node=plan.name, serial=index)


_EVENT_KINDS = (
    ("Scheduled", "default-scheduler", "Successfully assigned {namespace}/{pod} to {node}"),
    ("Pulled", "kubelet", "Container image already present on machine"),
    ("Started", "kubelet", "Started container"),
)


def _event(*, pod: str, namespace: str, uid: str, node: str, serial: int) -> dict:
    reason, component, message = _EVENT_KINDS[(serial // 10) % len(_EVENT_KINDS)]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{pod}.{serial:016x}", "namespace": namespace, "creationTimestamp": TIMESTAMP},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": pod, "namespace": namespace, "uid": uid},
        "reason": reason,
        "message": message.format(namespace=namespace, pod=pod, node=node),
        "type": "Normal",
        "source": {"component": component, **({"host": node} if component == "kubelet" else {})},
        "reportingComponent": component,
        "firstTimestamp": TIMESTAMP,
        "lastTimestamp": TIMESTAMP,
        "count": 1,
    }


def _namespace(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "status": {"phase": "Active"}}


def add_synthetic(cluster: Cluster, *, nodes: int, pods: int, seed: int = 0) -> None:
    """Add `nodes` nodes (half GPU, half CPU) with NodeClaims, two NodePools, and `pods` Running pods."""
    if nodes < 0 or pods < 0:
        raise ValueError("nodes and pods must not be negative")
    if pods and not nodes:
        raise ValueError("synthetic pods need at least one node to run on")
    rng = random.Random(seed)
    plans = _plan_nodes(nodes=nodes, rng=rng)
    namespaces = max(1, min(MAX_NAMESPACES, pods // PODS_PER_NAMESPACE))
    cluster.add_all(_namespace(f"scale-{i}") for i in range(namespaces))
    cluster.add_all([_nodepool("scale-gpu", _GPU_TYPES), _nodepool("scale-cpu", _CPU_TYPES)])
    cluster.add_all(_node_objects(plans, rng))
    cluster.add_all(_pod_and_event_objects(plans=plans, pods=pods, namespaces=namespaces, rng=rng))
