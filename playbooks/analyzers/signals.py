"""The catch-all: known signatures in events and logs that no structural analyzer explained.

Karpenter's and kube-scheduler's messages are evidence of record: the model of NodePools in the
pending analyzer may explain them, rank them and add to them, but never silence them. When the model
expects a pod to fit and the cluster says it does not, the message is still reported at its own
severity, with lower confidence and a note that the model could not confirm it. A message becomes
info only when the cluster itself has moved on: the pod was placed since, a node was nominated for it
after the message, or Karpenter is launching one for it (then the scheduler's "no existing node fits"
is the expected state). A peer's trouble counts one severity lower than the target's own. Age counts
too: a slow image pull of a pod whose containers have run without a restart for ``SETTLED_S`` delayed a
start-up that is long over, so it is info, not a warning about the job. History is reported as info and
still quoted: a scheduling verdict a newer one from the same reporter replaced, a start-up connect retry the
container has run long past, a capacity error for a NodeClaim while another NodeClaim launches for the pod.
"""
from __future__ import annotations

from dataclasses import dataclass

from datetime import datetime

from playbooks.analyzers.evidence import event_time, newest_condition, parse_time
from playbooks.analyzers.history import settled
from playbooks.analyzers.launches import launching_instead, nodepool_of
from playbooks.analyzers import unrecognised
from playbooks.analyzers.scan import Located, signals
from playbooks.analyzers.fixes import known_names
from playbooks.explain import fix_context, template_for
from playbooks.facts import Facts
from playbooks.fixes import render_fix
from playbooks.model import CONFIDENCES, SEVERITIES, Evidence, Finding
from playbooks.signatures import Signal
from playbooks.signatures.details import View, describe

PROVISIONING_PREFIXES = ("scheduling.", "karpenter.", "efa.resource_unavailable")
NOT_PROVISIONING = ("karpenter.disruption", "karpenter.provisioning", "scheduling.gated")


def _provisioning(code: str) -> bool:
    return code.startswith(PROVISIONING_PREFIXES) and code not in NOT_PROVISIONING


@dataclass(frozen=True)
class Weight:
    """How one signal counts here: its severity, and whether the model disagreed with it."""

    severity: str
    unconfirmed: bool = False
    aside: bool = False  # about a NodePool other than the one the pod is meant for
    history: str = ""  # why it is history (info, quoted), not the state now


@dataclass(frozen=True)
class _Context:
    pending: frozenset[str]
    explained: dict[str, set[str]]  # pod -> codes of structural findings about it ("*": any)
    provisionable: frozenset[str]  # pods the model expects some NodePool to serve
    on_its_way: dict[str, datetime]  # pod -> when Karpenter nominated a NodeClaim for it
    meant: dict[str, frozenset[str]]  # pod -> the NodePools meant to serve it (empty: not known)


def analyze(facts: Facts):
    _note_unrecognised(facts)
    context = _context(facts)
    groups: dict[str, list[tuple[Weight, Located]]] = {}
    for loc in signals(facts):
        weight = _weigh(loc, facts, context)
        if weight is not None:
            groups.setdefault(loc.signal.code, []).append((weight, loc))
    codes = frozenset(groups)
    related = {code: dict(items[0][1].signal.fields) for code, items in groups.items()}
    for code, items in groups.items():
        finding = _finding(code, items, codes=codes, related=related, facts=facts)
        if finding.severity != "info" or code == "scheduling.node_lifecycle_taint" or all(w.history for w, _ in items):
            yield finding


def _note_unrecognised(facts: Facts) -> None:
    """Warnings no signature knows, about the target, its owner, its volumes and its node: never dropped,
    quoted as they are (analyzers/unrecognised.py)."""
    unrecognised.note(facts)


def _context(facts: Facts) -> _Context:
    explained: dict[str, set[str]] = {}
    for pod, found in (facts.cache.get("pending_codes") or {}).items():
        explained.setdefault(pod, set()).update(found)
    for pod in facts.cache.get("pending_explained", set()):
        explained.setdefault(pod, set()).add("*")
    return _Context(
        pending=frozenset(p.name for p in facts.pending_pods()),
        explained=explained,
        provisionable=frozenset(facts.cache.get("pending_ok", set())),
        on_its_way=dict(facts.cache.get("on_its_way", {})),
        meant={p.name: _meant(p, facts) for p in facts.pending_pods()},
    )


