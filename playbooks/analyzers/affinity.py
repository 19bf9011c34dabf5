"""Required pod affinity that can never be met: replicas that must join a pod of their own job.

When every replica requires a pod matching its own labels on the same topology domain and none of
them is scheduled yet, there is nothing to join: the first pod can never land (seed 002). Making the
affinity preferred lets the first pod trigger a node and the rest follow it.
"""
from __future__ import annotations

from playbooks.analyzers import evidence as ev
from playbooks.analyzers.fixes import owner_patch
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.model import Finding


def analyze(facts: Facts):
    pending = facts.pending_pods()
    for pod in pending:
        for term in _required_terms(pod):
            if not _matches(term.get("labelSelector") or {}, pod.labels):
                continue
            peers = [p for p in facts.pods if _matches(term.get("labelSelector") or {}, p.labels)]
            if any(p.node_name for p in peers):
                continue  # a pod to join exists: the affinity can be met once capacity arrives
            yield _deadlock(pod, term, peers, facts)
            return


def _required_terms(pod: PodFacts) -> list[dict]:
    affinity = (pod.pod.get("spec") or {}).get("affinity") or {}
    return list((affinity.get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or [])


def _matches(selector: dict, labels: dict) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return bool(selector)


def _deadlock(pod: PodFacts, term: dict, peers: list[PodFacts], facts: Facts) -> Finding:
    topology = term.get("topologyKey", "")
    job = pod.labels.get("training.kubeflow.org/job-name") or pod.labels.get("job-name") or pod.name
    replica_types = list(((facts.owner or {}).get("spec") or {}).get("pytorchReplicaSpecs") or {}) or None
    preferred = {"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": None,
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}],
    }}
    fix = render_fix("pod_affinity_preferred.yaml.j2", **owner_patch(pod, {"affinity": preferred}, replica_types=replica_types),
                     topology_key=topology, job=job)
    evidence = [ev.field(pod.ref, "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution", [term])]
    states = ", ".join(f"{p.name} {p.phase or 'Unknown'}{'' if p.node_name else ' (unscheduled)'}" for p in peers[:6])
    evidence.append(ev.field(f"pods of {job}", "status.phase", states))
    owner_events = [e for e in facts.owner_events if e.get("reason") in ("Unschedulable", "FailedScheduling")]
    if owner_events:
        evidence.append(ev.from_event(f"{facts.owner_kind}/{pod.namespace}/{job}", owner_events[-1]))
    evidence += ev.events(pod, reasons=("FailedScheduling",))[-1:]
    return Finding(
        code="scheduling.pod_affinity_unsatisfiable", severity="error", confidence="high",
        title=f"Pods of {job} require a pod of {job} on the same {topology}, and none is scheduled: deadlock",
        detail=(f"Every replica of {job} has a required podAffinity on its own job's label with topologyKey "
                f"{topology}. With no replica running yet there is no pod to co-locate with, so none of the "
                f"{len(peers)} pods can be placed; new nodes from Karpenter do not help (the 'didn't match Pod's "
                f"node affinity/selector' and 'untolerated taint' lines are noise from nodes still joining). "
                f"Make the affinity preferred (weight 100) so the first pod lands and the others follow it, or "
                f"drop the affinity from the Master replica."),
        evidence=evidence, fix=fix,
    )
