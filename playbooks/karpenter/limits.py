"""NodePool spec.limits as Karpenter applies them: what is left is the limit minus status.resources, and
an instance type whose capacity exceeds what is left on any limited resource is filtered out
(kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/scheduler.go filterByRemainingResources;
"all available instance types exceed limits for nodepool"). The capacity compared is the instance type's
Capacity as the provider computes it: memory less the VM overhead (aws/karpenter-provider-aws
pkg/providers/instancetype/types.go memory(), VM_MEMORY_OVERHEAD_PERCENT, 0.075 by default), pods as the
kubelet settings allow; not the raw EC2 memory. The same in v1.0-v1.14."""
from __future__ import annotations

from dataclasses import dataclass

from playbooks.karpenter.nodeconfig import DEFAULT, NodeConfig
from playbooks.karpenter.resources import capacity, quantity, show


@dataclass(frozen=True)
class LimitBlock:
    """The NodePool's limits leave no room for the smallest instance type that fits the pod."""

    resource: str  # the limited resource that blocks it (the first in cpu, memory, GPU ... order)
    limit: float
    used: float
    needed: float  # the smallest fitting type's capacity of that resource
    instance_type: str
    all_blocking: dict[str, tuple[float, float, float]]  # resource -> (limit, used, needed)

    def describe(self) -> str:
        r = self.resource
        return f"{r} {show(r, self.used)}/{show(r, self.limit)} used; {self.instance_type} would add {show(r, self.needed)}"


def parsed_limits(nodepool: dict) -> dict[str, float]:
    out = {}
    for name, value in ((nodepool.get("spec") or {}).get("limits") or {}).items():
        try:
            out[name] = quantity(value)
        except ValueError:
            continue
    return out


def used(nodepool: dict) -> dict[str, float]:
    out = {}
    status = (nodepool.get("status") or {}).get("resources") or {}
    for name, value in status.items():
        try:
            out[name] = quantity(value)
        except ValueError:
            continue
    return out


_ORDER = ("cpu", "memory", "nvidia.com/gpu", "nodes")


def blocking(nodepool: dict, fitting: dict, config: NodeConfig = DEFAULT) -> LimitBlock | None:
    """None when some instance type that fits the pod stays within every limit; otherwise the limit that
    stops the smallest of them (smallest by the blocking resources, then by name)."""
    limits = parsed_limits(nodepool)
    if not limits or not fitting:
        return None
    in_use = used(nodepool)
    remaining = {k: v - in_use.get(k, 0) for k, v in limits.items()}
    best: LimitBlock | None = None
    best_key = None
    for name, info in sorted(fitting.items()):
        cap = capacity(info, config)
        over = {k: (limits[k], in_use.get(k, 0), cap.get(k, 0)) for k, left in remaining.items()
                if cap.get(k, 0) > left + 1e-9}
        if not over:
            return None
        key = (len(over), sum(cap.get(k, 0) / max(limits[k], 1) for k in over), name)
        if best_key is None or key < best_key:
            first = sorted(over, key=lambda k: (_ORDER.index(k) if k in _ORDER else len(_ORDER), k))[0]
            lim, use, need = over[first]
            best, best_key = LimitBlock(first, lim, use, need, name, over), key
    return best


def raised_limits(nodepool: dict, block: LimitBlock) -> dict[str, str]:
    """spec.limits with the blocking resource raised far enough for one more node of the smallest type."""
    raw = dict((nodepool.get("spec") or {}).get("limits") or {})
    for resource, (lim, use, need) in block.all_blocking.items():
        wanted = max(lim * 2, use + need)
        raw[resource] = _as_quantity(resource, wanted)
    return raw


def _as_quantity(resource: str, value: float) -> str:
    if resource == "memory":
        return f"{int(-(-value // 2**30))}Gi"
    return str(int(-(-value // 1)))


def blocking_by_request(nodepool: dict, requests: dict[str, float]) -> LimitBlock | None:
    """Without instance-type facts: a limit is surely in the way when what is left of it is smaller than the
    pod's own request (any node that fits the pod has at least that much capacity), or no node is left."""
    limits = parsed_limits(nodepool)
    in_use = used(nodepool)
    need = {**requests, "nodes": 1.0}
    over = {k: (limits[k], in_use.get(k, 0), need[k]) for k in limits
            if k in need and need[k] > limits[k] - in_use.get(k, 0) + 1e-9}
    if not over:
        return None
    first = sorted(over, key=lambda k: (_ORDER.index(k) if k in _ORDER else len(_ORDER), k))[0]
    lim, use, needed = over[first]
    return LimitBlock(first, lim, use, needed, "a node for this pod", over)
