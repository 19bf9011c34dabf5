"""GPU fleet reports: GPU nodes (capacity, allocatable, health) and GPU NodePools (usage, limits,
disruption settings). Plain data; renderers format it for the terminal and Slack."""
from __future__ import annotations

from dataclasses import dataclass, field

from playbooks.requirements import is_auto_mode

GPU = "nvidia.com/gpu"
GPU_COUNT_LABELS = ("karpenter.k8s.aws/instance-gpu-count", "eks.amazonaws.com/instance-gpu-count")


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

    @property
    def unhealthy_gpus(self) -> int:
        return max(self.gpu_capacity - self.gpu_allocatable, 0)


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


@dataclass(frozen=True)
class NodePoolsReport:
    cluster: str
    nodepools: list[GpuNodePool] = field(default_factory=list)


def _int(value: object) -> int:
    try:
        return int(float(str(value)))
    except (TypeError, ValueError):
        return 0


def gpu_node(node: dict) -> GpuNode:
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
    )


def nodes_report(nodes: list[dict], *, cluster: str, more: int = 0) -> NodesReport:
    rows = sorted((gpu_node(n) for n in nodes), key=lambda n: (n.ready, -n.unhealthy_gpus, n.nodepool or "", n.name))
    return NodesReport(cluster=cluster, nodes=rows, more=more)


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
    rows.sort(key=lambda r: (not r.at_limit, not r.do_not_disrupt_risk, r.name))
    return NodePoolsReport(cluster=cluster, nodepools=rows)


def _budget(budget: dict) -> str:
    text = f"nodes={budget.get('nodes', '10%')}"
    if budget.get("schedule"):
        text += f" schedule='{budget['schedule']}' for {budget.get('duration', '?')}"
    if budget.get("reasons"):
        text += f" reasons={','.join(budget['reasons'])}"
    return text