def _meant(pod, facts: Facts) -> frozenset[str]:
    """The NodePools a pod is meant for: the one it selects by name, else those the pending analyzer
    found closest to serving it. Karpenter reports an error for every NodePool it tried; a CPU pool's
    "no instance type" is true but not the story of a GPU pod."""
    selected = ((pod.pod.get("spec") or {}).get("nodeSelector") or {}).get("karpenter.sh/nodepool")
    if selected:
        return frozenset([selected])
    return frozenset((facts.cache.get("pending_nodepools") or {}).get(pod.name, ()))


def _finding(code: str, items: list[tuple[Weight, Located]], *, codes: frozenset[str], related: dict,
             facts: Facts) -> Finding:
    """One finding for a code: the strongest signal's wording, up to five distinct evidence lines."""
    ranked = sorted(items, key=lambda item: (SEVERITIES.index(item[0].severity),
                                             CONFIDENCES.index(item[1].signal.confidence)))
    weight, best = ranked[0][0], ranked[0][1].signal
    aside = all(w.aside for w, _ in items)
    values: dict[str, tuple[str, ...]] = {}
    evidence: list[Evidence] = []
    for _, loc in ranked:
        sig: Signal = loc.signal
        for name, value in sig.fields.items():
            if value not in values.get(name, ()):
                values[name] = values.get(name, ()) + (value,)
        if len(evidence) < 5 and all(e.text != sig.line for e in evidence):
            evidence.append(Evidence(source=sig.source, text=sig.line))
    view = View(code=code, fields=dict(best.fields), values=values, count=len(items), confidence=best.confidence,
                codes=codes, related=related, nominated="Pod should schedule on" in " ".join(l.signal.line for _, l in items))
    detail, confidence = describe(view), best.confidence
    if aside:
        confidence = "low"
        detail += (f" Karpenter reported this for NodePool {', '.join(sorted(set(view.all('nodepool'))))}, which is not "
                   "the NodePool the pod is meant for; it is listed for completeness.")
    if all(w.unconfirmed for w, _ in items):
        confidence = _lower_confidence(confidence)
        detail += " " + _unconfirmed_note(items, facts)
    if all(w.history for w, _ in items):
        # what was true once, quoted for the record: never ranked as the cause of the state now
        confidence = "low"
        detail += " History, not the state now: " + "; ".join(sorted({w.history for w, _ in items})) + "."
    # about another NodePool: worth a look, never an error of this target's
    severity = "warning" if aside and weight.severity in ("critical", "error") else weight.severity
    return Finding(code=code, severity=severity, confidence=confidence, title=best.title, detail=detail,
                   evidence=evidence, labels=_offering_labels(code, values), fix=render_fix(template_for(code), **{**known_names(facts, ranked[0][1].pod or facts.target_pod),
                                                          **fix_context(code, best.fields)}))


# What names an EC2 offering, as the signatures extract it (playbooks/signatures/karpenter_nodeclaim.py).
OFFERING_CODES = ("karpenter.insufficient_capacity", "karpenter.offering_unavailable_in_zone")
OFFERING_FIELDS = ("nodepool", "instance_type", "zone", "capacity_type")


