"""Karpenter's scheduling errors, per NodePool, from v0.5 (Provisioner) to v1.14 (NodePool).

Sources: kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/scheduler.go (per-NodePool
errors and limits), nodeclaim.go (``InstanceTypeFilterError``: the ``no instance type ...`` family),
topology.go, events.go (``Failed to schedule pod, <err>``, ``Nominated``), pkg/scheduling/taints.go and
requirements.go; pkg/controllers/provisioning/provisioner.go (``NoCompatibleInstanceTypes``).

How a NodePool is named, by version (the capture is ``nodepool`` in every form):

- v0.5-v0.31: ``incompatible with provisioner "<p>", <err>`` and ``... for provisioner: "<p>"``;
- v0.32-v1.4: ``incompatible with nodepool "<np>", daemonset overhead={...}, <err>``;
- v1.5+: no prefix; errors of several NodePools are joined with ``; `` and only some carry
  ``(NodePool=<np>)`` (awslabs/operatorpkg serrors); the ``no instance type ...`` errors name the
  NodePool only inside ``requirements=... karpenter.sh/nodepool In [<np>]`` (v1.3+ suffix).

A segment inherits the NodePool of an earlier ``incompatible with nodepool "x"`` prefix (v1.0-1.4
wraps one NodePool's multi-error in it), never the ``(NodePool=x)`` of another segment.
"""
from __future__ import annotations

from collections.abc import Iterator

from playbooks import linear
from playbooks.signatures.model import Hit, Rule, Verdict
from playbooks.signatures.scheduling import taint_verdict

# v0.5-v1.4 prefix: incompatible with provisioner|nodepool "x"
_PREFIX = linear.compile(r'incompatible with (?:nodepool|provisioner) \\?"(?P<np>[^"\\]{1,253})')
# v0.31-v1.4: for provisioner: "x" / for nodepool: "x" / for nodepool "x"; v0.37-v1.4 minValues: NodePool "x"
_QUOTED = linear.compile(r'(?:nodepool|provisioner|NodePool):? \\?"(?P<np>[^"\\]{1,253})')
# v1.5+: (NodePool=x) and, in JSON logs, "NodePool":{"name":"x"} (handled by the catalogue)
_STRUCTURED = linear.compile(r"NodePool=(?P<np>[^\s,;()]{1,253})")
# v1.3+: requirements=..., karpenter.sh/nodepool In [x]; v0.x: karpenter.sh/provisioner-name In [x]
_POOL_IN = linear.compile(r"karpenter\.sh/(?:nodepool|provisioner-name) In \[(?P<np>[^\]\s]{1,253})\]")
# incompatible requirements, key karpenter.sh/nodepool, <pod's> not in karpenter.sh/nodepool In [x] (the NodePool's)
_NOT_IN_POOL = linear.compile(r"not in karpenter\.sh/(?:nodepool|provisioner-name) In \[(?P<np>[^\]\s]{1,253})\]")

# RE2 counts at most 1000 repetitions: {0,2000} is written as two of {0,1000}, the same language.
_RESOURCES = linear.compile(r"resources[= ](?P<resources>\{[^{}]{0,1000}[^{}]{0,1000}\})")
_GPUS = linear.compile(r'nvidia\.com/gpu\\?":\s?\\?"(?P<gpus>\d+)')
_REQUIREMENTS = linear.compile(r"requirements[= ](?P<requirements>[^;{}]{1,1000}[^;{}]{0,500})")
_CAPACITY_TYPE = linear.compile(r"karpenter\.sh/capacity-type In \[(?P<capacity_type>[^\]]{1,100})\]")
_ZONES = linear.compile(r"topology\.kubernetes\.io/zone In \[(?P<zones>[^\]]{1,400})\]")
_TYPO = linear.compile(r"\((?P<typo>CPU request >= 1 Million, m vs M typo\?)\)")


