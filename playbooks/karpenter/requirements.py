"""Node selector requirements as Karpenter represents them: a value set, a complement flag and integer
bounds (kubernetes-sigs/karpenter pkg/scheduling/requirement.go), grouped by key with the compatibility
rules of pkg/scheduling/requirements.go."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable

from playbooks.karpenter import labels as lbl


def _int(value: str) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _within(value: str, gte: int | None, lte: int | None) -> bool:
    # pkg/scheduling/requirement.go withinBounds: with bounds set, non-integer values never match
    if gte is None and lte is None:
        return True
    number = _int(value)
    if number is None:
        return False
    return (gte is None or number >= gte) and (lte is None or number <= lte)


def _max(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def _min(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


@dataclass(frozen=True)
class Requirement:
    key: str
    complement: bool = False  # True: every value except ``values`` (NotIn, Exists, Gt, Lt, ...)
    values: frozenset[str] = frozenset()
    gte: int | None = None  # inclusive bounds: Gt N is kept as Gte N+1, Lt N as Lte N-1
    lte: int | None = None
    min_values: int | None = None

    @classmethod
    def of(cls, key: str, operator: str, values: Iterable = (), *, min_values: int | None = None) -> "Requirement":
        """pkg/scheduling/requirement.go NewRequirementWithFlexibility: aliases normalised (beta.kubernetes.io/arch
        is kubernetes.io/arch), Gt/Lt canonicalised to inclusive bounds."""
        key = lbl.normalize(key)
        values = [str(v) for v in values or ()]
        if operator == "In":
            return cls(key, False, frozenset(values), min_values=min_values)
        if operator == "DoesNotExist":
            return cls(key, False, frozenset(), min_values=min_values)
        if operator == "NotIn":
            return cls(key, True, frozenset(values), min_values=min_values)
        bound = _int(values[0]) if values else None
        if operator in ("Gt", "Gte", "Lt", "Lte") and bound is None:
            return cls(key, False, frozenset(), min_values=min_values)  # invalid bound: nothing matches
        if operator == "Gt":
            return cls(key, True, gte=bound + 1, min_values=min_values)
        if operator == "Gte":
            return cls(key, True, gte=bound, min_values=min_values)
        if operator == "Lt":
            return cls(key, True, lte=bound - 1, min_values=min_values)
        if operator == "Lte":
            return cls(key, True, lte=bound, min_values=min_values)
        return cls(key, True, min_values=min_values)  # Exists

    @property
    def operator(self) -> str:
        """pkg/scheduling/requirement.go Operator(): bounded complements count as Exists."""
        if self.complement:
            return "NotIn" if self.values else "Exists"
        return "In" if self.values else "DoesNotExist"

    def has(self, value: str | None) -> bool:
        """Whether a node whose label has ``value`` (None: no such label) meets the requirement."""
        if value is None:  # NotIn and DoesNotExist match a node without the label; In, Exists and bounds do not
            if self.complement:
                return bool(self.values) and self.gte is None and self.lte is None
            return not self.values
        if self.complement:
            return value not in self.values and _within(value, self.gte, self.lte)
        return value in self.values and _within(value, self.gte, self.lte)

    def intersection(self, other: "Requirement") -> "Requirement":
        # pkg/scheduling/requirement.go Intersection
        complement = self.complement and other.complement
        gte, lte = _max(self.gte, other.gte), _min(self.lte, other.lte)
        min_values = _max(self.min_values, other.min_values)
        if gte is not None and lte is not None and gte > lte:
            return Requirement(self.key, False, frozenset(), min_values=min_values)
        if self.complement and other.complement:
            values = self.values | other.values
        elif self.complement:
            values = other.values - self.values
        elif other.complement:
            values = self.values - other.values
        else:
            values = self.values & other.values
        values = frozenset(v for v in values if _within(v, gte, lte))
        if not complement:
            gte = lte = None
        return Requirement(self.key, complement, values, gte, lte, min_values)

    def has_intersection(self, other: "Requirement") -> bool:
        # pkg/scheduling/requirement.go HasIntersection: two complements always share a value unless the
        # bounds cross (Gt 0 and Gt 0 intersect; Gt 5 and Lt 3 do not)
        gte, lte = _max(self.gte, other.gte), _min(self.lte, other.lte)
        if gte is not None and lte is not None and gte > lte:
            return False
        if self.complement and other.complement:
            return True
        if self.complement:
            return any(v not in self.values and _within(v, gte, lte) for v in other.values)
        if other.complement:
            return any(v not in other.values and _within(v, gte, lte) for v in self.values)
        return any(v in other.values and _within(v, gte, lte) for v in self.values)

    def describe(self) -> str:
        op = self.operator
        text = f"{self.key} {op}" if op in ("Exists", "DoesNotExist") else f"{self.key} {op} [{', '.join(sorted(self.values))}]"
        if self.gte is not None:
            text += f" >={self.gte}"
        if self.lte is not None:
            text += f" <={self.lte}"
        if self.min_values is not None:
            text += f" minValues {self.min_values}"
        return text


@dataclass(frozen=True)
class Incompatible:
    """Why two sets of requirements cannot meet: the key, and Karpenter's own wording of it."""

    key: str
    undefined: bool  # the NodePool has no value for a label the pod requires
    message: str
    incoming: Requirement | None = None
    existing: Requirement | None = None


