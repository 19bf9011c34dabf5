"""NCCL and libfabric errors in the target's logs, read against what happened to the other ranks.

OFI error 4126 ("handshake failed") and ncclRemoteError mean a peer stopped answering: usually its pod
died first. Point at the peer that died and why, instead of at the network.
"""
from __future__ import annotations

from playbooks.analyzers.disruption import disrupted_nodes
from playbooks.analyzers.scan import signals
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.gather import BATCH_JOB_LABELS, KUBEFLOW_JOB_LABEL
from playbooks.model import Evidence, Finding


JOB_LABELS = (KUBEFLOW_JOB_LABEL, *BATCH_JOB_LABELS)


def analyze(facts: Facts):
    hits = [loc for loc in signals(facts) if loc.signal.code == "nccl.peer_unresponsive"
            and loc.origin == "log" and loc.pod is not None and facts.is_target_pod(loc.pod)]
    if not hits:
        return
    pod = hits[0].pod
    disrupted = disrupted_nodes(facts)
    peers = [p for p in facts.pods if p.name != pod.name]
    dead = [(p, _why(p, disrupted)) for p in peers]
    dead = [(p, why) for p, why in dead if why]
    evidence = [Evidence(loc.signal.source, loc.signal.line) for loc in hits[:3]]
    if dead:
        causes = "; ".join(f"{p.name} {why}" for p, why in dead[:4])
        detail = (f"{pod.name} failed because a peer rank stopped answering (libfabric EFA error 4126: the peer "
                  f"process is no longer there), not because the network is broken. The peer that died first: "
                  f"{causes}. Fix that cause; restarting the job alone will meet the same failure.")
        confidence = "high"
        evidence += [Evidence(f"pod/{p.namespace}/{p.name}", f"{p.name} {why}") for p, why in dead[:3]]
    else:
        detail = (f"{pod.name} failed because a peer rank stopped answering (libfabric EFA error 4126). No other "
                  f"pod of the job shows why it died; collect the other ranks' previous logs "
                  f"(kubectl logs --previous), their events and their nodes' events.")
        confidence = "medium"
    selector = next((f"{k}={pod.labels[k]}" for k in JOB_LABELS if pod.labels.get(k)), f"job-name={pod.name}")
    peer = dead[0][0] if dead else None
    fix = render_fix("nccl_peer.sh.j2", namespace=pod.namespace, selector=selector,
                     peer=peer.name if peer else None, peer_node=peer.node_name if peer else None)
    yield Finding(
        code="nccl.peer_unresponsive", severity="error", confidence=confidence, fix=fix,
        title=f"{pod.name}: NCCL peer stopped answering (OFI 4126 handshake failed)"
              + (f" after {dead[0][0].name} died" if dead else ""),
        detail=detail, evidence=evidence,
    )


def _why(pod: PodFacts, disrupted: dict) -> str:
    reasons = []
    if pod.node_name in disrupted:
        reasons.append(f"was on node {pod.node_name}, which Karpenter disrupted")
    for status in pod.container_statuses():
        for state in (status.get("state") or {}, status.get("lastState") or {}):
            term = state.get("terminated")
            if term and term.get("exitCode") not in (None, 0):
                reasons.append(f"exited with code {term['exitCode']} ({term.get('reason', 'Error')})")
                break
    if pod.phase == "Failed":
        reasons.append(f"is Failed ({(pod.pod.get('status') or {}).get('reason', 'unknown reason')})")
    return ", ".join(dict.fromkeys(reasons))
