"""kube-scheduler FailedScheduling messages: one message lists several reasons, one Signal per reason.

``0/N nodes are available: <count> <reason>, <count> <reason>. preemption: ...`` appears in
FailedScheduling events, in the pod's ``PodScheduled=False`` condition and re-quoted by the training
operator (``Error pod x condition message: ...``).
"""
from __future__ import annotations

from collections.abc import Iterator

from playbooks import linear
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
_HEADER = linear.compile(r"(?P<avail>\d+)/(?P<total>\d+) nodes are available: ")
# One "<count> <reason>" item: plain characters, {taint} groups, and dots that do not end the sentence
# (a dot followed by a space or the end does). RE2 has no lookahead, so a dot is taken with what follows
# it: inside the reason, dots then a character or a {group}; at its end (group "dotted"), dots then the
# separator that stops the reason (",", a "{" never closed, or the sentence's own final dot), matched
# but left out of the reason.
_ITEM = r"[^,.{]|\{[^{}]*\}|\.+(?:[^ ,.{]|\{[^{}]*\})"
_REASON = linear.compile(
    r"(?P<nodes>\d+) (?:(?P<reason>node\(s\) had taint \{[^{}]*\}, that the pod didn't tolerate)"
    rf"|(?P<dotted>(?:{_ITEM})*\.+)(?:,|\{{[^{{}}]*(?:\{{|$)|\.(?: |$))"
    rf"|(?P<plain>(?:{_ITEM})+))"
)
_TAINT = linear.compile(r"taint \{(?P<key>[^:{}]*)(?:: ?(?P<value>[^{}]*))?\}")


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


# Accelerators other than nvidia.com/gpu: the same shortage as insufficient_gpu, another vendor's device.
_ACCELERATORS = ("aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "aws.amazon.com/neurondevice", "amd.com/gpu", "habana.ai/gaudi")


def _insufficient(fields: dict[str, str], text: str) -> Verdict | None:
    # plugins/noderesources/fit.go: "Insufficient <resource>" for every resource, "Too many pods" for pods.
    resource = fields.pop("resource2", None) or fields.get("resource", "")
    fields["resource"] = resource
    if resource == "vpc.amazonaws.com/efa":
        return Verdict(
            code="efa.resource_unavailable",
            severity="error",
            confidence="medium",
            title="kube-scheduler: {nodes} node(s) offer no free vpc.amazonaws.com/efa",
        )
    if resource == "nvidia.com/gpu" or resource in _ACCELERATORS:
        return Verdict(title="kube-scheduler: {nodes} of {total} node(s) have no free {resource}")
    # cpu, memory, pods, ephemeral-storage, hugepages-*, other extended resources: not a GPU shortage.
    # Existing nodes being full is ordinary on an autoscaled cluster; what decides is whether a new node
    # can hold the pod, which is karpenter.no_instance_type's question. Warning / low: it is evidence
    # of record (never silent), but Karpenter's own message about the same pod outranks it.
    return Verdict(
        code="karpenter.no_instance_type",
        severity="warning",
        confidence="low",
        title="kube-scheduler: {nodes} of {total} node(s) lack free {resource} for the pod's requests",
    )


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


def _topology_spread(fields: dict[str, str], text: str) -> Verdict:
    # plugins/podtopologyspread/filtering.go: "... (missing required label)" when a node lacks the
    # constraint's topologyKey; such nodes never count as a domain.
    if "missing required label" in text:
        return Verdict(
            fields={"missing_label": "true"},
            title="kube-scheduler: {nodes} node(s) lack the topology spread constraint's topologyKey label",
        )
    return Verdict()


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
        keywords=("Insufficient ", "Too many pods"),
        pattern=linear.compile(r"Insufficient (?P<resource>\S+)|Too many (?P<resource2>pods)"),
        refine=_insufficient,
        fields_doc="nodes, total, reason, resource (cpu, memory, pods ... give karpenter.no_instance_type)",
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
        # plugins/nodeaffinity (1.22+ "didn't match Pod's node affinity/selector", older "didn't match
        # node selector"), plugins/nodename "didn't match the requested node name" (spec.nodeName).
        keywords=("node affinity/selector", "didn't match node selector", "MatchNodeSelector", "didn't match the requested node name"),
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
        # plugins/volumebinding "had volume node affinity conflict" (newer "didn't match PersistentVolume's
        # node affinity"), "didn't find available persistent volumes to bind"; plugins/volumezone
        # "had no available volume zone".
        keywords=(
            "volume node affinity conflict", "PersistentVolume's node affinity", "VolumeZoneConflict",
            "available persistent volumes to bind", "no available volume zone",
        ),
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
        refine=_topology_spread,
        fields_doc="nodes, total, reason, missing_label",
        example="0/6 nodes are available: 6 node(s) didn't match pod topology spread constraints.",
    ),
    Rule(
        # plugins/nodeports: a hostPort admits one such pod per node, an implicit anti-affinity on the
        # hostname: hence the pod-affinity code.
        name="scheduler.host_ports",
        code="scheduling.pod_affinity_unsatisfiable",
        severity="warning",
        confidence="medium",
        title="kube-scheduler: {nodes} node(s) already use the pod's hostPort",
        keywords=("free ports for the requested pod ports", "PodFitsHostPorts"),
        fields_doc="nodes, total, reason",
        example="0/3 nodes are available: 3 node(s) didn't have free ports for the requested pod ports.",
    ),
    Rule(
        # plugins/nodeunschedulable: cordoned nodes (spec.unschedulable, taint node.kubernetes.io/unschedulable).
        name="scheduler.unschedulable",
        code="scheduling.node_lifecycle_taint",
        severity="warning",
        confidence="medium",
        title="kube-scheduler: {nodes} node(s) are cordoned (unschedulable)",
        keywords=("were unschedulable",),
        refine=lambda f, t: Verdict(fields={"key": "node.kubernetes.io/unschedulable"}),
        fields_doc="nodes, total, reason, key",
        example="0/4 nodes are available: 1 node(s) were unschedulable, 3 node(s) didn't match Pod's node affinity/selector.",
    ),
)

# Line rules: scheduler messages without a "<count> node(s)" item.
LINE_RULES: tuple[Rule, ...] = (
    Rule(
        # plugins/volumebinding: "pod has unbound immediate PersistentVolumeClaims" (no node count; older
        # releases append "(repeated N times)"). Not a zone conflict yet: the claim is not bound at all
        # (no matching PV, a failing provisioner or StorageClass); the volume code is the nearest.
        name="scheduler.unbound_pvc",
        code="scheduling.volume_zone_conflict",
        severity="warning",
        confidence="low",
        title="kube-scheduler: the pod's PersistentVolumeClaim is not bound (Immediate binding)",
        keywords=("unbound immediate PersistentVolumeClaims",),
        refine=lambda f, t: Verdict(fields={"problem": "unbound immediate PersistentVolumeClaims"}),
        fields_doc="problem",
        example="0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
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
            reason = next(name for name in ("reason", "dotted", "plain") if item.group(name) is not None)
            yield {**header.groupdict(), "nodes": item.group("nodes"), "reason": item.group(reason).strip()}
            pos = item.end(reason)
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
