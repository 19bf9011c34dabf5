"""Pods that wait on purpose (gated, suspended) or for a node already on its way.

Both are answers to "why is my job pending?" that are not failures: the scheduler never sees a gated
pod, and a pod Karpenter has nominated a NodeClaim for waits until that node joins. Recording the
second in ``facts.cache["on_its_way"]`` lets the signals analyzer treat the scheduler's "no existing
node fits" as the expected state rather than the problem.
"""
from __future__ import annotations

from playbooks.analyzers import evidence as ev
from playbooks.analyzers.evidence import event_component, event_time
from playbooks.analyzers.initializing import INITIALIZATION_GRACE_S, initializing_too_long
from playbooks.analyzers.scan import KARPENTER_COMPONENTS
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.karpenter.device_plugin_evidence import device_plugin_failed
from playbooks.karpenter.nodeclaim import (
    LAUNCH_TTL_S, REGISTRATION_TTL_S, age_seconds, conditions as claim_conditions, nominated_claims, stage,
)
from playbooks.model import Evidence, Finding

KUEUE_GATE = "kueue.x-k8s.io/admission"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def analyze(facts: Facts):
    gated: set[str] = facts.cache.setdefault("gated", set())
    on_its_way: dict = facts.cache.setdefault("on_its_way", {})
    suspended = _suspended_owner(facts)
    if suspended is not None:
        yield suspended
        gated.update(p.name for p in facts.pods)
    waiting: dict[str, list[tuple[PodFacts, dict]]] = {}  # NodeClaim -> pods nominated for it
    for pod in facts.pending_pods():
        gates = [g.get("name", "") for g in (pod.pod.get("spec") or {}).get("schedulingGates") or []]
        if gates:
            gated.add(pod.name)
            yield _gated_pod(pod, gates, facts)
            continue
        nominated = _nomination(pod)
        if nominated is not None:
            waiting.setdefault(nominated[1], []).append((pod, nominated[0]))
    for claim, pods in waiting.items():
        pod, nominated = pods[0]
        finding = _provisioning(pod, nominated, claim, facts, others=len(pods) - 1)
        if finding is not None:
            for each, event in pods:
                on_its_way[each.name] = event_time(event)
            yield finding


# -- held on purpose -------------------------------------------------------------------------------

def _suspended_owner(facts: Facts) -> Finding | None:
    """A suspended PyTorchJob (runPolicy.suspend) or batch Job (spec.suspend) creates no pods."""
    owner = facts.owner
    if owner is None:
        return None
    spec = owner.get("spec") or {}
    flag = (spec.get("runPolicy") or {}).get("suspend") if facts.owner_kind == "pytorchjob" else spec.get("suspend")
    conditions = [c for c in (owner.get("status") or {}).get("conditions") or []
                  if c.get("type") == "Suspended" and str(c.get("status")) == "True"]
    if not flag and not conditions:
        return None
    meta = owner.get("metadata") or {}
    ref = f"{facts.owner_kind}/{meta.get('namespace', '')}/{meta.get('name', '')}"
    path = "spec.runPolicy.suspend" if facts.owner_kind == "pytorchjob" else "spec.suspend"
    queue = (meta.get("labels") or {}).get(KUEUE_QUEUE_LABEL)
    evidence = [ev.field(ref, path, bool(flag))]
    evidence += [Evidence(source=f"{ref} status.conditions", text=f"Suspended True {c.get('reason', '')}: "
                          f"{c.get('message', '')}".strip()) for c in conditions[:1]]
    if queue:
        evidence.append(ev.field(ref, f"metadata.labels[{KUEUE_QUEUE_LABEL}]", queue))
        why = (f"Kueue manages it through LocalQueue {queue} and keeps it suspended until its Workload is admitted "
               f"(QuotaReserved): the queue's ClusterQueue has no quota free for it yet.")
    else:
        why = "Someone (or a controller) suspended it; it starts when the suspend flag is set back to false."
    return Finding(
        code="scheduling.gated", severity="warning", confidence="high",
        title=f"{meta.get('name', 'The job')} is suspended: it creates no pods until it is resumed",
        detail=f"The {facts.owner_kind} has {path}: true, so nothing is scheduled and no node is launched. {why}",
        evidence=evidence,
        fix=render_fix("generic/scheduling.gated.sh.j2", **({"namespace": meta["namespace"]} if meta.get("namespace") else {})),
    )


