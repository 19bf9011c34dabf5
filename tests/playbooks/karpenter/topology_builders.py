"""Facts for topology tests, built by hand the way the engine gathers them: pods, nodes with zone
labels, NodePools and EC2 answers (instance types with their real sizes, zones per type)."""
from __future__ import annotations

from bot.gateway.ec2 import InstanceTypeInfo
from playbooks.facts import Ec2Facts, Facts, PodFacts
from playbooks.model import Target

NS = "train"
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


def instance(name: str, *, vcpus: int, memory_gib: int, gpus: int, gpu: str = "A10G") -> InstanceTypeInfo:
    return InstanceTypeInfo(name=name, vcpus=vcpus, memory_mib=memory_gib * 1024, architectures=("x86_64",),
                            gpu_count=gpus, gpu_name=gpu, gpu_manufacturer="NVIDIA", gpu_memory_mib=24576,
                            efa_supported=False, max_efa_interfaces=0)


# Sizes as EC2 DescribeInstanceTypes states them.
G5_12XL = instance("g5.12xlarge", vcpus=48, memory_gib=192, gpus=4)
G5_48XL = instance("g5.48xlarge", vcpus=192, memory_gib=768, gpus=8)
P4D = instance("p4d.24xlarge", vcpus=96, memory_gib=1152, gpus=8, gpu="A100")


def pod(name: str, *, labels: dict | None = None, gpus: int = 1, node: str | None = None, phase: str | None = None,
        events: list[dict] | None = None, **spec) -> PodFacts:
    body = {"containers": [{"name": "trainer", "resources": {"requests": {"nvidia.com/gpu": str(gpus), "cpu": "4",
                                                                           "memory": "16Gi"}}}],
            "nodeSelector": {"karpenter.sh/nodepool": "gpu"}, **spec}
    if node:
        body["nodeName"] = node
    status = {"phase": phase or ("Running" if node else "Pending")}
    raw = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS, "labels": labels or {}},
           "spec": body, "status": status}
    return PodFacts(pod=raw, events=events or [])


def node(name: str, zone: str, *, nodepool: str = "gpu") -> dict:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone,
                                                  "karpenter.sh/nodepool": nodepool}}, "spec": {}}


def nodepool(name: str = "gpu", *, requirements: list[dict] | None = None) -> dict:
    reqs = requirements if requirements is not None else [
        {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["g", "p"]},
        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["0"]},
    ]
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
            "spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                                            "name": "default"}, "requirements": reqs}}}}


def facts(pods: list[PodFacts], *, nodes: list[dict] = (), nodepools: list[dict] | None = None,
          types: list[InstanceTypeInfo] = (G5_12XL, G5_48XL, P4D), zones: dict[str, tuple[str, ...]] | None = None,
          ec2: bool = True, peers: dict[str, list[dict]] | None = None) -> Facts:
    """Facts for a job whose pods are ``pods`` (the target is the first one's job)."""
    out = Facts(target=Target(kind="pytorchjob", name="job", namespace=NS), cluster="test")
    out.pods = list(pods)
    out.nodes = {n["metadata"]["name"]: n for n in nodes}
    pools = nodepools if nodepools is not None else [nodepool()]
    out.nodepools = {p["metadata"]["name"]: p for p in pools}
    out.peer_pods = dict(peers or {})
    if ec2:
        offered = zones or {t.name: ZONES for t in types}
        out.ec2 = Ec2Facts(candidates={p["metadata"]["name"]: {t.name: t for t in types} for p in pools},
                           zones={t: frozenset(z) for t, z in offered.items()}, region="us-east-1")
    else:
        out.ec2 = Ec2Facts(unavailable="no AWS credentials")
    return out


def failed(message: str, component: str = "default-scheduler") -> dict:
    return {"reason": "FailedScheduling", "message": message, "type": "Warning", "source": {"component": component},
            "count": 4}
