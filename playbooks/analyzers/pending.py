"""Why a pod is Pending: each NodePool it could use, checked the way Karpenter checks it
(playbooks/karpenter/evaluate.py), worded as findings (pending_findings.py). The NodePool that got closest explains the
failure; Karpenter's and the scheduler's own messages are quoted as evidence.

For the signals analyzer it records ``pending_explained`` (pods a structural finding explains),
``pending_codes`` (pod -> codes of those findings), ``pending_ok`` (pods the model expects some NodePool
to serve) and ``pending_ok_nodepools`` (pod -> those NodePools)."""
from __future__ import annotations

from playbooks import linear
from playbooks.analyzers import evidence as ev
from playbooks.analyzers.fixes import owner_patch
from playbooks.analyzers.pending_findings import finding_for, list_names, pod_selector_evidence
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.gather_ec2 import considered_nodepools
from playbooks.karpenter import labels as lbl
from playbooks.karpenter.evaluate import Verdict, evaluate
from playbooks.model import Evidence, Finding


def analyze(facts: Facts):
    explained: set[str] = facts.cache.setdefault("pending_explained", set())
    codes: dict[str, set[str]] = facts.cache.setdefault("pending_codes", {})
    provisionable: set[str] = facts.cache.setdefault("pending_ok", set())
    ok_pools: dict[str, list[str]] = facts.cache.setdefault("pending_ok_nodepools", {})
    meant: dict[str, list[str]] = facts.cache.setdefault("pending_nodepools", {})
    gated: set[str] = facts.cache.get("gated", set())
    outcome: dict[tuple, tuple[list[Finding], list[str]]] = {}
    for pod in facts.pending_pods():
        if pod.name in gated:
            continue  # held on purpose (waiting analyzer): no NodePool is asked for it yet
        shape = _shape(pod)
        if shape not in outcome:  # replicas of one job share one spec: one analysis is enough
            outcome[shape] = _pending_pod(pod, facts, shape=shape)
            yield from outcome[shape][0]
        findings, serving = outcome[shape]
        closest = facts.cache.get("closest_nodepools", {}).get(shape)
        if closest:
            meant[pod.name] = closest
        if findings:
            explained.add(pod.name)
            codes.setdefault(pod.name, set()).update(f.code for f in findings)
        elif serving:
            provisionable.add(pod.name)
            ok_pools[pod.name] = serving


def _shape(pod: PodFacts) -> tuple:
    spec = pod.pod.get("spec") or {}
    return (str(spec.get("nodeSelector")), str((spec.get("affinity") or {}).get("nodeAffinity")),
            str(spec.get("tolerations")), str(spec.get("containers")), str(spec.get("initContainers")),
            str(spec.get("overhead")))


def _pending_pod(pod: PodFacts, facts: Facts, *, shape: tuple = ()) -> tuple[list[Finding], list[str]]:
    """(findings, NodePools the model believes can serve the pod, verified by instance-type facts)."""
    quoted = _cluster_words(pod, facts)
    selected = ((pod.pod.get("spec") or {}).get("nodeSelector") or {}).get(lbl.NODEPOOL)
    if selected and selected not in facts.nodepools:
        if "nodepools" in facts.unread:
            return [], []  # not read is not missing
        return [Finding(
            code="scheduling.node_selector_mismatch", severity="error", confidence="high",
            title=f"{pod.name} asks for NodePool {selected}, which does not exist",
            detail=(f"The pod's nodeSelector karpenter.sh/nodepool={selected} names no NodePool in this cluster "
                    f"(NodePools: {', '.join(sorted(facts.nodepools)) or 'none'}), so no node can ever match."),
            evidence=[ev.field(pod.ref, "spec.nodeSelector", pod.pod["spec"]["nodeSelector"]), *quoted],
        )], []
    verdicts = [evaluate(pod, facts.nodepools[n], facts)
                for n in by_weight([n for n in considered_nodepools(pod, facts) if n in facts.nodepools], facts)]
    usable = reachable(verdicts)
    # without the DaemonSets their overhead is unknown: a fit is then not sure enough to doubt the cluster's words
    serving = [v.nodepool for v in usable if v.verified and v.offerings_unknown is None
               ] if "daemonsets" not in facts.unread else []
    # the NodePools meant for the pod: those that can serve it, else those that got closest; Karpenter's
    # errors about the others are true but not this pod's story (signals.py ranks them low)
    fitting = [v.nodepool for v in usable]
    least = min((v.score for v in verdicts), default=0)
    facts.cache.setdefault("closest_nodepools", {})[shape] = fitting or [v.nodepool for v in verdicts if v.score == least]
    if not verdicts or any(v.ok for v in verdicts):
        # some NodePool can launch a node for this pod, as far as the model can tell
        return _offerings_unknown(pod, [v for v in verdicts if v.ok], facts=facts, quoted=quoted), serving
    best = min(v.score for v in verdicts)
    findings = []
    for verdict in (v for v in verdicts if v.score == best):
        nodepool = facts.nodepools[verdict.nodepool]
        for blocker in verdict.blockers:
            findings.append(finding_for(pod, nodepool, blocker, verdict=verdict, facts=facts, quoted=quoted))
    return findings, []


