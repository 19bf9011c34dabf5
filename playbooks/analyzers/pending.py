"""Why a pod is Pending: each NodePool checked the way Karpenter checks it.

For every NodePool: do the pod's node requirements meet the template's labels and requirements, does
the pod tolerate its taints, which instance types (from EC2) are allowed, which of them fit the GPU and
EFA requests, which are offered in the zones the pod allows, and do the NodePool's limits leave room.
The NodePool the pod asks for (or that got furthest) explains the failure; Karpenter's and the
scheduler's own messages are quoted as evidence.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from playbooks.analyzers import evidence as ev
from playbooks.analyzers.fixes import owner_patch
from playbooks.facts import Facts, PodFacts
from playbooks.gather_ec2 import considered_nodepools
from playbooks.fixes import render_fix
from playbooks.model import Evidence, Finding
from playbooks.requirements import (
    AUTO_PREFIX, OSS_PREFIX, Requirement, instance_derived, intersects, is_auto_mode, nodepool_requirements,
    pod_requirements, type_allowed,
)

GPU = "nvidia.com/gpu"
EFA = "vpc.amazonaws.com/efa"
ZONE = "topology.kubernetes.io/zone"


@dataclass
class Problem:
    code: str
    title: str
    detail: str
    evidence: list[Evidence] = field(default_factory=list)
    fix: object = None
    weight: int = 1  # a NodePool with no GPU types at all is clearly not the one meant: weight 10


@dataclass
class Verdict:
    nodepool: str
    problems: list[Problem] = field(default_factory=list)
    verified: bool = True  # False: EC2 facts were missing, instance-type checks not made

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def score(self) -> int:
        """How far the NodePool is from serving the pod; the closest one is the pool that was meant."""
        return sum(p.weight for p in self.problems)


def analyze(facts: Facts):
    """Findings for pending pods. Also records, for the signals analyzer, which pods' scheduler and
    Karpenter messages are explained here (``pending_explained``) or are noise because a NodePool can
    provision for them (``pending_ok``)."""
    explained: set[str] = facts.cache.setdefault("pending_explained", set())
    provisionable: set[str] = facts.cache.setdefault("pending_ok", set())
    outcome: dict[tuple, str] = {}
    for pod in facts.pending_pods():
        shape = _shape(pod)
        if shape not in outcome:  # replicas of one job share one spec: one analysis is enough
            findings = list(_pending_pod(pod, facts))
            outcome[shape] = "explained" if findings else ("ok" if _verified_ok(pod, facts) else "")
            yield from findings
        if outcome[shape] == "explained":
            explained.add(pod.name)
        elif outcome[shape] == "ok":
            provisionable.add(pod.name)


def _verified_ok(pod: PodFacts, facts: Facts) -> bool:
    names = [n for n in considered_nodepools(pod, facts) if n in facts.nodepools]
    return any(v.ok and v.verified for v in (_evaluate(pod, facts.nodepools[n], facts) for n in names))


def _shape(pod: PodFacts) -> tuple:
    spec = pod.pod.get("spec") or {}
    return (str(spec.get("nodeSelector")), str(spec.get("affinity", {}).get("nodeAffinity")),
            str(spec.get("tolerations")), pod.count(GPU), pod.count(EFA))


def _pending_pod(pod: PodFacts, facts: Facts):
    karpenter_evidence = _karpenter_evidence(pod, facts)
    selected = (pod.pod.get("spec", {}).get("nodeSelector") or {}).get("karpenter.sh/nodepool")
    if selected and selected not in facts.nodepools:
        yield Finding(
            code="scheduling.node_selector_mismatch", severity="error", confidence="high",
            title=f"{pod.name} asks for NodePool {selected}, which does not exist",
            detail=(f"The pod's nodeSelector karpenter.sh/nodepool={selected} names no NodePool in this cluster "
                    f"(NodePools: {', '.join(sorted(facts.nodepools)) or 'none'}), so no node can ever match."),
            evidence=[ev.field(pod.ref, "spec.nodeSelector", pod.pod["spec"]["nodeSelector"]), *karpenter_evidence],
        )
        return
    verdicts = [_evaluate(pod, facts.nodepools[name], facts) for name in considered_nodepools(pod, facts)]
    if not verdicts or any(v.ok for v in verdicts):
        return  # some NodePool can launch a node for this pod: it is pending for another reason
    best = min(v.score for v in verdicts)
    for verdict in (v for v in verdicts if v.score == best):
        for problem in verdict.problems:
            yield Finding(
                code=problem.code, severity="error", confidence="high" if verdict.verified else "medium",
                title=problem.title, detail=problem.detail,
                evidence=problem.evidence + karpenter_evidence, fix=problem.fix,
            )


def _karpenter_evidence(pod: PodFacts, facts: Facts) -> list[Evidence]:
    out = ev.events(pod, reasons=("FailedScheduling",), components=("karpenter", "eks-auto-mode"))
    out += ev.events(pod, reasons=("FailedScheduling",), components=("default-scheduler",))[-1:]
    for line in facts.karpenter_log or []:
        if pod.name in line and ("could not schedule" in line.lower() or "error" in line.lower()):
            out.append(Evidence(source=facts.karpenter_source, text=ev.trim(line)))
    return out


# -- evaluating one NodePool -----------------------------------------------------------------------

def _evaluate(pod: PodFacts, nodepool: dict, facts: Facts) -> Verdict:
    """Every reason this NodePool cannot serve the pod (not only the first), so pools can be compared."""
    name = nodepool["metadata"]["name"]
    np_reqs = nodepool_requirements(nodepool)
    auto = is_auto_mode(nodepool)
    pod_reqs = pod_requirements(pod.pod)
    problems = []
    usable = []
    for req in pod_reqs:
        problem = _label_problem(pod, req, np_reqs, nodepool, auto)
        if problem:
            problem.weight = 2
            problems.append(problem)
        else:
            usable.append(req)
    taint = _untolerated(pod, nodepool)
    if taint:
        problems.append(taint)
    verified = facts.ec2.unavailable is None and name in facts.ec2.candidates
    if verified:
        problem = _instance_stages(pod, nodepool, usable, facts)
        if problem:
            problems.append(problem)
    limit = _limit_problem(pod, nodepool, facts)
    if limit:
        problems.append(limit)
    return Verdict(name, problems, verified=verified)


def _label_problem(pod: PodFacts, req: Requirement, np_reqs: dict, nodepool: dict, auto: bool) -> Problem | None:
    name = nodepool["metadata"]["name"]
    key = req.key
    if key in np_reqs:
        if intersects(req, np_reqs[key]):
            return None
        allowed = "; ".join(r.describe() for r in np_reqs[key])
        return _selector_problem(
            pod, nodepool, req,
            title=f"{pod.name} requires {req.describe()}, but NodePool {name} only allows {allowed}",
            detail=(f"Karpenter rejects NodePool {name} with \"incompatible requirements, key {key}\": the pod's "
                    f"{req.describe()} and the NodePool's {allowed} have no value in common."),
            np_evidence=ev.field(f"nodepool/{name}", "spec.template.spec.requirements", [r.describe() for r in np_reqs[key]]),
        )
    if instance_derived(key, auto_mode=auto):
        return None
    other = key.replace(OSS_PREFIX, AUTO_PREFIX) if key.startswith(OSS_PREFIX) else key.replace(AUTO_PREFIX, OSS_PREFIX)
    if auto and key.startswith(OSS_PREFIX):
        hint = (f" NodePool {name} is an EKS Auto Mode NodePool: its nodes carry {other}, never {key} "
                f"(open-source Karpenter's prefix). Use {other}.")
    elif not auto and key.startswith(AUTO_PREFIX):
        hint = f" NodePool {name} runs on open-source Karpenter, whose nodes carry {other}, not {key}. Use {other}."
    else:
        hint = (" Add the label to the NodePool's spec.template.metadata.labels (not spec.template.spec), or drop "
                "it from the pod.")
        other = None
    return _selector_problem(
        pod, nodepool, req,
        title=f"{pod.name} selects label {key}, which no node of NodePool {name} will have",
        detail=f"Karpenter answers 'label \"{key}\" does not have known values' for NodePool {name}.{hint}",
        np_evidence=ev.field(f"nodepool/{name}", "spec.template", {"labels": (nodepool["spec"]["template"].get("metadata") or {}).get("labels") or {},
                                                                  "requirementKeys": sorted(np_reqs)}),
        replacement_key=other,
    )


def _selector_problem(pod: PodFacts, nodepool: dict, req: Requirement, *, title: str, detail: str,
                      np_evidence: Evidence, replacement_key: str | None = None) -> Problem:
    selector = dict(pod.pod["spec"].get("nodeSelector") or {})
    new = dict(selector)
    if req.key in new:
        value = new.pop(req.key)
        if replacement_key:
            new[replacement_key] = value
        else:
            allowed = _allowed_values(nodepool, req.key)
            if allowed:
                new[req.key] = allowed[0]
    patch = {req.key: None, **{k: v for k, v in new.items() if selector.get(k) != v}}
    fix = render_fix(
        "node_selector.yaml.j2", **owner_patch(pod, {"nodeSelector": patch}), nodepool=nodepool["metadata"]["name"],
    )
    source = [ev.field(pod.ref, "spec.nodeSelector", selector)] if selector else [
        ev.field(pod.ref, "spec.affinity.nodeAffinity", pod.pod["spec"].get("affinity", {}).get("nodeAffinity"))]
    return Problem("scheduling.node_selector_mismatch", title, detail, source + [np_evidence], fix)


def _allowed_values(nodepool: dict, key: str) -> list[str]:
    for req in nodepool_requirements(nodepool).get(key, []):
        if req.operator == "In":
            return list(req.values)
    return []


def _untolerated(pod: PodFacts, nodepool: dict) -> Problem | None:
    name = nodepool["metadata"]["name"]
    taints = ((nodepool.get("spec") or {}).get("template") or {}).get("spec", {}).get("taints") or []
    tolerations = (pod.pod.get("spec") or {}).get("tolerations") or []
    missing = [t for t in taints if t.get("effect") in ("NoSchedule", "NoExecute") and not _tolerated(t, tolerations)]
    if not missing:
        return None
    taint = missing[0]
    shown = f"{taint['key']}{'=' + taint['value'] if taint.get('value') else ''}:{taint['effect']}"
    fix = render_fix("toleration.yaml.j2", **owner_patch(pod, {"tolerations": tolerations + [_toleration_for(t) for t in missing]}),
                     taint=shown)
    return Problem(
        "scheduling.untolerated_taint",
        f"{pod.name} does not tolerate taint {shown} of NodePool {name}",
        (f"Every node NodePool {name} creates carries the taint {shown}; the pod has no matching toleration, so "
         f"Karpenter will not launch a node for it there ('did not tolerate taint') and the scheduler reports "
         f"'had untolerated taint'. Add the toleration to the pod (or its job's pod template)."),
        [ev.field(f"nodepool/{name}", "spec.template.spec.taints", taints),
         ev.field(pod.ref, "spec.tolerations", tolerations)],
        fix,
    )


def _tolerated(taint: dict, tolerations: list[dict]) -> bool:
    for tol in tolerations:
        if tol.get("effect") and tol["effect"] != taint.get("effect"):
            continue
        if tol.get("operator") == "Exists" and (not tol.get("key") or tol["key"] == taint.get("key")):
            return True
        if tol.get("key") == taint.get("key") and str(tol.get("value", "")) == str(taint.get("value", "")):
            return True
    return False


def _toleration_for(taint: dict) -> dict:
    return {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}


def _instance_stages(pod: PodFacts, nodepool: dict, pod_reqs: list[Requirement], facts: Facts) -> Problem | None:
    name = nodepool["metadata"]["name"]
    prefix = (AUTO_PREFIX if is_auto_mode(nodepool) else OSS_PREFIX).rstrip("/")
    allowed = facts.ec2.candidates.get(name, {})
    np_evidence = ev.field(f"nodepool/{name}", "spec.template.spec.requirements",
                           [r.describe() for rs in nodepool_requirements(nodepool).values() for r in rs
                            if r.key != "karpenter.sh/nodepool"])
    if not allowed:
        return Problem(
            "karpenter.no_instance_type", f"NodePool {name}'s requirements allow no EC2 instance type",
            f"Karpenter reports 'nodepool requirements filtered out all available instance types' for {name}.",
            [np_evidence], weight=10,
        )
    gpus, efas = pod.count(GPU), pod.count(EFA)
    if gpus and not any(i.gpu_count for i in allowed.values()):
        return Problem(
            "karpenter.no_instance_type", f"NodePool {name} allows no GPU instance type, and {pod.name} asks for {gpus} {GPU}",
            f"NodePool {name} allows only instance types without GPUs ({_list(allowed)}).", [np_evidence], weight=10,
        )
    types = {t: i for t, i in allowed.items() if type_allowed(i.karpenter_labels(prefix), pod_reqs)}
    if not types:
        wanted = [r for r in pod_reqs if instance_derived(r.key, auto_mode=is_auto_mode(nodepool)) and r.key != ZONE]
        shown = "; ".join(r.describe() for r in wanted) or "its requirements"
        req = wanted[0] if wanted else Requirement("node.kubernetes.io/instance-type", "In", ())
        problem = _selector_problem(
            pod, nodepool, req,
            title=f"{pod.name} requires {shown}, which NodePool {name} does not allow",
            detail=(f"NodePool {name} allows {_list(allowed)}; none of them meets the pod's {shown}. Karpenter "
                    f"answers 'incompatible requirements'. Either select an allowed type or add the type to the NodePool."),
            np_evidence=np_evidence,
        )
        problem.evidence.append(_ec2_evidence(allowed.values()))
        problem.weight = 2
        return problem
    if efas and not any(i.efa_supported for i in types.values()):
        return _efa_problem(pod, nodepool, types, facts)
    fits = {t: i for t, i in types.items() if i.gpu_count >= gpus and (not efas or i.max_efa_interfaces >= efas)}
    if not fits:
        return _too_big(pod, nodepool, types, gpus, efas)
    zones = _allowed_zones(pod_reqs, nodepool)
    if zones:
        offered = {t: facts.ec2.zones.get(t, frozenset()) for t in fits}
        if not any(z & zones for z in offered.values()):
            return _offering_problem(pod, nodepool, offered, zones, facts)
    return None


def _list(types) -> str:
    names = sorted(types)
    return ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")


def _ec2_evidence(infos) -> Evidence:
    parts = [f"{i.name}: {i.gpu_count}x {i.gpu_name or 'no GPU'}"
             + (f" {round((i.gpu_memory_mib or 0) / 1024)} GiB" if i.gpu_count else "")
             + (f", EFA x{i.max_efa_interfaces}" if i.efa_supported else ", no EFA")
             for i in sorted(infos, key=lambda i: i.name)[:8]]
    return Evidence(source="ec2 DescribeInstanceTypes", text="; ".join(parts))


def _too_big(pod: PodFacts, nodepool: dict, types: dict, gpus: int, efas: int) -> Problem:
    name = nodepool["metadata"]["name"]
    biggest = max(types.values(), key=lambda i: (i.gpu_count, i.max_efa_interfaces))
    per_node = biggest.gpu_count
    if gpus > per_node:
        title = f"{pod.name} asks for {gpus} {GPU}; the largest instance type NodePool {name} allows has {per_node}"
        detail = (f"No instance type that NodePool {name} allows ({_list(types)}) has {gpus} GPUs: the largest, "
                  f"{biggest.name}, has {per_node}. Karpenter answers 'no instance type has enough resources'. "
                  f"A pod cannot span nodes: request at most {per_node} GPUs per pod and run "
                  f"{-(-gpus // per_node)} pods (for example torchrun --nnodes {-(-gpus // per_node)} --nproc_per_node {per_node}).")
    else:
        title = f"{pod.name} asks for {efas} {EFA}; no instance type NodePool {name} allows has that many EFA interfaces"
        detail = (f"The most EFA interfaces among {_list(types)} is {biggest.max_efa_interfaces} ({biggest.name}). "
                  f"Request at most that many vpc.amazonaws.com/efa per pod.")
    fix = render_fix("gpu_request.yaml.j2",
                     **owner_patch(pod, {"containers": _resized(pod, gpus=min(gpus, per_node), efas=min(efas, biggest.max_efa_interfaces))}),
                     requested=gpus, per_node=per_node, nodes=-(-gpus // max(per_node, 1)), instance_type=biggest.name)
    return Problem("karpenter.no_instance_type", title, detail,
                   [ev.field(pod.ref, "spec.containers[].resources", _resources(pod)), _ec2_evidence(types.values())], fix)


def _resources(pod: PodFacts) -> dict:
    return {c["name"]: c.get("resources") or {} for c in pod.pod["spec"].get("containers") or []}


def _resized(pod: PodFacts, *, gpus: int, efas: int) -> list[dict]:
    """Whole containers (a merge patch replaces lists) with GPU and EFA counts that fit one node."""
    out = []
    for container in pod.pod["spec"].get("containers") or []:
        container = copy.deepcopy(container)
        for section in ("requests", "limits"):
            values = (container.get("resources") or {}).get(section) or {}
            if GPU in values:
                values[GPU] = str(gpus)
            if EFA in values:
                values[EFA] = str(efas)
        out.append(container)
    return out


def _efa_problem(pod: PodFacts, nodepool: dict, types: dict, facts: Facts) -> Problem:
    name = nodepool["metadata"]["name"]
    plugin = [d for d in facts.device_plugins if "efa" in d["metadata"]["name"]]
    detail = (f"The pod requests {pod.count(EFA)} {EFA}, which only the EFA device plugin advertises, and only on "
              f"instance types with EFA. NodePool {name} allows {_list(types)}, none of which supports EFA, so no "
              f"node it creates will ever offer the resource ('Insufficient {EFA}'). Allow EFA-capable types "
              f"(p4d.24xlarge, p5.48xlarge, g5.48xlarge, ...) in the NodePool, or drop the EFA request to train over ENA.")
    if not plugin:
        detail += " No aws-efa-k8s-device-plugin DaemonSet was found in the cluster either."
    fix = render_fix("efa_nodepool.yaml.j2", nodepool=name,
                     requirements=_efa_requirements(nodepool), instance_types=["p4d.24xlarge", "p5.48xlarge"])
    evidence = [ev.field(pod.ref, "spec.containers[].resources", _resources(pod)), _ec2_evidence(types.values())]
    evidence += ev.events(pod, reasons=("FailedScheduling",), components=("default-scheduler",))[-1:]
    return Problem("efa.resource_unavailable",
                   f"{pod.name} requests {EFA}, but NodePool {name} allows only instance types without EFA", detail,
                   evidence, fix)


def _efa_requirements(nodepool: dict) -> list[dict]:
    raw = (nodepool["spec"]["template"]["spec"].get("requirements") or [])
    keep = [r for r in raw if r["key"] not in ("node.kubernetes.io/instance-type",) and not r["key"].endswith(
        ("instance-family", "instance-category", "instance-size", "instance-gpu-name"))]
    return keep + [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p4d.24xlarge", "p5.48xlarge"]}]


def _allowed_zones(pod_reqs: list[Requirement], nodepool: dict) -> set[str]:
    zones: set[str] | None = None
    for req in pod_reqs + nodepool_requirements(nodepool).get(ZONE, []):
        if req.key == ZONE and req.operator == "In":
            zones = set(req.values) if zones is None else zones & set(req.values)
    return zones or set()


def _offering_problem(pod: PodFacts, nodepool: dict, offered: dict, zones: set[str], facts: Facts) -> Problem:
    name = nodepool["metadata"]["name"]
    where = "; ".join(f"{t} offered in {', '.join(sorted(z)) or 'no zone of ' + (facts.ec2.region or 'this region')}"
                      for t, z in sorted(offered.items()))
    wanted = ", ".join(sorted(zones))
    good = sorted({z for zs in offered.values() for z in zs})
    detail = (f"The pod may only run in {wanted}, but none of the instance types NodePool {name} allows for it is "
              f"offered there ({where}). Karpenter answers 'no instance type which had enough resources and the "
              f"required offering met the scheduling requirements'. Allow the zones where the type is offered"
              f"{' (' + ', '.join(good) + ')' if good else ''}, or allow instance types offered in {wanted}.")
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": good}]}]}}}
    fix = render_fix("zone.yaml.j2", **owner_patch(pod, {"nodeSelector": {ZONE: None}, "affinity": affinity}),
                     zones=good, pinned=wanted)
    evidence = [ev.field(pod.ref, "spec.nodeSelector", pod.pod["spec"].get("nodeSelector") or {}),
                Evidence(source="ec2 DescribeInstanceTypeOfferings", text=where)]
    return Problem("karpenter.offering_unavailable_in_zone",
                   f"{_list(offered)} {'is' if len(offered) == 1 else 'are'} not offered in {wanted}, where {pod.name} is pinned",
                   detail, evidence, fix)


def _limit_problem(pod: PodFacts, nodepool: dict, facts: Facts) -> Problem | None:
    name = nodepool["metadata"]["name"]
    limit = str(((nodepool.get("spec") or {}).get("limits") or {}).get(GPU, ""))
    used = str(((nodepool.get("status") or {}).get("resources") or {}).get(GPU, "0"))
    want = pod.count(GPU)
    if not limit or not want:
        return None
    try:
        limit_n, used_n = int(limit), int(used)
    except ValueError:
        return None
    smallest = min((i.gpu_count for i in facts.ec2.candidates.get(name, {}).values() if i.gpu_count >= want), default=want)
    if used_n + smallest <= limit_n:
        return None
    fix = render_fix("nodepool_limit.yaml.j2", nodepool=name, limits={**nodepool["spec"]["limits"], GPU: str(max(limit_n * 2, used_n + smallest))},
                     used=used_n, limit=limit_n)
    return Problem(
        "karpenter.nodepool_limit_reached",
        f"NodePool {name} is at its {GPU} limit ({used_n}/{limit_n}); a new node needs {smallest} more",
        (f"NodePool {name} limits {GPU} to {limit_n} and its nodes already hold {used_n}. A node for this pod would "
         f"add at least {smallest} GPUs, so Karpenter answers 'all available instance types exceed limits for "
         f"nodepool'. Raise spec.limits, free GPUs (finished jobs, idle nodes), or let the pod use another NodePool."),
        [ev.field(f"nodepool/{name}", "spec.limits", nodepool["spec"].get("limits")),
         ev.field(f"nodepool/{name}", "status.resources", (nodepool.get("status") or {}).get("resources") or {})],
        fix,
    )
