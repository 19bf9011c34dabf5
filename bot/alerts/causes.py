"""What a problem's cause is, so that everything one cause does is told in one message.

A storm used to be grouped by owner (the pods of one job, the GPUs of one node): two jobs Pending on one
full NodePool were two messages, and the NodePool's own alert a third. The cause is what on call acts
on, so it is the grouping key:

- ``limit``: the NodePool whose ``spec.limits`` blocks new nodes (``karpenter.nodepool_limit_reached``);
- ``offering``: the EC2 offering without capacity, instance type + zone + capacity type
  (``karpenter.insufficient_capacity``, ``karpenter.offering_unavailable_in_zone``);
- ``gpu``: the node whose GPU failed (``gpu.*``);
- ``nodeclass``: the NodeClass that is not Ready (``karpenter.nodeclass_not_ready``).

The cause's object is read from structured fields only: the problem's target, its evidence's object
reference (``nodepool/NAME spec.limits``: the ``ref`` half of ``playbooks.analyzers.evidence.field``),
its remediations' parameters and its labels (Alertmanager's, or the finding's own ``Finding.labels``,
which use the same names, so a sweep's capacity finding and Karpenter's alert about one offering meet). Titles and details are prose and never parsed.
A problem with none of these causes keeps the group its producer gave it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterable

from playbooks.problems import Problem

PREFIX = "cause:"
KINDS = ("limit", "offering", "gpu", "nodeclass")
_LIMIT_CODES = ("karpenter.nodepool_limit_reached",)
_OFFERING_CODES = ("karpenter.insufficient_capacity", "karpenter.offering_unavailable_in_zone")
_NODECLASS_CODES = ("karpenter.nodeclass_not_ready",)
# Evidence refs that name a NodeClass: open-source Karpenter on AWS, and EKS Auto Mode's NodeClass.
_NODECLASS_REFS = ("ec2nodeclass", "nodeclass")
# Label names Karpenter's metrics give an offering (pkg/metrics/constants.go: instance_type, zone,
# capacity_type on karpenter_cloudprovider_instance_type_offering_*), also the well-known node labels.
_OFFERING_LABELS = (("instance_type", "node_kubernetes_io_instance_type"),
                    ("zone", "topology_kubernetes_io_zone"),
                    ("capacity_type", "karpenter_sh_capacity_type"))


@dataclass(frozen=True)
class Cause:
    kind: str  # one of KINDS
    name: str  # NodePool, node or NodeClass name; "instance-type/zone/capacity-type" for an offering

    @property
    def key(self) -> str:
        return f"{PREFIX}{self.kind}/{self.name}"


def parse(key: str | None) -> Cause | None:
    """The cause a group key of ours names (``cause:limit/gpu-training-32``), else None."""
    if not key or not key.startswith(PREFIX):
        return None
    kind, _, name = key[len(PREFIX):].partition("/")
    return Cause(kind, name) if kind in KINDS and name else None


def cause_of(problem: Problem) -> Cause | None:
    code, target = problem.code, problem.target
    if code in _LIMIT_CODES:
        name = target.name if target.kind == "nodepool" else (
            _ref(problem, ("nodepool",)) or _param(problem, "nodepool") or problem.labels.get("nodepool"))
        return Cause("limit", name) if name else None
    if code in _OFFERING_CODES:
        parts = [next((problem.labels[k] for k in keys if problem.labels.get(k)), None) for keys in _OFFERING_LABELS]
        return Cause("offering", "/".join(parts)) if all(parts) else None  # type: ignore[arg-type]
    if code.startswith("gpu.") and target.kind == "node":
        return Cause("gpu", target.name)
    if code in _NODECLASS_CODES:
        name = _ref(problem, _NODECLASS_REFS) or problem.labels.get("nodeclass")
        return Cause("nodeclass", name) if name else None
    return None


# What a NodePool limit's message says is used up: Finding.labels / Problem.labels of the limit finding.
USAGE_FIELDS = ("resource_type", "used", "limit")
_USAGE_MAX = 64


def usage_of(problem: Problem) -> dict[str, str] | None:
    """For a NodePool limit, what is used up and how much ({"resource_type": "nvidia.com/gpu", "used": "32",
    "limit": "32"}), from the problem's structured labels; None where it carries none (an Alertmanager alert
    whose rule keeps only the ratio)."""
    if problem.code not in _LIMIT_CODES:
        return None
    found = {k: str(problem.labels.get(k) or "")[:_USAGE_MAX] for k in USAGE_FIELDS}
    return found if all(found.values()) else None


def by_cause(problems: Iterable[Problem]) -> list[Problem]:
    """The problems, each grouped under its cause where it has one."""
    out = []
    for problem in problems:
        cause = cause_of(problem)
        out.append(dataclasses.replace(problem, group=cause.key) if cause else problem)
    return out


def _ref(problem: Problem, kinds: tuple[str, ...]) -> str | None:
    for evidence in problem.evidence:
        ref = evidence.source.split(" ", 1)[0]
        kind, _, name = ref.partition("/")
        if kind in kinds and name and "/" not in name:
            return name
    return None


def _param(problem: Problem, key: str) -> str | None:
    return next((str(r.params[key]) for r in problem.remediations if r.params.get(key)), None)
