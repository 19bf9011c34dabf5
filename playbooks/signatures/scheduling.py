"""kube-scheduler FailedScheduling messages: one message lists several reasons, one Signal per reason.

``0/N nodes are available: <count> <reason>, <count> <reason>. preemption: ...`` appears in
FailedScheduling events, in the pod's ``PodScheduled=False`` condition and re-quoted by the training
operator (``Error pod x condition message: ...``).
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from playbooks.signatures.model import Hit, Rule, Verdict

# Taints a node carries while it joins or leaves the cluster: transient, not a missing toleration.
LIFECYCLE_TAINTS = frozenset(
    {
        "karpenter.sh/unregistered",
        "karpenter.sh/disrupted",
        "karpenter.sh/disruption",  # v0.32-v0.37 "karpenter.sh/disruption=disrupting"
        "karpenter.sh/not-ready",
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/unschedulable",
        "node.cloudprovider.kubernetes.io/uninitialized",
    }
)
# Taints of system / control-plane nodes: GPU pods are not meant to land there anyway.
SYSTEM_TAINTS = frozenset(
    {"CriticalAddonsOnly", "node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"}
)

GATE = "nodes are available: "
_HEADER = re.compile(r"(?P<avail>\d+)/(?P<total>\d+) nodes are available: ")
# One "<count> <reason>" item. The alternatives start with different characters, so the repetition
# cannot backtrack: plain characters, a {taint} group, or a dot that does not end the sentence.
_REASON = re.compile(
    r"(?P<nodes>\d+) (?P<reason>node\(s\) had taint \{[^{}]*\}, that the pod didn't tolerate"
    r"|(?:[^,.{]|\{[^{}]*\}|\.(?! |$))+)"
)
_TAINT = re.compile(r"taint \{(?P<key>[^:{}]*)(?:: ?(?P<value>[^{}]*))?\}")


def taint_verdict(key: str, *, scheduler: str) -> Verdict:
    """Lifecycle taints and system-node taints are rarely what blocks a GPU pod."""
    if key in LIFECYCLE_TAINTS:
        return Verdict(
            code="scheduling.node_lifecycle_taint",
            severity="warning",
            confidence="medium",
            title=f"{scheduler}: candidate node is still joining or being removed (taint {key})",
        )
    if key in SYSTEM_TAINTS:
        return Verdict(
            severity="warning",
            confidence="low",
            title=f"{scheduler}: system node taint {key} not tolerated (rarely the root cause)",
        )
    return Verdict()


def _insufficient(fields: dict[str, str], text: str) -> Verdict | None:
    resource = fields.get("resource", "")
    if resource == "vpc.amazonaws.com/efa":
        return Verdict(
            code="efa.resource_unavailable",
            severity="error",
            confidence="medium",
            title="kube-scheduler: {nodes} node(s) offer no free vpc.amazonaws.com/efa",
        )
    if resource != "nvidia.com/gpu":
        return None  # cpu / memory / pods: ordinary capacity, no finding of ours
    return Verdict()


def _scheduler_taint(fields: dict[str, str], text: str) -> Verdict | None:
    found = _TAINT.search(text)
    if found is None:  # 1.34+ "had untolerated taint(s)": the keys are no longer printed
        return Verdict(
            severity="warning",
            confidence="low",
            title="kube-scheduler: {nodes} node(s) had untolerated taint(s) (keys not shown since 1.34)",
        )
    key, value = found.group("key").strip(), (found.group("value") or "").strip()
    extra = {"key": key, "taint": f"{key}={value}" if value else key}
    if value:
        extra["value"] = value
    verdict = taint_verdict(key, scheduler="kube-scheduler")
    return Verdict(verdict.code, verdict.severity, verdict.confidence, verdict.title, extra)


def _anti_affinity(fields: dict[str, str], text: str) -> Verdict | None:
    if "anti-affinity" in text:
        return Verdict(severity="warning", title="kube-scheduler: {nodes} node(s) didn't match pod anti-affinity rules")
    return Verdict()


# Reason rules run on the reason text only ("node(s) had untolerated taint {k: v}").
REASONS: tuple[Rule, ...] = (
    Rule(
        name="scheduler.insufficient",
        code="scheduling.insufficient_gpu",
        severity="error",
        confidence="medium",
        title="kube-scheduler: {nodes} of {total} node(s) have no free nvidia.com/gpu",
        keywords=("Insufficient ",),
        pattern=re.compile(r"Insufficient (?P<resource>\S+)"),
        refine=_insufficient,
        fields_doc="nodes, total, reason, resource",
        example="0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) didn't match Pod's node affinity/selector.",
    ),
    Rule(
        name="scheduler.taint",
        code="scheduling.untolerated_taint",
        severity="error",
        confidence="medium",
        title="kube-scheduler: {nodes} node(s) carry taint {taint} that the pod does not tolerate",
        keywords=("taint",),
        refine=_scheduler_taint,
        fields_doc="nodes, total, reason, key, value, taint (key=value or key)",
        example="0/3 nodes are available: 3 node(s) had untolerated taint {gpu-workload: true}.",
    ),
    Rule(
        name="scheduler.node_affinity",
        code="scheduling.node_selector_mismatch",
        severity="warning",
        confidence="low",
        title="kube-scheduler: {nodes} of {total} node(s) didn't match the pod's node affinity/selector",
        keywords=("node affinity/selector", "didn't match node selector", "MatchNodeSelector"),
        fields_doc="nodes, total, reason",
        example="0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
    ),
    Rule(
        name="scheduler.pod_affinity",
        code="scheduling.pod_affinity_unsatisfiable",
        severity="error",
        confidence="medium",
        title="kube-scheduler: {nodes} node(s) didn't match pod affinity rules",
        keywords=("pod affinity", "anti-affinity", "MatchInterPodAffinity"),
        refine=_anti_affinity,
        fields_doc="nodes, total, reason",
        example="0/4 nodes are available: 4 node(s) didn't match pod affinity rules.",
    ),
    Rule(
        name="scheduler.volume",
        code="scheduling.volume_zone_conflict",
        severity="error",
        confidence="high",
        title="kube-scheduler: {nodes} node(s) conflict with the PersistentVolume's zone (node affinity)",
        keywords=("volume node affinity conflict", "PersistentVolume's node affinity", "VolumeZoneConflict"),
        fields_doc="nodes, total, reason",
        example="0/3 nodes are available: 3 node(s) had volume node affinity conflict.",
    ),
    Rule(
        name="scheduler.topology_spread",
        code="scheduling.topology_spread",
        severity="warning",
        confidence="medium",
        title="kube-scheduler: {nodes} node(s) didn't match pod topology spread constraints",
        keywords=("topology spread constraints",),
        fields_doc="nodes, total, reason",
        example="0/6 nodes are available: 6 node(s) didn't match pod topology spread constraints.",
    ),
)


def reasons(text: str) -> Iterator[dict[str, str]]:
    """Yield {avail, total, nodes, reason} for each reason of each FailedScheduling message in text."""
    for header in _HEADER.finditer(text):
        pos = header.end()
        while True:
            item = _REASON.match(text, pos)
            if item is None:
                break
            yield {**header.groupdict(), "nodes": item.group("nodes"), "reason": item.group("reason").strip()}
            pos = item.end()
            if not text.startswith(", ", pos):
                break
            pos += 2


def scan(text: str) -> Iterator[Hit]:
    for base in reasons(text):
        reason = base["reason"]
        for rule in REASONS:
            if not any(k in reason for k in rule.keywords):
                continue
            fields = dict(base)
            if rule.pattern is not None:
                found = rule.pattern.search(reason)
                if found is None:
                    continue
                fields.update({k: v for k, v in found.groupdict().items() if v is not None})
            hit = rule.judge(fields, reason)
            if hit is not None:
                yield hit
            break