def by_weight(names: list[str], facts: Facts) -> list[str]:
    """NodePools in the order Karpenter tries them: spec.weight, highest first, equal weights by name in
    reverse ([core] kubernetes-sigs/karpenter v1.14.0 pkg/utils/nodepool/nodepool.go OrderByWeight)."""
    def weight(name: str) -> int:
        try:
            return int((facts.nodepools[name].get("spec") or {}).get("weight") or 0)
        except (TypeError, ValueError):
            return 0
    return sorted(sorted(names, reverse=True), key=weight, reverse=True)


def reachable(verdicts: list[Verdict]) -> list[Verdict]:
    """The passing verdicts, in weight order, that Karpenter may use: none after one that can launch the pod into
    an available reserved offering. [core] kubernetes-sigs/karpenter v1.14.0
    pkg/controllers/provisioning/scheduling/scheduler.go addToNewNodeClaim: "If the pod is compatible with a
    NodePool with reserved offerings available, we shouldn't fall back to a NodePool with a lower weight"; the
    provisioner runs with DisableReservedCapacityFallback (provisioner.go), so while that NodePool's
    reservations are spoken for the pod waits for them ("deferring scheduling decision ... due to limited
    reserved offering capacity") instead of launching from a lower-weight NodePool."""
    out = []
    for verdict in verdicts:
        if not verdict.ok:
            continue
        out.append(verdict)
        if verdict.reserved:
            break
    return out


_OFFERING_WORDS = linear.compile(r"required offering|had a required offering|no instance type which had enough resources and the required offering")


def _offerings_unknown(pod: PodFacts, fitting: list[Verdict], *, facts: Facts, quoted: list[Evidence]) -> list[Finding]:
    """Karpenter says no offering matched, and the offerings the pod is restricted to (a zone pin, spot or reserved
    only) could not be read: the cluster's words name the cause the model could not check, at medium confidence."""
    if not fitting or any(v.offerings_unknown is None for v in fitting):
        return []
    said = [e for e in quoted if _OFFERING_WORDS.search(e.text)]
    if not said:
        return []
    unknown = fitting[0].offerings_unknown
    types = list_names(unknown["types"])
    wanted = []
    if unknown["zones"] is not None:
        wanted.append(", ".join(sorted(unknown["zones"])))
    if unknown["capacity_types"] is not None:
        wanted.append("capacity type " + "/".join(sorted(unknown["capacity_types"])))
    where = " as ".join(wanted)
    gaps = "; ".join(g for g in facts.gaps if "offering" in g.lower()) or "no offering data"
    detail = (f"Karpenter reports that no instance type had the required offering, and the pod can only use {where}. "
              f"The instance types that fit it ({types}) could not be checked against EC2's offerings ({gaps}), so the "
              f"model cannot confirm it, but an offering that does not exist there is the usual cause. Check with: aws "
              f"ec2 describe-instance-type-offerings --location-type availability-zone (zones) or aws ec2 "
              f"describe-spot-price-history (spot).")
    selector = (pod.pod.get("spec") or {}).get("nodeSelector") or {}
    unpin = {k: None for k in selector if lbl.normalize(k) == lbl.ZONE}
    if unknown["zones"] is not None:
        fix = render_fix("zone.yaml.j2", **owner_patch(pod, {"nodeSelector": unpin or {lbl.ZONE: None}}), zones=[],
                         pinned=wanted[0])
    else:
        fix = render_fix("generic/karpenter.offering_unavailable_in_zone.sh.j2",
                         instance_type=",".join(sorted(unknown["types"])[:8]),
                         capacity_type=", ".join(sorted(unknown["capacity_types"])))
    return [Finding(code="karpenter.offering_unavailable_in_zone", severity="error", confidence="medium",
                    title=f"Karpenter finds no offering for {pod.name} in {where}; offerings were not checked",
                    detail=detail, evidence=said + [pod_selector_evidence(pod)], fix=fix)]


def _cluster_words(pod: PodFacts, facts: Facts) -> list[Evidence]:
    out = ev.events(pod, reasons=("FailedScheduling",), components=("karpenter", "eks-auto-mode"))
    # the scheduler's newest verdict, by time, not by list order (evidence.superseded)
    latest = ev.newest([e for e in pod.events if e.get("reason") == "FailedScheduling"
                        and "default-scheduler" in ev.event_component(e)])
    out += [ev.from_event(pod.ref, latest)] if latest is not None else []
    for line in facts.karpenter_log or []:
        if pod.name in line and ("could not schedule" in line.lower() or "error" in line.lower()):
            out.append(Evidence(source=facts.karpenter_source, text=ev.trim(line)))
    return out