@dataclass
class Requirements:
    by_key: dict[str, Requirement] = field(default_factory=dict)

    @classmethod
    def of(cls, reqs: Iterable[Requirement]) -> "Requirements":
        out = cls()
        out.add(*reqs)
        return out

    def add(self, *reqs: Requirement) -> None:
        # pkg/scheduling/requirements.go Add: requirements on the same key intersect
        for req in reqs:
            existing = self.by_key.get(req.key)
            self.by_key[req.key] = req if existing is None else req.intersection(existing)

    def get(self, key: str) -> Requirement:
        return self.by_key.get(key) or Requirement(key, True)  # undefined: any value (Exists)

    def __contains__(self, key: str) -> bool:
        return key in self.by_key

    def __iter__(self):
        return iter(self.by_key.values())

    def merged(self, other: "Requirements") -> "Requirements":
        out = Requirements(dict(self.by_key))
        out.add(*other)
        return out

    def intersects(self, incoming: "Requirements") -> Incompatible | None:
        """pkg/scheduling/requirements.go Intersects: keys both define must share a value; two negative
        requirements (NotIn / DoesNotExist) never conflict."""
        for key in sorted(set(self.by_key) & set(incoming.by_key)):
            existing, wanted = self.by_key[key], incoming.by_key[key]
            if existing.has_intersection(wanted):
                continue
            if wanted.operator in ("NotIn", "DoesNotExist") and existing.operator in ("NotIn", "DoesNotExist"):
                continue
            return Incompatible(key, False, f"incompatible requirements, key {key}, {wanted.describe()} not in "
                                f"{existing.describe()}", wanted, existing)
        return None

    def compatible(self, incoming: "Requirements", *, allow_undefined: frozenset[str]) -> Incompatible | None:
        """pkg/scheduling/requirements.go Compatible: a custom label the pod requires with In / Exists must be
        defined by the NodePool ("label X does not have known values"); NotIn / DoesNotExist on an undefined
        label is fine; well-known labels may be undefined (instance types give their values)."""
        for key in sorted(incoming.by_key):
            if key in allow_undefined or key in self.by_key:
                continue
            if incoming.by_key[key].operator in ("NotIn", "DoesNotExist"):
                continue
            return Incompatible(key, True, f'label "{key}" does not have known values', incoming.by_key[key])
        return self.intersects(incoming)

    def describe(self) -> list[str]:
        return [r.describe() for _, r in sorted(self.by_key.items())]


def from_selector_terms(exprs: Iterable[dict]) -> list[Requirement]:
    return [Requirement.of(e.get("key", ""), e.get("operator", ""), e.get("values") or (),
                           min_values=e.get("minValues")) for e in exprs or ()]


def pod_terms(pod: dict) -> list[Requirements]:
    """One set of requirements per required nodeSelectorTerm, each with the nodeSelector. Karpenter tries the
    first term and relaxes to the next when it cannot be met (pkg/controllers/provisioning/scheduling/
    preferences.go removeRequiredNodeAffinityTerm), so a pod fits if any term fits. Preferred terms are
    relaxed away before a pod is declared unschedulable: they never decide feasibility."""
    spec = pod.get("spec") or {}
    base = [Requirement.of(k, "In", [v]) for k, v in (spec.get("nodeSelector") or {}).items()]
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        return [Requirements.of(base)]
    return [Requirements.of(base + from_selector_terms(t.get("matchExpressions"))) for t in terms]


def nodepool_requirements(nodepool: dict, *, karpenter_version: str | None = None) -> Requirements:
    """The NodeClaim template's requirements: spec requirements (with minValues), template labels, the
    NodePool's own name and, from v1.1, its NodeClass label (pkg/controllers/provisioning/scheduling/
    nodeclaimtemplate.go)."""
    template = (nodepool.get("spec") or {}).get("template") or {}
    reqs = Requirements.of(from_selector_terms((template.get("spec") or {}).get("requirements")))
    labels = lbl.template_labels(nodepool, karpenter_version=karpenter_version)
    reqs.add(*(Requirement.of(k, "In", [v]) for k, v in labels.items()))
    return reqs


