"""GPU NodePools close to their limits or unable to bring up nodes.

kubernetes-sigs/karpenter pkg/apis/v1/nodepool_status.go: ``status.resources`` is what the NodePool's
nodes hold, compared with ``spec.limits`` before every launch (scheduler.go filterByRemainingResources),
so a pool at 90 % of any limit (cpu and memory as much as GPUs) is one big node away from refusing pods.
Conditions: ``Ready`` (ValidationSucceeded and NodeClassReady) and ``NodeRegistrationHealthy`` (v1.4+,
False with RegistrationFailed when launched nodes do not register).
"""
from __future__ import annotations

from playbooks.analyzers.evidence import field
from playbooks.fleet import is_gpu_nodepool
from playbooks.karpenter.limits import parsed_limits, used
from playbooks.karpenter.resources import show
from playbooks.model import Target
from playbooks.problems import Problem
from playbooks.sweep.merge import merge
from playbooks.sweep.objects import condition, name_of

NEAR_LIMIT = 0.9
CONDITIONS = ("NodeRegistrationHealthy", "Ready")


def nodepool_problems(nodepools: list[dict], *, cluster: str) -> list[Problem]:
    problems: list[Problem] = []
    for nodepool in nodepools:
        if not is_gpu_nodepool(nodepool):
            continue
        problems += _limits(nodepool, cluster=cluster)
        problems += _conditions(nodepool, cluster=cluster)
    return merge(problems)


def _problem(nodepool: dict, **kwargs) -> Problem:
    name = name_of(nodepool)
    return Problem(target=Target(kind="nodepool", name=name), group=f"nodepool/{name}", nodepool=name, **kwargs)


def _limits(nodepool: dict, *, cluster: str) -> list[Problem]:
    limits, in_use = parsed_limits(nodepool), used(nodepool)
    near = {r: (in_use.get(r, 0.0), limit) for r, limit in limits.items()
            if limit > 0 and in_use.get(r, 0.0) >= NEAR_LIMIT * limit}
    if not near:
        return []  # a limit of 0 is a pool switched off on purpose, not one running out
    full = [r for r, (u, limit) in near.items() if u >= limit]
    name = name_of(nodepool)
    shown = ", ".join(f"{r} {show(r, u)}/{show(r, limit)} ({u / limit:.0%})" for r, (u, limit) in sorted(near.items()))
    spec, status = nodepool.get("spec") or {}, nodepool.get("status") or {}
    return [_problem(
        nodepool, code="karpenter.nodepool_limit_reached", severity="error" if full else "warning", cluster=cluster,
        title=f"NodePool {name} " + ("is at its limits" if full else "is near its limits") + f": {shown}",
        detail=(f"Karpenter launches no node that would take NodePool {name} past spec.limits. "
                + (f"{', '.join(full)} {'is' if len(full) == 1 else 'are'} used up: pods that need a new node from "
                   f"it stay Pending with 'all available instance types exceed limits for nodepool'. " if full else
                   "The next large node may not fit. ")
                + "Raise the limit, or free capacity (finished jobs, idle nodes)."),
        evidence=(field(f"nodepool/{name}", "spec.limits", spec.get("limits") or {}),
                  field(f"nodepool/{name}", "status.resources", status.get("resources") or {})),
        labels=_limit_labels(name, near),
    )]


def _limit_labels(name: str, near: dict[str, tuple[float, float]]) -> dict[str, str]:
    """The limit most used up as structured fields (Problem.labels, named as Karpenter's
    karpenter_nodepools_limit labels them), for the message about the cause to say what is used up."""
    resource = max(sorted(near), key=lambda r: near[r][0] / near[r][1])
    used, limit = near[resource]
    return {"nodepool": name, "resource_type": resource, "used": show(resource, used), "limit": show(resource, limit)}


def _conditions(nodepool: dict, *, cluster: str) -> list[Problem]:
    name = name_of(nodepool)
    out = []
    for kind in CONDITIONS:
        cond = condition(nodepool, kind)
        if cond is None or cond.get("status") != "False":
            continue
        reason = cond.get("reason") or "no reason given"
        if kind == "NodeRegistrationHealthy":
            detail = (f"{cond.get('message', '')} Nodes launched for {name} did not register with the cluster, so "
                      "Karpenter keeps launching and deleting instances: check the NodeClass role and its access "
                      "entry, subnets and security groups, the AMI and its user data, and the NodeClaims' "
                      "Registered condition.")
        else:
            detail = (f"{cond.get('message', '')} Karpenter launches nothing from {name} until it is Ready: check "
                      "its NodeClass (kubectl get ec2nodeclass / nodeclass) and the NodePool's validation.")
        out.append(_problem(
            nodepool, code="karpenter.node_registration_failed", severity="error", cluster=cluster,
            title=f"NodePool {name}: {kind} is False ({reason})", detail=detail.strip(),
            evidence=(field(f"nodepool/{name}", f"status.conditions[{kind}]", cond),),
        ))
    return out
