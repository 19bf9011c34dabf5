"""Nodes and NodePools as targets: NotReady nodes, NodePools at their limits, failing registration,
and GPU NodePools that consolidate under running training jobs."""
from __future__ import annotations

from playbooks.analyzers import evidence as ev
from playbooks.facts import Facts
from playbooks.fixes import render_fix
from playbooks.model import Finding
from playbooks.remediations import merge_patch, nodepool_consolidation

GPU = "nvidia.com/gpu"


def analyze_not_ready(facts: Facts):
    for name, node in facts.nodes.items():
        if node is None:
            continue
        ready = next((c for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), None)
        if ready is None or ready.get("status") == "True":
            continue
        taints = [t.get("key") for t in (node.get("spec") or {}).get("taints") or []]
        joining = "karpenter.sh/unregistered" in taints
        own = facts.target.kind == "node" or any(p.node_name == name and facts.is_target_pod(p) for p in facts.pods)
        yield Finding(
            code="node.not_ready", severity="info" if joining else ("error" if own else "warning"), confidence="high",
            title=f"Node {name} is NotReady ({ready.get('reason', 'no reason given')})",
            detail=(f"{name} reports Ready={ready.get('status')}: {ready.get('message', '')} "
                    + ("It is still joining the cluster (karpenter.sh/unregistered)." if joining else
                       "Pods on it get evicted after the not-ready toleration (300 s by default). Common causes on EKS: "
                       "the VPC CNI cannot initialise (missing IAM permissions: UnauthorizedOperation in ipamd), "
                       "kubelet cannot reach the API server, or disk / memory pressure.")).strip(),
            evidence=[ev.field(f"node/{name}", "status.conditions[Ready]", ready)],
        )


def analyze_nodepool(facts: Facts):
    if facts.target.kind != "nodepool":
        return
    nodepool = facts.nodepools.get(facts.target.name)
    if nodepool is None:
        return
    name = facts.target.name
    yield from _limits(name, nodepool)
    yield from _conditions(name, nodepool)
    yield from _consolidation(name, nodepool)


def _limits(name: str, nodepool: dict):
    limits = (nodepool.get("spec") or {}).get("limits") or {}
    used = (nodepool.get("status") or {}).get("resources") or {}
    try:
        limit, in_use = int(str(limits.get(GPU, ""))), int(str(used.get(GPU, "0")))
    except ValueError:
        return
    if in_use < 0.9 * limit:
        return
    at_limit = in_use >= limit
    fix = render_fix("nodepool_limit.yaml.j2", nodepool=name, limits={**limits, GPU: str(limit * 2)}, used=in_use, limit=limit)
    yield Finding(
        code="karpenter.nodepool_limit_reached", severity="warning" if at_limit else "info", confidence="high",
        title=f"NodePool {name} uses {in_use} of its {limit} {GPU}" + (": no new GPU node can launch" if at_limit else ""),
        detail=(f"Karpenter launches no node that would take NodePool {name} past spec.limits ({GPU}: {limit}); "
                f"{in_use} are in use. Pods that need a new node from it stay Pending with 'all available instance "
                f"types exceed limits for nodepool'."),
        evidence=[ev.field(f"nodepool/{name}", "spec.limits", limits), ev.field(f"nodepool/{name}", "status.resources", used)],
        fix=fix, labels={"nodepool": name, "resource_type": GPU, "used": str(in_use), "limit": str(limit)},
    )


def _conditions(name: str, nodepool: dict):
    for cond in (nodepool.get("status") or {}).get("conditions") or []:
        if cond.get("type") in ("NodeRegistrationHealthy", "NodeClassReady") and cond.get("status") == "False":
            yield Finding(
                code="karpenter.node_registration_failed", severity="error", confidence="high",
                title=f"NodePool {name}: {cond['type']} is False ({cond.get('reason', '')})",
                detail=(f"{cond.get('message', '')} Nodes launched for {name} did not register with the cluster "
                        f"(or its NodeClass is not ready): check the NodeClass role, subnets and security groups, "
                        f"the AMI, and the NodeClaims' Registered condition.").strip(),
                evidence=[ev.field(f"nodepool/{name}", f"status.conditions[{cond['type']}]", cond)],
            )


def _consolidation(name: str, nodepool: dict):
    spec = nodepool.get("spec") or {}
    policy = (spec.get("disruption") or {}).get("consolidationPolicy", "WhenEmptyOrUnderutilized")
    template = (spec.get("template") or {}).get("spec") or {}
    gpu_pool = GPU in (spec.get("limits") or {}) or any(t.get("key") == GPU for t in template.get("taints") or []) \
        or any("gpu" in r.get("key", "") for r in template.get("requirements") or [])
    if not gpu_pool or policy == "WhenEmpty":
        return
    remediation = nodepool_consolidation(nodepool=name, consolidate_after="10m")
    fix = render_fix("training_disruption.yaml.j2", patches=[merge_patch(remediation)], owner=f"training jobs on {name}", nodepool=name)
    yield Finding(
        code="karpenter.disruption", severity="warning", confidence="medium",
        title=f"GPU NodePool {name} consolidates underutilized nodes ({policy})",
        detail=(f"With consolidationPolicy {policy}, Karpenter may drain a GPU node that still runs training pods "
                f"when their requests look small enough to fit elsewhere; distributed jobs lose every rank when one "
                f"pod dies. Use WhenEmpty with a consolidateAfter for training pools, or annotate training pods with "
                f"karpenter.sh/do-not-disrupt."),
        evidence=[ev.field(f"nodepool/{name}", "spec.disruption", spec.get("disruption") or {})],
        fix=fix, remediations=[remediation],
    )
