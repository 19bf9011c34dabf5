"""Running training pods a NodePool's consolidation may take down: no ``karpenter.sh/do-not-disrupt``,
on a node of a NodePool that consolidates underutilized nodes.

kubernetes-sigs/karpenter pkg/apis/v1/nodepool.go (Disruption): ``consolidationPolicy``
WhenEmptyOrUnderutilized (the default) and Balanced also replace or delete nodes that still run pods;
WhenEmpty only empty ones; ``consolidateAfter: Never`` turns consolidation off; a budget of ``nodes: 0``
with no schedule, for every reason or for Underutilized, blocks it. pkg/controllers/disruption/
helpers.go: a pod annotated ``karpenter.sh/do-not-disrupt`` keeps its node from voluntary disruption
(``"true"``, or a duration from v1.12). A distributed job loses every rank when one pod goes, so each
exposed job is one problem offering both fixes: annotate the job, or consolidate its NodePool only when
empty.
"""
from __future__ import annotations

from playbooks.analyzers.evidence import field
from playbooks.model import Remediation, Target
from playbooks.problems import Problem
from playbooks.remediations import DO_NOT_DISRUPT, WORKLOAD_KINDS, annotate_do_not_disrupt, nodepool_consolidation
from playbooks.remediations.protection import is_protected
from playbooks.sweep.objects import accelerators, meta, name_of, owned_by_daemonset, workload


def consolidation_exposure(nodepool: dict) -> str | None:
    """Why consolidation may disrupt running pods on this NodePool's nodes; None when it cannot."""
    disruption = (nodepool.get("spec") or {}).get("disruption") or {}
    policy = disruption.get("consolidationPolicy") or "WhenEmptyOrUnderutilized"
    if policy == "WhenEmpty" or str(disruption.get("consolidateAfter", "")) == "Never":
        return None
    for budget in disruption.get("budgets") or [{"nodes": "10%"}]:
        reasons = budget.get("reasons") or ["Underutilized"]
        if str(budget.get("nodes", "10%")) in ("0", "0%") and not budget.get("schedule") and "Underutilized" in reasons:
            return None
    after = disruption.get("consolidateAfter", "0s")
    return f"consolidationPolicy {policy}, consolidateAfter {after}"


def protected(pod: dict, *, karpenter_version: str | None = None) -> bool:
    # As Karpenter reads the annotation: "true", or from v1.12 a duration still running (anything else,
    # "True" and "yes" included, protects nothing): playbooks/remediations/protection.py.
    return is_protected(pod, karpenter_version=karpenter_version)


def exposed_training_pods(pods: list[dict]) -> list[dict]:
    """Running pods of a training workload asking for accelerators, not protected. Bare pods (smoke tests,
    notebooks) and DaemonSet pods are left out: the problem is about jobs."""
    return [p for p in pods
            if (p.get("status") or {}).get("phase") == "Running" and not meta(p).get("deletionTimestamp")
            and accelerators(p) and not owned_by_daemonset(p) and workload(p)[0] != "pod" and not protected(p)]


def exposure_problems(pods: list[dict], *, nodepool_of_node: dict[str, str], nodepools: dict[str, dict],
                      cluster: str) -> list[Problem]:
    """One problem per job with exposed pods; ``nodepool_of_node`` maps nodes to their NodePool, and
    only NodePools in ``nodepools`` whose consolidation can disrupt count."""
    jobs: dict[tuple[str, str, str], dict[str, list[dict]]] = {}
    for pod in exposed_training_pods(pods):
        pool = nodepool_of_node.get(str((pod.get("spec") or {}).get("nodeName") or ""))
        if pool is None or pool not in nodepools or consolidation_exposure(nodepools[pool]) is None:
            continue
        kind, name = workload(pod)
        jobs.setdefault((str(meta(pod).get("namespace") or ""), kind, name), {}).setdefault(pool, []).append(pod)
    problems = []
    for (namespace, kind, name), by_pool in sorted(jobs.items()):
        pools = sorted(by_pool)
        count = sum(len(p) for p in by_pool.values())
        remediations: list[Remediation] = []
        if kind in WORKLOAD_KINDS:
            remediations.append(annotate_do_not_disrupt(kind=kind, namespace=namespace, name=name))
        remediations += [nodepool_consolidation(nodepool=pool, consolidate_after="10m") for pool in pools]
        pods_named = [name_of(p) for pool in pools for p in by_pool[pool]]
        evidence = [field(f"nodepool/{pool}", "spec.disruption",
                          (nodepools[pool].get("spec") or {}).get("disruption") or {}) for pool in pools]
        evidence += [field(f"pod/{namespace}/{pod}", f"metadata.annotations[{DO_NOT_DISRUPT}]", "absent")
                     for pod in pods_named[:3]]
        why = "; ".join(f"{pool}: {consolidation_exposure(nodepools[pool])}" for pool in pools)
        problems.append(Problem(
            code="karpenter.disruption", severity="warning", target=Target(kind=kind, name=name, namespace=namespace),
            cluster=cluster, group=f"{kind}/{namespace}/{name}", nodepool=pools[0], remediations=tuple(remediations),
            title=(f"{kind} {namespace}/{name}: {count} running GPU pod{'s' if count != 1 else ''} without "
                   f"{DO_NOT_DISRUPT} on NodePool {', '.join(pools)}, which consolidates underutilized nodes"),
            detail=(f"NodePool {why}. Karpenter may drain a node that still runs this job when its pods look small "
                    f"enough to fit elsewhere; a distributed job loses every rank when one pod goes. Annotate the "
                    f"job's pods with {DO_NOT_DISRUPT}: \"true\", or consolidate the NodePool only when empty "
                    f"(WhenEmpty with a consolidateAfter)."),
            evidence=tuple(evidence),
        ))
    return problems