def _offering_labels(code: str, values: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """The offering a capacity finding is about, as structured fields (Finding.labels): only the fields
    every signal agrees on, since lines about two offerings name no single one."""
    if code not in OFFERING_CODES:
        return {}
    return {name: values[name][0] for name in OFFERING_FIELDS if len(values.get(name, ())) == 1}


def _unconfirmed_note(items: list[tuple[Weight, Located]], facts: Facts) -> str:
    whose = "Karpenter's" if any(loc.from_karpenter for _, loc in items) else "The scheduler's"
    pools = sorted({np for _, loc in items if loc.pod is not None
                    for np in (facts.cache.get("pending_ok_nodepools") or {}).get(loc.pod.name, ())})
    where = f" (NodePool {', '.join(pools)})" if pools else ""
    return (f"{whose} own message is quoted as the evidence of record. gpubot's model of the NodePools could not "
            f"confirm it: by the facts it could read, the pod should fit{where}. The model may lack something the "
            "cluster knows (current offerings, an older Karpenter's rules, a read that failed), so trust the message "
            "and check what it names.")


def _weigh(loc: Located, facts: Facts, context: _Context) -> Weight | None:
    """How this signal counts here, or None when a structural finding already carries it."""
    sig = loc.signal
    if sig.code == "training.crash_loop":
        return None  # analyzers/crash_loop.py reads the container state and its previous log instead
    severity = sig.severity
    unconfirmed = aside = False
    if sig.code == "image.slow_pull" and loc.pod is not None and settled(loc.pod.pod):
        return Weight("info")  # the pull slowed a start-up that is long over
    if sig.code == "image.pull_failed" and loc.origin == "event" and loc.pod is not None and settled(loc.pod.pod):
        # the image is on the node and the container has run from it for an hour: with IfNotPresent the kubelet
        # never pulls it again for this pod (kubernetes/kubernetes pkg/kubelet/images/image_manager.go
        # EnsureImageExists returns early when the image is present)
        return Weight("info", history="a failed pull before the container started; it has run an hour since")
    if loc.history and severity != "info":
        return Weight("info", history=loc.history)
    since = _state_since(sig, loc, facts)
    if since and severity != "info":
        return Weight("info", history=since)
    ruled_out = _not_the_subnet(sig, loc, facts)
    if ruled_out:
        # The reading is wrong here; the event itself still stands, quoted by the floor with the reason
        # (analyzers/unrecognised.py).
        facts.cache.setdefault("ruled_out", {})[sig.line] = ruled_out
        return None
    if _provisioning(sig.code) and severity != "info":
        about = _pending_pods_named(loc, context.pending)
        if loc.pod is not None and loc.pod.name not in context.pending and _scheduling_history(loc):
            return Weight("info")  # FailedScheduling from before the pod was placed: history, not the problem
        if loc.origin == "owner-event" and not about:
            about = set(context.pending)  # the job controller copies its pods' conditions
        if about:
            elsewhere = _launching_elsewhere(loc, about, facts)
            if elsewhere:
                return Weight("info", history=elsewhere)
            if all(_carried(sig.code, context.explained.get(p, set()), from_karpenter=loc.from_karpenter)
                   for p in about):
                return None  # already the evidence of a structural finding about the same cause
            if all(p in context.on_its_way for p in about):
                if not loc.from_karpenter or all(_before(loc.when, context.on_its_way[p]) for p in about):
                    # a node is on its way: the scheduler finding no existing node (or an older Karpenter
                    # failure) is the expected state, not the problem
                    return Weight("info")
            if all(p in context.provisionable for p in about) and sig.code not in CAPACITY_CODES:
                unconfirmed = True  # (the model reads no capacity: an ICE is neither confirmed nor doubted by it)
            nodepool = sig.fields.get("nodepool")
            aside = bool(nodepool) and all(context.meant.get(p) and nodepool not in context.meant[p] for p in about)
    if loc.pod is not None and not facts.is_target_pod(loc.pod):
        severity = _lower(severity)
    return Weight(severity, unconfirmed, aside)


def _state_since(sig: Signal, loc: Located, facts: Facts) -> str:
    """Why an event's state is over: the newest state of the object it is about says otherwise (a job resumed
    since it was suspended, a node Ready again since it went NotReady), or ""."""
    if sig.code == "scheduling.gated" and sig.fields.get("hold") == "suspended" and facts.owner is not None:
        spec = facts.owner.get("spec") or {}
        flag = (spec.get("runPolicy") or {}).get("suspend") if facts.owner_kind == "pytorchjob" else spec.get("suspend")
        newest = newest_condition(facts.owner, "Suspended")
        if not flag and newest is not None and str(newest.get("status")) == "False":
            return f"the job was resumed since ({newest.get('reason') or 'Suspended=False'})"
    if sig.code == "node.not_ready" and loc.when is not None:
        node = _node_about(loc, facts)
        ready = newest_condition(node, "Ready") if node else None
        if ready is None or str(ready.get("status")) != "True":
            return ""
        name = node["metadata"].get("name", "")
        since = parse_time(ready.get("lastTransitionTime"))
        # The kubelet's NodeReady event (pkg/kubelet/nodestatus/setters.go ReadyCondition records it on each
        # return to Ready) is the return too when the condition's transition time was not kept.
        back = [event_time(e) for e in facts.node_events.get(name, []) if e.get("reason") == "NodeReady"]
        if (since is not None and loc.when <= since) or any(loc.when <= t for t in back):
            return f"node {name} has been Ready again since"
    return ""


def _not_the_subnet(sig: Signal, loc: Located, facts: Facts) -> str:
    """A pod on a node whose kubelet admits more pods than the node's network interfaces have IPs for: the VPC
    CNI's "failed to assign an IP address" is that node's pool running dry, not the subnet (aws
    amazon-vpc-cni-k8s misc/eni-max-pods.txt: ENIs x (IPv4 per ENI - 1) + 2 without prefix delegation;
    karpenter-provider-aws pkg/providers/instancetype/types.go pods() when kubelet.maxPods overrides it)."""
    if sig.code != "karpenter.subnet_problem" or sig.fields.get("problem") != "no pod IP address" or loc.pod is None:
        return ""
    node = facts.node_of(loc.pod)
    if not node:
        return ""
    labels = (node.get("metadata") or {}).get("labels") or {}
    kind = labels.get("node.kubernetes.io/instance-type", "")
    info = facts.ec2.candidates.get(labels.get("karpenter.sh/nodepool", ""), {}).get(kind) or facts.ec2.node_types.get(kind)
    eni = getattr(info, "max_pods", None)
    try:
        admits = int(((node.get("status") or {}).get("capacity") or {}).get("pods") or 0)
    except ValueError:
        return ""
    if not eni or admits <= int(eni):
        return ""
    return (f"not the subnet: node {node['metadata'].get('name', '')} admits {admits} pods (kubelet maxPods) but a "
            f"{kind} has network interfaces for {int(eni)} pod IPs, so the VPC CNI ran out on the node; lower maxPods "
            "to the ENI limit or enable prefix delegation")


def _node_about(loc: Located, facts: Facts) -> dict | None:
    """The node a node.not_ready signal is about: its event's node, the pod's node, the node it names."""
    for name in (loc.node, loc.signal.fields.get("node"), loc.pod.node_name if loc.pod else None):
        if name and facts.nodes.get(name):
            return facts.nodes[name]
    return None


# Launch failures of one NodeClaim (the instance could not be had), which the next NodeClaim does not share.
CAPACITY_CODES = ("karpenter.insufficient_capacity",)


def _launching_elsewhere(loc: Located, about: set[str], facts: Facts) -> str:
    """A capacity error about NodeClaims the pods were nominated to, while another NodeClaim is launching
    (or launched) for every one of them: why it is history, or "" (analyzers/launches.py)."""
    if loc.signal.code not in CAPACITY_CODES or not loc.claims:
        return ""
    pods = {p.name: p for p in facts.pods}
    instead = [launching_instead(pods[p], loc.claims, facts) if p in pods else None for p in sorted(about)]
    if not instead or None in instead:
        return ""
    failed = sorted(loc.claims)[0]
    where = nodepool_of(instead[0], facts)
    was = nodepool_of(failed, facts)
    pool = f" of NodePool {where}" if where and where != was else ""
    return (f"Karpenter is launching NodeClaim {instead[0]}{pool} for the pod instead of {failed}"
            f"{' (NodePool ' + was + ')' if was else ''}")


def _scheduling_history(loc: Located) -> bool:
    """What the scheduler or Karpenter said about a pod before it was placed. The kubelet speaks only
    once the pod is on its node: its admission rejection ("OutOfnvidia.com/gpu: Node didn't have enough
    resource", kubernetes/kubernetes pkg/kubelet/lifecycle/predicate.go) is why the pod failed there, and
    the status.message of a pod past Pending is its state now, not history."""
    return loc.origin == "event" and loc.component != "kubelet"


def _carried(code: str, explained: set[str], *, from_karpenter: bool) -> bool:
    """Whether a structural finding about the pod already carries this message.

    The scheduler's words about existing nodes are carried by any structural finding (they are its
    evidence); Karpenter's words only by a finding with the same code, since they name its own cause.
    """
    if code in explained:
        return True
    return "*" in explained and not from_karpenter


def _before(when: datetime | None, nominated: datetime) -> bool:
    """An event older than the nomination."""
    return when is not None and when < nominated


def _pending_pods_named(loc: Located, pending: frozenset[str]) -> set[str]:
    if loc.pod is not None:
        return {loc.pod.name} & pending
    if loc.origin == "karpenter":
        return set(loc.about & pending) or {name for name in pending if name in loc.signal.line}
    if loc.origin == "nodeclaim-event":
        return set(loc.about & pending)
    return set()


def _lower_confidence(confidence: str) -> str:
    return CONFIDENCES[min(CONFIDENCES.index(confidence) + 1, len(CONFIDENCES) - 1)]


def _lower(severity: str) -> str:
    return SEVERITIES[min(SEVERITIES.index(severity) + 1, len(SEVERITIES) - 1)]
