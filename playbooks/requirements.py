"""Node requirements as Karpenter reads them: pod nodeSelector / required node affinity against a
NodePool's template labels and requirements, and against the labels an instance type would carry."""
from __future__ import annotations

from dataclasses import dataclass

# Labels Karpenter derives from the instance type, zone and capacity type rather than the template.
WELL_KNOWN = {
    "node.kubernetes.io/instance-type",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "karpenter.sh/capacity-type",
    "karpenter.sh/nodepool",
    "kubernetes.io/hostname",
}
OSS_PREFIX = "karpenter.k8s.aws/"
AUTO_PREFIX = "eks.amazonaws.com/"
AUTO_ONLY = {"eks.amazonaws.com/compute-type"}


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte
    values: tuple[str, ...] = ()

    def allows(self, value: str | None) -> bool:
        op = self.operator
        if op == "In":
            return value is not None and value in self.values
        if op == "NotIn":
            return value is None or value not in self.values
        if op == "Exists":
            return value is not None
        if op == "DoesNotExist":
            return value is None
        if op in ("Gt", "Lt", "Gte", "Lte"):
            try:
                left, right = int(value or ""), int(self.values[0])
            except (ValueError, IndexError):
                return False
            return {"Gt": left > right, "Lt": left < right, "Gte": left >= right, "Lte": left <= right}[op]
        return False

    def describe(self) -> str:
        if self.operator in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.operator}"
        return f"{self.key} {self.operator} [{', '.join(self.values)}]"


def pod_requirements(pod: dict) -> list[Requirement]:
    """nodeSelector plus the first required nodeSelectorTerm (Karpenter tries terms in order)."""
    spec = pod.get("spec") or {}
    reqs = [Requirement(k, "In", (str(v),)) for k, v in (spec.get("nodeSelector") or {}).items()]
    node_affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {})
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = required.get("nodeSelectorTerms") or []
    if terms:
        for expr in terms[0].get("matchExpressions") or []:
            reqs.append(Requirement(expr["key"], expr["operator"], tuple(str(v) for v in expr.get("values") or ())))
    return reqs


def nodepool_requirements(nodepool: dict) -> dict[str, list[Requirement]]:
    template = (nodepool.get("spec") or {}).get("template") or {}
    out: dict[str, list[Requirement]] = {}
    for key, value in ((template.get("metadata") or {}).get("labels") or {}).items():
        out.setdefault(key, []).append(Requirement(key, "In", (str(value),)))
    for raw in (template.get("spec") or {}).get("requirements") or []:
        req = Requirement(raw["key"], raw["operator"], tuple(str(v) for v in raw.get("values") or ()))
        out.setdefault(req.key, []).append(req)
    name = (nodepool.get("metadata") or {}).get("name", "")
    out.setdefault("karpenter.sh/nodepool", []).append(Requirement("karpenter.sh/nodepool", "In", (name,)))
    return out


def is_auto_mode(nodepool: dict) -> bool:
    ref = ((nodepool.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}
    return ref.get("group") == "eks.amazonaws.com"


def label_prefix(nodepool: dict) -> str:
    return AUTO_PREFIX if is_auto_mode(nodepool) else OSS_PREFIX


def instance_derived(key: str, *, auto_mode: bool) -> bool:
    """Whether Karpenter knows values for ``key`` from instance types on this kind of NodePool."""
    if key in WELL_KNOWN:
        return True
    if auto_mode:
        return key.startswith(AUTO_PREFIX) or key in AUTO_ONLY
    return key.startswith(OSS_PREFIX)


def intersects(pod_req: Requirement, np_reqs: list[Requirement]) -> bool:
    """Can one label value satisfy the pod requirement and every NodePool requirement on the key?"""
    candidates = set(pod_req.values)
    for req in np_reqs:
        if req.operator == "In":
            candidates = candidates & set(req.values) if pod_req.operator == "In" else set(req.values)
    if pod_req.operator == "In":
        return any(all(r.allows(v) for r in np_reqs) for v in candidates)
    if pod_req.operator == "DoesNotExist":
        return all(r.allows(None) for r in np_reqs)
    if candidates:
        return any(pod_req.allows(v) and all(r.allows(v) for r in np_reqs) for v in candidates)
    return True  # open-ended on both sides (Exists / NotIn / Gt ...): some value fits


_GPU_KEYS = ("instance-gpu-count", "instance-gpu-name", "instance-gpu-memory", "instance-gpu-manufacturer")


def type_allowed(labels: dict[str, str], reqs: list[Requirement]) -> bool:
    """Whether an instance type with ``labels`` meets every requirement we can judge from EC2 facts.

    GPU keys absent from a CPU type's labels count as "no value"; other labels we do not derive
    (hypervisor, local NVMe, ...) are not judged here.
    """
    for req in reqs:
        if req.key in labels or req.key.endswith(_GPU_KEYS):
            if not req.allows(labels.get(req.key)):
                return False
    return True


def instance_patterns(reqs: dict[str, list[Requirement]], prefix: str) -> list[str]:
    """EC2 wildcard filters narrowing DescribeInstanceTypes to what the requirements could allow."""
    for req in reqs.get("node.kubernetes.io/instance-type", []):
        if req.operator == "In":
            return list(req.values)
    for req in reqs.get(prefix + "instance-family", []):
        if req.operator == "In":
            return [f"{v}.*" for v in req.values]
    for req in reqs.get(prefix + "instance-category", []):
        if req.operator == "In":
            return [f"{v}*" for v in req.values]
    return ["*"]