def _nodepool_of(segment: str) -> tuple[str | None, bool]:
    """The NodePool a segment names, and whether it is the v0.5-v1.4 prefix that later segments inherit."""
    found = _PREFIX.search(segment)
    if found:
        return found.group("np"), True
    for pattern in (_STRUCTURED, _QUOTED, _NOT_IN_POOL):
        found = pattern.search(segment)
        if found:
            return found.group("np"), False
    start = segment.find("requirements")  # the NodeClaim's requirements list, not the pod's selector
    if start >= 0:
        found = _POOL_IN.search(segment, start)
        if found:
            return found.group("np"), False
    return None, False


def _no_type(fields: dict[str, str], text: str) -> Verdict:
    """Cut what follows the requirements list ("..., resources={...}", "(no instance ...)")."""
    requirements = fields.get("requirements")
    if requirements:
        for tail in (", resources", " (no instance", " and requirements", " (CPU request"):
            requirements = requirements.split(tail, 1)[0]
        fields["requirements"] = requirements.strip(" ,")
    return Verdict()


def _limits(fields: dict[str, str], text: str) -> Verdict:
    # v0.5-v0.37 logged the resource ("cpu resource usage of 96 exceeds limit of 64"); later versions
    # do not name it: any resource of spec.limits (cpu, memory, nvidia.com/gpu, nodes) can be the one.
    if "node limits have been exhausted" in text:
        return Verdict(fields={"resource": "nodes"}, title="Karpenter: NodePool[ {nodepool}] has reached its spec.limits on nodes")
    if fields.get("resource"):
        return Verdict(title="Karpenter: NodePool[ {nodepool}] has reached its spec.limits on {resource}")
    return Verdict()


def _offering(fields: dict[str, str], text: str) -> Verdict:
    _no_type(fields, text)
    return Verdict()


def _key_mismatch(fields: dict[str, str], text: str) -> Verdict | None:
    key = fields.get("key", "")
    if key in ("karpenter.sh/nodepool", "karpenter.sh/provisioner-name"):
        # The pod selects another NodePool by name: expected noise for every other NodePool.
        return Verdict(severity="info", confidence="low", title="Karpenter: pod targets another NodePool ({key})")
    return Verdict(fields={"label": key})


_KEY_END = linear.compile(r"[=:]")


def _karpenter_taint(fields: dict[str, str], text: str) -> Verdict | None:
    taint = fields.pop("taint2", None) or fields.get("taint", "")
    fields["taint"] = taint
    key = _KEY_END.split(taint, maxsplit=1)[0]
    extra = {"key": key}
    if ":" in taint:
        extra["effect"] = taint.rsplit(":", 1)[1]
    verdict = taint_verdict(key, scheduler="Karpenter")
    return Verdict(verdict.code, verdict.severity, verdict.confidence, verdict.title, extra)


def _topology(fields: dict[str, str], text: str) -> Verdict:
    kind = fields.get("constraint", "")
    if kind == "topology spread":
        return Verdict(
            code="scheduling.topology_spread",
            severity="warning",
            title="Karpenter: topology spread constraint on {key} cannot be satisfied",
        )
    if kind == "pod anti-affinity":
        return Verdict(severity="warning", title="Karpenter: pod anti-affinity on {key} cannot be satisfied")
    return Verdict()


def _min_values(fields: dict[str, str], text: str) -> Verdict:
    label = fields.pop("label2", None) or fields.get("label")
    if label:
        fields["label"] = label.strip("[]")
    return Verdict()


_NO_TYPE_FIELDS = "nodepool, resources (JSON of the requests), gpus (requested nvidia.com/gpu), requirements, capacity_type, zones, typo"
_NO_TYPE_EXTRACT = (_RESOURCES, _GPUS, _REQUIREMENTS, _CAPACITY_TYPE, _ZONES, _TYPO)