def without_min_values(reqs: Requirements) -> Requirements:
    return Requirements({k: replace(r, min_values=None) for k, r in reqs.by_key.items()})


def is_auto_mode(nodepool: dict) -> bool:
    ref = ((nodepool.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}
    return ref.get("group") == "eks.amazonaws.com"


def label_prefix(nodepool: dict) -> str:
    return lbl.AUTO_PREFIX if is_auto_mode(nodepool) else lbl.OSS_PREFIX


# Instance-type labels that exist only on types with that hardware: a type without GPUs has no
# instance-gpu-* label at all (aws/karpenter-provider-aws pkg/providers/instancetype/types.go
# computeRequirements starts them as DoesNotExist).
_HARDWARE_SUFFIXES = ("instance-gpu-count", "instance-gpu-name", "instance-gpu-memory", "instance-gpu-manufacturer",
                      "instance-accelerator-count", "instance-accelerator-name", "instance-accelerator-manufacturer")


def instance_requirements(info, *, prefix: str, zone_ids: frozenset[str] | None = None) -> Requirements:
    """What one instance type's nodes would carry, as requirements (zone and capacity type excluded: those
    are offerings, see offerings.py). Labels we cannot derive from EC2 facts are left undefined, which
    Intersects ignores: the model never rejects a type for a label it does not know. ``zone_ids``: the
    zone ids of the NodeClass subnets in zones where the type is offered (offerings.type_zone_ids); the
    provider's computeRequirements sets topology.k8s.aws/zone-id from them and only when they are known
    (aws/karpenter-provider-aws pkg/providers/instancetype/types.go, "Only add zone-id label when
    available")."""
    labels = dict(info.karpenter_labels(prefix.rstrip("/")))
    reqs = Requirements.of(Requirement.of(k, "In", [v]) for k, v in labels.items() if v != "")
    for suffix in _HARDWARE_SUFFIXES:
        if prefix + suffix not in labels:
            reqs.add(Requirement.of(prefix + suffix, "DoesNotExist"))
    if zone_ids:
        reqs.add(Requirement.of(lbl.ZONE_ID, "In", sorted(zone_ids)))
    return reqs


def type_allowed(info, reqs: Requirements, *, prefix: str) -> bool:
    return instance_requirements(info, prefix=prefix).intersects(reqs) is None


# Keys whose values come from an instance type's offerings, not from the type itself: the provider's
# computeRequirements sets zone (offering zones within the NodeClass subnets), capacity type and zone-id
# from them, so SatisfiesMinValues counts them like any other label.
OFFERING_KEYS = (lbl.ZONE, lbl.CAPACITY_TYPE, lbl.ZONE_ID)


def min_values_unmet(reqs: Requirements, types: dict, *, prefix: str,
                     offered: dict[str, dict[str, set[str]]] | None = None) -> dict[str, tuple[int, int]]:
    """Keys whose minValues the remaining instance types cannot meet: key -> (distinct values, needed)
    (kubernetes-sigs/karpenter pkg/cloudprovider/types.go InstanceTypes.SatisfiesMinValues: the union of
    it.Requirements.Get(key).Values() over the remaining types). ``offered``: type -> key -> values for
    the offering keys (offerings.offering_values); a type missing there makes those keys undecidable, and
    an undecidable key is never reported."""
    out = {}
    for req in reqs:
        if req.min_values is None:
            continue
        seen: set[str] = set()
        known = True
        for name, info in types.items():
            if req.key in OFFERING_KEYS:
                values = (offered or {}).get(name, {}).get(req.key)
                if values is None:
                    known = False
                    break
                seen |= set(values)
            else:
                seen |= set(instance_requirements(info, prefix=prefix).get(req.key).values)
        if known and len(seen) < req.min_values:
            out[req.key] = (len(seen), req.min_values)
    return out


def instance_patterns(reqs: Requirements, prefix: str) -> list[str]:
    """EC2 wildcard filters narrowing DescribeInstanceTypes to what the requirements could allow."""
    for key, pattern in ((lbl.INSTANCE_TYPE, "{}"), (prefix + "instance-family", "{}.*"),
                         (prefix + "instance-category", "{}*")):
        req = reqs.by_key.get(key)
        if req is not None and req.operator == "In":
            return [pattern.format(v) for v in sorted(req.values)]
    return ["*"]