def _gated_pod(pod: PodFacts, gates: list[str], facts: Facts) -> Finding:
    evidence = [ev.field(pod.ref, "spec.schedulingGates", gates)]
    condition = next((c for c in (pod.pod.get("status") or {}).get("conditions") or []
                      if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"), None)
    if condition is not None:
        evidence.append(Evidence(source=f"{pod.ref} status.conditions[PodScheduled]",
                                 text=f"SchedulingGated: {condition.get('message', '')}".strip()))
    if KUEUE_GATE in gates:
        queue = pod.labels.get(KUEUE_QUEUE_LABEL) or ((facts.owner or {}).get("metadata", {}).get("labels") or {}).get(KUEUE_QUEUE_LABEL)
        why = (f"The gate {KUEUE_GATE} is Kueue's: it removes it when the pod's Workload is admitted"
               f"{' from LocalQueue ' + queue if queue else ''}. Until then the ClusterQueue has no quota for it.")
    else:
        why = ("Each gate is removed by the controller that added it; until every gate is gone the scheduler does "
               "not consider the pod and Karpenter does not launch a node for it.")
    names = ", ".join(gates)
    return Finding(
        code="scheduling.gated", severity="warning", confidence="high",
        title=f"{pod.name} is held by scheduling gate{'s' if len(gates) > 1 else ''} {names}",
        detail=f"The pod has spec.schedulingGates ({names}), so it is not scheduled yet on purpose; nodes and "
               f"NodePools do not matter until then. {why}",
        evidence=evidence,
        fix=render_fix("generic/scheduling.gated.sh.j2", pod=pod.name, namespace=pod.namespace, gate=gates[0]),
    )


# -- a node on its way -----------------------------------------------------------------------------

def _nomination(pod: PodFacts) -> tuple[dict, str] | None:
    """The latest Nominated event Karpenter (or EKS Auto Mode) recorded for the pod, and its NodeClaim."""
    found: list[tuple[dict, str]] = []
    for event in pod.events:
        if event.get("reason") != "Nominated" or not any(c in event_component(event) for c in KARPENTER_COMPONENTS):
            continue
        claims = nominated_claims(event.get("message") or event.get("note") or "")
        if claims:
            found.append((event, claims[0]))
    return max(found, key=lambda item: event_time(item[0])) if found else None


def _provisioning(pod: PodFacts, event: dict, name: str, facts: Facts, *, others: int = 0) -> Finding | None:
    claim = facts.nodeclaims.get(name)
    evidence = [ev.from_event(pod.ref, event)]
    if claim is None and "nodeclaims" not in facts.unread:
        return None  # the NodeClaim is gone (deleted after a failed launch): nothing is on its way
    if claim is None:
        return Finding(
            code="karpenter.provisioning", severity="info", confidence="medium",
            title=f"Karpenter nominated NodeClaim {name} for {pod.name}; its progress could not be read",
            detail="Karpenter is launching a node for the pod. NodeClaims could not be read, so how far the launch "
                   "got is not known: see the gaps below.",
            evidence=evidence, fix=render_fix("generic/karpenter.provisioning.sh.j2", nodeclaim=name),
        )
    conditions = claim_conditions(claim)
    labels = (claim.get("metadata") or {}).get("labels") or {}
    kind = labels.get("node.kubernetes.io/instance-type") or ""
    age = age_seconds(claim)
    state, limit = stage(claim)
    if state == "ready" or device_plugin_failed(claim, facts):
        # joined, or stuck initializing with its device plugin shown missing or failing
        # (karpenter/device_plugin_evidence.py): that is the problem, not a node to wait for
        return None
    evidence += ev.events(pod, reasons=("FailedScheduling",), components=("default-scheduler",))[-1:]
    evidence.append(ev.field(f"nodeclaim/{name}", "status.conditions",
                             {t: f"{c.get('status')}{' ' + c['reason'] if c.get('reason') else ''}"
                              for t, c in conditions.items() if t in ("Launched", "Registered", "Initialized", "Ready")}))
    overdue = initializing_too_long(claim)
    late = overdue or (limit is not None and age is not None and age > limit)
    took = f" for {_duration(age)}" if age is not None else ""
    what = f"NodeClaim {name}{' (' + kind + ')' if kind else ''}"
    if overdue:
        initialized = conditions.get("Initialized") or {}
        why = ": ".join(p for p in (initialized.get("reason"), initialized.get("message")) if p)
        detail = (f"Karpenter nominated {what} for the pod; its node registered but has not initialized{took} "
                  f"({why or 'no reason given'}). Karpenter sets no limit on initialization, so the NodeClaim "
                  f"waits for good; past {INITIALIZATION_GRACE_S // 60} minutes it is stuck, not starting: a "
                  "startup taint nobody removes, or a requested resource (nvidia.com/gpu, vpc.amazonaws.com/efa) "
                  "whose device plugin never registered it.")
    elif late:
        detail = (f"Karpenter nominated {what} for the pod and it has been {state}{took}, past the "
                  f"{limit // 60}-minute limit Karpenter allows that stage before it deletes the NodeClaim and "
                  f"tries again. Look at the NodeClaim's conditions and events for why.")
    else:
        detail = (f"Karpenter nominated {what} for the pod; it is {state}{took}. Karpenter allows a launch "
                  f"{LAUNCH_TTL_S // 60} minutes and registration {REGISTRATION_TTL_S // 60} minutes; until the node "
                  f"joins, the scheduler reporting that no existing node fits is expected.")
    return Finding(
        code="karpenter.provisioning", severity="warning" if late else "info", confidence="high",
        title=f"A node is on its way for {pod.name}{_and_others(others)}: {what} {state}{took}",
        detail=detail, evidence=evidence, fix=render_fix("generic/karpenter.provisioning.sh.j2", nodeclaim=name),
    )


def _and_others(count: int) -> str:
    return f" and {count} more pod{'s' if count > 1 else ''}" if count else ""


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{int(seconds)} s"
    if seconds < 7200:
        return f"{int(seconds // 60)} min"
    return f"{seconds / 3600:.1f} h"