# Rules applied to each "; "-separated segment of a Karpenter scheduling error.
SEGMENT_RULES: tuple[Rule, ...] = (
    Rule(
        # scheduler.go: v0.5-v0.30 "all available instance types exceed provisioner limits" (and
        # pkg/utils/resources "<r> resource usage of <u> exceeds limit of <l>"); v0.31-v1.2 "... for
        # provisioner|nodepool: \"x\""; v1.3-v1.4 "... for nodepool \"x\""; v1.5+ "... for nodepool
        # (NodePool=x)"; v1.5+ "node limits have been exhausted for nodepool (NodePool=x)".
        name="karpenter.limits",
        code="karpenter.nodepool_limit_reached",
        severity="error",
        confidence="high",
        title="Karpenter: NodePool[ {nodepool}] has reached its spec.limits",
        keywords=("exceed limits for", "exceed provisioner limits", "node limits have been exhausted", "resource usage of"),
        pattern=linear.compile(r"exceed (?:limits for|provisioner limits)|node limits have been exhausted|resource usage of [\d.]+ exceeds limit"),
        extract=(linear.compile(r"(?P<resource>[a-z0-9./-]{1,100}) resource usage of (?P<usage>[\d.]+) exceeds limit of (?P<limit>[\d.]+)"),),
        refine=_limits,
        fields_doc="nodepool, resource (only when the message names it: v0.x, or nodes), usage, limit",
        example="Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=gpu)",
    ),
    Rule(
        # nodeclaim.go InstanceTypeFilterError (v0.32+; v1.3+ appends ", requirements=..., resources=..."):
        # every type that met the requirements and fit lacked an offering. An offering is a zone AND a
        # capacity type (spot, on-demand, reserved), not a zone alone.
        name="karpenter.no_offering",
        code="karpenter.offering_unavailable_in_zone",
        severity="error",
        confidence="medium",
        title="Karpenter: no instance type has an available offering (zone and capacity type)[ in NodePool {nodepool}]",
        keywords=("no instance type has the required offering", "had enough resources, had a required offering"),
        extract=_NO_TYPE_EXTRACT,
        refine=_offering,
        fields_doc=_NO_TYPE_FIELDS,
        example='incompatible with nodepool "gpu", daemonset overhead={"cpu":"200m"}, no instance type has the required offering',
    ),
    Rule(
        # nodeclaim.go (v0.32+): pairs and the tuple, where Karpenter cannot tell resources from offering.
        name="karpenter.no_type_ambiguous",
        code="karpenter.no_instance_type",
        severity="error",
        confidence="medium",
        title="Karpenter: no instance type with enough resources and an available offering[ in NodePool {nodepool}]",
        keywords=(
            "no instance type which had enough resources and the required offering",
            "no instance type met the requirements/resources/offering tuple",
        ),
        extract=_NO_TYPE_EXTRACT,
        refine=_no_type,
        fields_doc=_NO_TYPE_FIELDS,
        example='{"level":"ERROR","message":"could not schedule pod","error":"no instance type which had enough resources and the required offering met the scheduling requirements"}',
    ),
    Rule(
        # scheduler.go v0.37+: "pod didn’t schedule because NodePool \"x\" couldn’t meet minValues
        # requirements, minValues requirement is not met for \"key\"" (curly apostrophes, v0.37-v1.4);
        # v1.5+ "... couldn’t meet minValues requirements, minValues requirement is not met for label(s)
        # (label(s)=[k]) (NodePool=x)"; pkg/scheduling/requirements.go SatisfiesMinValues.
        name="karpenter.min_values",
        code="karpenter.no_instance_type",
        severity="error",
        confidence="high",
        title="Karpenter: NodePool[ {nodepool}] cannot meet minValues[ for {label}]",
        keywords=("meet minValues requirements", "minValues requirement is not met"),
        extract=(
            linear.compile(r'minValues requirement is not met for \\?"(?P<label>[^"\\]{1,253})'),
            linear.compile(r"\(label(?:\(s\))?=(?P<label2>\[[^\]]{1,400}\]|[^\s,)]{1,253})"),
        ),
        refine=_min_values,
        fields_doc="nodepool, label (the requirement key(s) short of minValues)",
        example="Failed to schedule pod, pod didn’t schedule because NodePool couldn’t meet minValues requirements, minValues requirement is not met for label(s) (label(s)=[karpenter.k8s.aws/instance-family]) (NodePool=gpu)",
    ),
    Rule(
        # nodeclaim.go (v0.32+) singles and the "or" triples: one criterion alone excluded every type;
        # v0.5-v0.31 "no instance type satisfied resources {...} and requirements ..."; older
        # "did not fit in instance type option(s)"; provisioner.go / scheduler.go v1.2+ "nodepool
        # requirements filtered out all available instance types" and the NodePool event
        # NoCompatibleInstanceTypes "NodePool requirements filtered out all compatible available instance
        # types[ due to minValues incompatibility]" (pkg/controllers/provisioning/scheduling/events.go).
        name="karpenter.no_type",
        code="karpenter.no_instance_type",
        severity="error",
        confidence="high",
        title="Karpenter: no instance type[ in NodePool {nodepool}] fits the pod's requests and requirements",
        keywords=(
            "no instance type has enough resources",
            "no instance type met all requirements",
            "no instance type met the scheduling requirements",
            "no instance type had enough resources or had a required offering",
            "no instance type satisfied resources",
            "no instance type satisfies both scheduling and dynamic resource requirements",
            "the required offering had the required resources",
            "did not fit in instance type option",
            "requirements filtered out all available instance types",
            "requirements filtered out all compatible available instance types",
            "requirements filtered out all instance types",
        ),
        extract=_NO_TYPE_EXTRACT,
        refine=_no_type,
        fields_doc=_NO_TYPE_FIELDS,
        example='Could not schedule pod, incompatible with provisioner "default", no instance type satisfied resources {"cpu":"1","nvidia.com/gpu":"16"} and requirements karpenter.k8s.aws/instance-family In [p4d]',
    ),
    Rule(
        # pkg/scheduling/requirements.go: label "k" does not have known values[ (typo of "k2"?)]
        name="karpenter.unknown_label",
        code="scheduling.node_selector_mismatch",
        severity="error",
        confidence="high",
        title="Karpenter: label {label} has no known values[ in NodePool {nodepool}]",
        keywords=("does not have known values",),
        pattern=linear.compile(r'label \\?"(?P<label>[^"\\]{1,253})\\?" does not have known values'),
        extract=(linear.compile(r'typo of \\?"(?P<suggestion>[^"\\]{1,253})'),),
        fields_doc="nodepool, label, suggestion (Karpenter's 'typo of' hint)",
        example='incompatible with nodepool "gpu", incompatible requirements, label "eks.amazonaws.com/instance-gpu-name" does not have known values',
    ),
    Rule(
        # pkg/scheduling/requirements.go: key k, <pod's requirement> not in <NodePool's requirement>
        name="karpenter.incompatible_key",
        code="scheduling.node_selector_mismatch",
        severity="error",
        confidence="high",
        title="Karpenter: pod requirement on {key} is incompatible with the NodePool[ {nodepool}]",
        keywords=("incompatible requirements, key ",),
        pattern=linear.compile(r"incompatible requirements, key (?P<key>[^\s,;]{1,253})(?:, (?P<requirement>[^;]{1,400}))?"),
        refine=_key_mismatch,
        fields_doc="nodepool, key, label (same as key), requirement",
        example='incompatible with nodepool "gpu", daemonset overhead={"cpu":"180m"}, incompatible requirements, key karpenter.k8s.aws/instance-gpu-name, karpenter.k8s.aws/instance-gpu-name In [h100] not in karpenter.k8s.aws/instance-gpu-name In [a100]',
    ),
    Rule(
        # pkg/scheduling/taints.go: v0.x-v1.4 "did not tolerate k=v:Effect"; v1.5+ "did not tolerate
        # taint (taint=k=v:Effect)".
        name="karpenter.taint",
        code="scheduling.untolerated_taint",
        severity="error",
        confidence="medium",
        title="Karpenter: pod does not tolerate taint {taint}[ of NodePool {nodepool}]",
        keywords=("did not tolerate",),
        pattern=linear.compile(r"did not tolerate (?:taint \(taint=(?P<taint>[^)\s]{1,320})\)|(?P<taint2>[^\s;,()]{1,320}))"),
        refine=_karpenter_taint,
        fields_doc="nodepool, taint (k=v:Effect or k:Effect), key, effect",
        example='incompatible with nodepool "gpu", daemonset overhead={"cpu":"200m"}, did not tolerate taint (taint=gpu-workload:NoSchedule)',
    ),
    Rule(
        # topology.go: unsatisfiable topology constraint for <topology spread|pod affinity|pod anti-affinity>, key=k (counts = ...)
        name="karpenter.topology",
        code="scheduling.pod_affinity_unsatisfiable",
        severity="error",
        confidence="medium",
        title="Karpenter: pod affinity on {key} cannot be satisfied",
        keywords=("unsatisfiable topology constraint",),
        pattern=linear.compile(r"unsatisfiable topology constraint for (?P<constraint>topology spread|pod affinity|pod anti-affinity|key)[, ]+(?:key=)?(?P<key>[^\s,()]{1,253})"),
        refine=_topology,
        fields_doc="nodepool, constraint (topology spread|pod affinity|pod anti-affinity), key",
        example="Failed to schedule pod, unsatisfiable topology constraint for pod affinity, key=kubernetes.io/hostname",
    ),
    Rule(
        # v0.5-v0.8 (provisioner) rejected pods with pod affinity / anti-affinity outright.
        name="karpenter.anti_affinity_unsupported",
        code="scheduling.pod_affinity_unsatisfiable",
        severity="error",
        confidence="medium",
        title="Karpenter: the pod's affinity constraint is not supported by the provisioner",
        keywords=("anti-affinity is not supported", "affinity is not supported"),
        fields_doc="nodepool",
        example="Could not schedule pod, pod anti-affinity is not supported",
    ),
    Rule(
        # nodeclaim.go v1.x "incompatible volume requirements, ..." and volumetopology.go (v1.5+
        # serrors) "failed to validate pvc, pvc with immediate volume binding mode must be bound",
        # "unbound pvc must define a storage class": the pod's volume decides where it can run.
        name="karpenter.volume",
        code="scheduling.volume_zone_conflict",
        severity="error",
        confidence="medium",
        title="Karpenter: the pod's volume cannot be placed with a node of NodePool[ {nodepool}]",
        keywords=("incompatible volume requirements", "immediate volume binding mode must be bound", "unbound pvc must define a storage class"),
        extract=(linear.compile(r"PersistentVolumeClaim=(?P<pvc>[^\s,;()]{1,253})"),),
        fields_doc="nodepool, pvc",
        example="Failed to schedule pod, incompatible volume requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1a] not in topology.kubernetes.io/zone In [us-east-1b us-east-1c]",
    ),
    Rule(
        # pkg/scheduling/hostportusage.go (v1.5+ serrors): the pod's hostPort is taken on the candidate
        # node. A hostPort admits one such pod per node: an implicit anti-affinity on the hostname, hence
        # the pod-affinity code.
        name="karpenter.hostport",
        code="scheduling.pod_affinity_unsatisfiable",
        severity="warning",
        confidence="medium",
        title="Karpenter: the pod's hostPort[ {port}] is already in use on the candidate node",
        keywords=("hostport conflicts with existing hostport",),
        extract=(linear.compile(r"pod-hostport-port=(?P<port>\d{1,5})"),),
        fields_doc="nodepool, port",
        example="Failed to schedule pod, pod hostport conflicts with existing hostport configuration (pod-hostport-ip=0.0.0.0, pod-hostport-port=8080, pod-hostport-protocol=TCP)",
    ),
)

SEGMENT_GATES: tuple[str, ...] = tuple(k for rule in SEGMENT_RULES for k in rule.keywords)


def scan_segments(text: str, base: dict[str, str] | None = None) -> Iterator[Hit]:
    """Hits for each "; "-separated segment, each with the NodePool it belongs to (see module doc)."""
    inherited = (base or {}).get("nodepool")
    for segment in text.split("; "):
        if len(segment) < 16:  # shorter than any rule's keyword
            continue
        own, is_prefix = _nodepool_of(segment)
        if is_prefix:
            inherited = own
        nodepool = own or inherited
        for rule in SEGMENT_RULES:
            if not any(k in segment for k in rule.keywords):
                continue
            fields = dict(base or {})
            if nodepool:
                fields["nodepool"] = nodepool
            hit = rule.match(segment, fields)
            if hit is not None:
                yield hit
