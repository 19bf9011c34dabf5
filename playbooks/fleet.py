"""GPU fleet reports: GPU nodes (capacity, allocatable, GPUs requested by their pods, health) and GPU
NodePools (usage, limits, disruption settings). Plain data; renderers format it for the terminal and
Slack.

Both are ordered for the reader woken at night: nodes in trouble first (NotReady, then unhealthy GPUs),
then the fullest; NodePools by how much of their GPU limit they use, at or near the limit first.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from playbooks.karpenter.resources import pod_requests
from playbooks.requirements import is_auto_mode

GPU = "nvidia.com/gpu"
GPU_COUNT_LABELS = ("karpenter.k8s.aws/instance-gpu-count", "eks.amazonaws.com/instance-gpu-count")
TERMINATED = ("Succeeded", "Failed")


@dataclass(frozen=True)
class GpuNode:
    name: str
    nodepool: str | None
    instance_type: str | None
    zone: str | None
    gpu_capacity: int
    gpu_allocatable: int
    ready: bool
    ready_reason: str = ""
    taints: tuple[str, ...] = ()
    gpu_allocated: int = 0  # requested by the node's pods that have not terminated

    @property
    def unhealthy_gpus(self) -> int:
        return max(self.gpu_capacity - self.gpu_allocatable, 0)

    @property
    def free_gpus(self) -> int:
        """Healthy GPUs no pod has asked for: what the scheduler can still place here."""
        return max(self.gpu_allocatable - self.gpu_allocated, 0)

    @property
    def fullness(self) -> float:
        return self.gpu_allocated / self.gpu_allocatable if self.gpu_allocatable else 0.0


@dataclass(frozen=True)
class NodesReport:
    cluster: str
    nodes: list[GpuNode] = field(default_factory=list)
    more: int = 0  # GPU nodes not listed (over the listing cap)

    @property
    def total_gpus(self) -> int:
        return sum(n.gpu_capacity for n in self.nodes)

    @property
    def allocatable_gpus(self) -> int:
        return sum(n.gpu_allocatable for n in self.nodes)

    @property
    def allocated_gpus(self) -> int:
        return sum(n.gpu_allocated for n in self.nodes)

    @property
    def unhealthy(self) -> list[GpuNode]:
        return [n for n in self.nodes if n.unhealthy_gpus]

    @property
    def not_ready(self) -> list[GpuNode]:
        return [n for n in self.nodes if not n.ready]


@dataclass(frozen=True)
class GpuNodePool:
    name: str
    auto_mode: bool
    gpu_limit: int | None
    gpu_used: int
    consolidation_policy: str
    consolidate_after: str
    budgets: tuple[str, ...]
    ready: bool
    do_not_disrupt_risk: bool  # consolidates underutilized GPU nodes

    @property
    def at_limit(self) -> bool:
        return self.gpu_limit is not None and self.gpu_used >= self.gpu_limit

    @property
    def usage(self) -> float | None:
        """GPUs used as a share of the limit (1.0: at it); None without a GPU limit. A limit of 0 is
        reached before the first GPU."""
        if self.gpu_limit is None:
            return None
        if self.gpu_limit == 0:
            return 1.0 + self.gpu_used
        return self.gpu_used / self.gpu_limit


@dataclass(frozen=True)
class NodePoolsReport:
    cluster: str
    nodepools: list[GpuNodePool] = field(default_factory=list)


def _int(value: object) -> int:
    try:
        return int(float(str(value)))
    except (TypeError, ValueError):
        return 0


def gpu_requests(pod: dict) -> int:
    """The GPUs a pod holds on its node, as the scheduler counts them (kubernetes/kubernetes
    pkg/api/v1/resource/helpers.go PodRequests: the containers' sum, at least the largest init container
    step, sidecars included, plus overhead); 0 once the pod has terminated (Succeeded or Failed), as
    kubectl describe node leaves such pods out of "Allocated resources"."""
    if (pod.get("status") or {}).get("phase") in TERMINATED:
        return 0
    return int(pod_requests(pod).get(GPU, 0))


def allocated_by_node(pods: Iterable[dict]) -> dict[str, int]:
    """GPUs requested per node name, from pods bound to nodes (spec.nodeName)."""
    allocated: dict[str, int] = defaultdict(int)
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            allocated[node] += gpu_requests(pod)
    return dict(allocated)


def gpu_node(node: dict, *, allocated: int = 0) -> GpuNode:
    meta, status = node.get("metadata") or {}, node.get("status") or {}
    labels = meta.get("labels") or {}
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
    return GpuNode(
        name=meta.get("name", ""),
        nodepool=labels.get("karpenter.sh/nodepool"),
        instance_type=labels.get("node.kubernetes.io/instance-type"),
        zone=labels.get("topology.kubernetes.io/zone"),
        gpu_capacity=_int((status.get("capacity") or {}).get(GPU, 0)),
        gpu_allocatable=_int((status.get("allocatable") or {}).get(GPU, 0)),
        ready=ready.get("status") == "True",
        ready_reason="" if ready.get("status") == "True" else str(ready.get("reason") or "Unknown"),
        taints=tuple(f"{t.get('key')}:{t.get('effect')}" for t in (node.get("spec") or {}).get("taints") or []),
        gpu_allocated=allocated,
    )


def nodes_report(nodes: list[dict], *, cluster: str, more: int = 0, pods: Iterable[dict] = ()) -> NodesReport:
    """GPU nodes, with the GPUs requested by ``pods`` (those bound to them), trouble first: NotReady, then
    the most unhealthy GPUs, then the fullest (share of healthy GPUs requested), then by name."""
    allocated = allocated_by_node(pods)
    rows = sorted((gpu_node(n, allocated=allocated.get((n.get("metadata") or {}).get("name", ""), 0)) for n in nodes),
                  key=_node_order)
    return NodesReport(cluster=cluster, nodes=rows, more=more)


def _node_order(node: GpuNode) -> tuple:
    return (node.ready, -node.unhealthy_gpus, -node.fullness, -node.gpu_allocated, node.name)


def is_gpu_nodepool(nodepool: dict) -> bool:
    spec = nodepool.get("spec") or {}
    template = (spec.get("template") or {}).get("spec") or {}
    if GPU in (spec.get("limits") or {}) or any(t.get("key") == GPU for t in template.get("taints") or []):
        return True
    for req in template.get("requirements") or []:
        key, values = req.get("key", ""), [str(v) for v in req.get("values") or []]
        if "instance-gpu" in key:
            return True
        if key.endswith("instance-category") and req.get("operator") == "In" and set(values) & {"g", "p"}:
            return True
        if key.endswith("instance-family") and any(v[:1] in ("g", "p") for v in values):
            return True
        if key == "node.kubernetes.io/instance-type" and any(v[:1] in ("g", "p") for v in values):
            return True
    return False


def nodepools_report(nodepools: list[dict], *, cluster: str) -> NodePoolsReport:
    rows = []
    for np in nodepools:
        if not is_gpu_nodepool(np):
            continue
        spec, status = np.get("spec") or {}, np.get("status") or {}
        disruption = spec.get("disruption") or {}
        policy = disruption.get("consolidationPolicy", "WhenEmptyOrUnderutilized")
        limit = (spec.get("limits") or {}).get(GPU)
        ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
        rows.append(GpuNodePool(
            name=np["metadata"]["name"], auto_mode=is_auto_mode(np),
            gpu_limit=_int(limit) if limit is not None else None,
            gpu_used=_int((status.get("resources") or {}).get(GPU, 0)),
            consolidation_policy=policy, consolidate_after=str(disruption.get("consolidateAfter", "0s")),
            budgets=tuple(_budget(b) for b in disruption.get("budgets") or [{"nodes": "10%"}]),
            ready=ready.get("status", "True") == "True",
            do_not_disrupt_risk=policy != "WhenEmpty",
        ))
    # By share of the limit, fullest first; NodePools without a GPU limit (which cannot block on it) last.
    rows.sort(key=lambda r: (r.usage is None, -(r.usage or 0.0), r.name))
    return NodePoolsReport(cluster=cluster, nodepools=rows)


def _budget(budget: dict) -> str:
    text = f"nodes={budget.get('nodes', '10%')}"
    if budget.get("schedule"):
        text += f" schedule='{budget['schedule']}' for {budget.get('duration', '?')}"
    if budget.get("reasons"):
        text += f" reasons={','.join(budget['reasons'])}"
    return text
