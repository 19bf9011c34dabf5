"""NCCL and libfabric errors in the target's logs, read against what happened to the other ranks.

OFI error 4126 ("handshake failed") and ncclRemoteError mean a peer stopped answering: usually its pod
died first. Point at the peer that died and why, instead of at the network. When several peers died,
the first by its container's ``finishedAt`` is the one to look at (the others followed it); when they all
ended within ``ALIKE_S`` of each other, no single rank can be blamed from the cluster's clock alone
(kubelet reports finishedAt to the second), so say so with low confidence.
"""
from __future__ import annotations

from datetime import datetime, timezone

from playbooks.analyzers.disruption import disrupted_nodes
from playbooks.analyzers.evidence import parse_time
from playbooks.analyzers.scan import signals
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.gather import BATCH_JOB_LABELS, KUBEFLOW_JOB_LABEL
from playbooks.history_names import nodes_named
from playbooks.model import Evidence, Finding


JOB_LABELS = (KUBEFLOW_JOB_LABEL, *BATCH_JOB_LABELS)
ALIKE_S = 2.0
_EPOCH = datetime.min.replace(tzinfo=timezone.utc)


def analyze(facts: Facts):
    hits = [loc for loc in signals(facts) if loc.signal.code == "nccl.peer_unresponsive"
            and loc.origin == "log" and loc.pod is not None and facts.is_target_pod(loc.pod)]
    if not hits:
        return
    pod = hits[0].pod
    disrupted = disrupted_nodes(facts)
    peers = [p for p in facts.pods if p.name != pod.name]
    dead = [(p, _why(p, disrupted)) for p in peers]
    dead = sorted(((p, why) for p, why in dead if why), key=lambda item: _order(item[0]))
    evidence = [Evidence(loc.signal.source, loc.signal.line) for loc in hits[:3]]
    alike = _alike(dead)
    if alike:
        detail = (f"{pod.name} failed because peer ranks stopped answering (libfabric EFA error 4126: the peer "
                  f"process is no longer there). {len(dead)} other pods of the job failed within {alike:.0f} s of "
                  f"each other ({'; '.join(f'{p.name} {why}' for p, why in dead[:4])}), so the cluster's clock cannot "
                  "tell which one failed first: a shared cause (the same bad batch, a collective every rank entered, "
                  "a node-wide or job-wide event) is as likely as one rank taking the others down. Compare the ranks' "
                  "own logs around that second (the first traceback, NCCL_DEBUG=INFO lines with timestamps).")
        confidence = "low"
        evidence += [Evidence(f"pod/{p.namespace}/{p.name}", f"{p.name} {why}{_at(p)}") for p, why in dead[:3]]
    elif dead:
        causes = "; ".join(f"{p.name} {why}{_at(p)}" for p, why in dead[:4])
        first = (f"The peer that died first (by its container's finishedAt): {causes}" if len(dead) > 1
                 else f"The peer that died: {causes}")
        detail = (f"{pod.name} failed because a peer rank stopped answering (libfabric EFA error 4126: the peer "
                  f"process is no longer there), not because the network is broken. {first}. Fix that cause; "
                  f"restarting the job alone will meet the same failure.")
        confidence = "high"
        evidence += [Evidence(f"pod/{p.namespace}/{p.name}", f"{p.name} {why}{_at(p)}") for p, why in dead[:3]]
    else:
        detail = (f"{pod.name} failed because a peer rank stopped answering (libfabric EFA error 4126). No other "
                  f"pod of the job shows why it died; collect the other ranks' previous logs "
                  f"(kubectl logs --previous), their events and their nodes' events.")
        confidence = "medium"
    selector = next((f"{k}={pod.labels[k]}" for k in JOB_LABELS if pod.labels.get(k)), f"job-name={pod.name}")
    peer = dead[0][0] if dead and not alike else None
    fix = render_fix("nccl_peer.sh.j2", namespace=pod.namespace, selector=selector,
                     peer=peer.name if peer else None, peer_node=peer.node_name if peer else None)
    yield Finding(
        code="nccl.peer_unresponsive", severity="error", confidence=confidence, fix=fix,
        title=f"{pod.name}: NCCL peer stopped answering (OFI 4126 handshake failed)"
              + (f" after {len(dead)} ranks failed within {alike:.0f} s of each other" if alike
                 else f" after {dead[0][0].name} died{' first' if len(dead) > 1 else ''}" if dead else ""),
        detail=detail, evidence=evidence,
    )


def _why(pod: PodFacts, disrupted: dict) -> str:
    reasons = []
    earlier = sorted(nodes_named(pod.events) & set(disrupted))  # a Kubeflow replica recreated under its name
    if pod.node_name in disrupted:
        reasons.append(f"was on node {pod.node_name}, which Karpenter disrupted")
    elif earlier:
        reasons.append(f"ran earlier on node {earlier[0]}, which Karpenter disrupted")
    for status in pod.container_statuses():
        for state in (status.get("state") or {}, status.get("lastState") or {}):
            term = state.get("terminated")
            if term and term.get("exitCode") not in (None, 0):
                reasons.append(f"exited with code {term['exitCode']} ({term.get('reason', 'Error')})")
                break
    if pod.phase == "Failed":
        reasons.append(f"is Failed ({(pod.pod.get('status') or {}).get('reason', 'unknown reason')})")
    return ", ".join(dict.fromkeys(reasons))


def _finished(pod: PodFacts) -> datetime | None:
    """When the pod's first container failed: the earliest finishedAt of a non-zero exit."""
    times = [parse_time(term.get("finishedAt")) for status in pod.container_statuses()
             for state in (status.get("state") or {}, status.get("lastState") or {})
             for term in [state.get("terminated") or {}] if term.get("exitCode") not in (None, 0)]
    times = [t for t in times if t is not None]
    return min(times) if times else None


def _order(pod: PodFacts) -> tuple[bool, datetime]:
    """Earliest failure first; peers with no finishedAt (Failed, disrupted) after them, in job order."""
    when = _finished(pod)
    return (when is None, when or _EPOCH)


def _at(pod: PodFacts) -> str:
    when = _finished(pod)
    return f" at {when.strftime('%H:%M:%S')}" if when else ""


def _alike(dead: list[tuple[PodFacts, str]]) -> float | None:
    """The spread in seconds when two or more peers all failed within ALIKE_S of each other, else None."""
    times = [_finished(p) for p, _ in dead]
    if len(times) < 2 or any(t is None for t in times) or any("Karpenter disrupted" in why for _, why in dead):
        # a disrupted node is a cause of its own, whatever the clock says
        return None
    spread = (max(times) - min(times)).total_seconds()
    return max(spread, 1.0) if spread <= ALIKE_S else None
