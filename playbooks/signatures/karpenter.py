"""Karpenter: scheduling errors (per NodePool), EC2 launch errors, NodeClaim lifecycle, disruption.

Karpenter joins the errors of several NodePools with ``; `` and prefixes each with ``incompatible with
nodepool "<np>", daemonset overhead={...}, `` (v1.0-1.4; ``provisioner`` before v1) or suffixes
``(NodePool=<np>)`` (v1.5+). Scheduling errors are therefore scanned per segment, and each Signal
carries the NodePool that segment names (or the last one named before it).
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from playbooks.signatures.model import Hit, Rule, Verdict
from playbooks.signatures.scheduling import taint_verdict

_NODEPOOL = re.compile(r'(?:nodepool|provisioner):? \\?"(?P<np>[^"\\]{1,253})|NodePool=(?P<np2>[^\s,;()]{1,253})')
_RESOURCES = re.compile(r"resources[= ](?P<resources>\{[^{}]{0,2000}\})")
_GPUS = re.compile(r'nvidia\.com/gpu\\?":\s?\\?"(?P<gpus>\d+)')
_REQUIREMENTS = re.compile(r"requirements[= ](?P<requirements>[^;{}]{1,1500})")


def _no_type(fields: dict[str, str], text: str) -> Verdict:
    """Cut what follows the requirements list ("..., resources={...}", "(no instance type ...)")."""
    requirements = fields.get("requirements")
    if requirements:
        for tail in (", resources", " (no instance", " and requirements"):
            requirements = requirements.split(tail, 1)[0]
        fields["requirements"] = requirements.strip(" ,")
    return Verdict()


def _key_mismatch(fields: dict[str, str], text: str) -> Verdict | None:
    key = fields.get("key", "")
    if key in ("karpenter.sh/nodepool", "karpenter.sh/provisioner-name"):
        # The pod selects another NodePool by name: expected noise for every other NodePool.
        return Verdict(severity="info", confidence="low", title="Karpenter: pod targets another NodePool ({key})")
    return Verdict(fields={"label": key})


def _karpenter_taint(fields: dict[str, str], text: str) -> Verdict | None:
    taint = fields.pop("taint2", None) or fields.get("taint", "")
    fields["taint"] = taint
    key = re.split(r"[=:]", taint, maxsplit=1)[0]
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


_NO_TYPE_FIELDS = "nodepool, resources (JSON of the requests), gpus (requested nvidia.com/gpu), requirements"

# Rules applied to each "; "-separated segment of a Karpenter scheduling error.
SEGMENT_RULES: tuple[Rule, ...] = (
    Rule(
        name="karpenter.limits",
        code="karpenter.nodepool_limit_reached",
        severity="error",
        confidence="high",
        title="Karpenter: NodePool[ {nodepool}] has reached its spec.limits",
        keywords=("exceed limits for", "exceed provisioner limits", "node limits have been exhausted"),
        fields_doc="nodepool",
        example="Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=gpu)",
    ),
    Rule(
        name="karpenter.no_offering",
        code="karpenter.offering_unavailable_in_zone",
        severity="error",
        confidence="medium",
        title="Karpenter: no instance type has the required offering (zone / capacity type)[ in NodePool {nodepool}]",
        keywords=("no instance type has the required offering", "had enough resources, had a required offering"),
        extract=(_RESOURCES, _GPUS, _REQUIREMENTS),
        refine=_no_type,
        fields_doc=_NO_TYPE_FIELDS,
        example='incompatible with nodepool "gpu", daemonset overhead={"cpu":"200m"}, no instance type has the required offering',
    ),
    Rule(
        name="karpenter.no_type_ambiguous",
        code="karpenter.no_instance_type",
        severity="error",
        confidence="medium",
        title="Karpenter: no instance type with enough resources and an available offering[ in NodePool {nodepool}]",
        keywords=(
            "no instance type which had enough resources and the required offering",
            "no instance type met the requirements/resources/offering tuple",
            "minValues requirement is not met",
        ),
        extract=(_RESOURCES, _GPUS, _REQUIREMENTS),
        refine=_no_type,
        fields_doc=_NO_TYPE_FIELDS,
        example='{"level":"ERROR","message":"could not schedule pod","error":"no instance type which had enough resources and the required offering met the scheduling requirements"}',
    ),
    Rule(
        name="karpenter.no_type",
        code="karpenter.no_instance_type",
        severity="error",
        confidence="high",
        title="Karpenter: no instance type[ in NodePool {nodepool}] fits the pod's requests and requirements",
        keywords=(
            "no instance type has enough resources",
            "no instance type met all requirements",
            "no instance type met the scheduling requirements",
            "no instance type satisfied resources",
            "the required offering had the required resources",
            "did not fit in instance type option",
            "requirements filtered out all available instance types",
        ),
        extract=(_RESOURCES, _GPUS, _REQUIREMENTS),
        refine=_no_type,
        fields_doc=_NO_TYPE_FIELDS,
        example='Could not schedule pod, incompatible with provisioner "default", no instance type satisfied resources {"cpu":"1","nvidia.com/gpu":"16"} and requirements karpenter.k8s.aws/instance-family In [p4d]',
    ),
    Rule(
        name="karpenter.unknown_label",
        code="scheduling.node_selector_mismatch",
        severity="error",
        confidence="high",
        title="Karpenter: label {label} has no known values[ in NodePool {nodepool}]",
        keywords=("does not have known values",),
        pattern=re.compile(r'label \\?"(?P<label>[^"\\]{1,253})\\?" does not have known values'),
        extract=(re.compile(r'typo of \\?"(?P<suggestion>[^"\\]{1,253})'),),
        fields_doc="nodepool, label, suggestion (Karpenter's 'typo of' hint)",
        example='incompatible with nodepool "gpu", incompatible requirements, label "eks.amazonaws.com/instance-gpu-name" does not have known values',
    ),
    Rule(
        name="karpenter.incompatible_key",
        code="scheduling.node_selector_mismatch",
        severity="error",
        confidence="high",
        title="Karpenter: pod requirement on {key} is incompatible with the NodePool[ {nodepool}]",
        keywords=("incompatible requirements, key ",),
        pattern=re.compile(r"incompatible requirements, key (?P<key>[^\s,;]{1,253})(?:, (?P<requirement>[^;]{1,400}))?"),
        refine=_key_mismatch,
        fields_doc="nodepool, key, label (same as key), requirement",
        example='incompatible with nodepool "gpu", daemonset overhead={"cpu":"180m"}, incompatible requirements, key karpenter.k8s.aws/instance-gpu-name, karpenter.k8s.aws/instance-gpu-name In [h100] not in karpenter.k8s.aws/instance-gpu-name In [a100]',
    ),
    Rule(
        name="karpenter.taint",
        code="scheduling.untolerated_taint",
        severity="error",
        confidence="medium",
        title="Karpenter: pod does not tolerate taint {taint}[ of NodePool {nodepool}]",
        keywords=("did not tolerate",),
        pattern=re.compile(r"did not tolerate (?:taint \(taint=(?P<taint>[^)\s]{1,320})\)|(?P<taint2>[^\s;,()]{1,320}))"),
        refine=_karpenter_taint,
        fields_doc="nodepool, taint (k=v:Effect or k:Effect), key, effect",
        example='incompatible with nodepool "gpu", did not tolerate taint (taint=gpu-workload:NoSchedule)',
    ),
    Rule(
        name="karpenter.topology",
        code="scheduling.pod_affinity_unsatisfiable",
        severity="error",
        confidence="medium",
        title="Karpenter: pod affinity on {key} cannot be satisfied",
        keywords=("unsatisfiable topology constraint",),
        pattern=re.compile(r"unsatisfiable topology constraint for (?P<constraint>topology spread|pod affinity|pod anti-affinity|key)[, ]+(?:key=)?(?P<key>[^\s,()]{1,253})"),
        refine=_topology,
        fields_doc="nodepool, constraint (topology spread|pod affinity|pod anti-affinity), key",
        example="Failed to schedule pod, unsatisfiable topology constraint for pod affinity, key=kubernetes.io/hostname",
    ),
    Rule(
        name="karpenter.anti_affinity_unsupported",
        code="scheduling.pod_affinity_unsatisfiable",
        severity="error",
        confidence="medium",
        title="Karpenter: the pod's affinity constraint is not supported by the provisioner",
        keywords=("anti-affinity is not supported", "affinity is not supported"),
        fields_doc="nodepool",
        example="Could not schedule pod, pod anti-affinity is not supported",
    ),
)

SEGMENT_GATES: tuple[str, ...] = tuple(k for rule in SEGMENT_RULES for k in rule.keywords)


def _nodepool(segment: str) -> str | None:
    found = _NODEPOOL.search(segment)
    if found is None:
        return None
    return found.group("np") or found.group("np2")


def scan_segments(text: str, base: dict[str, str] | None = None) -> Iterator[Hit]:
    """Hits for each "; "-separated segment; a segment inherits the last NodePool named before it."""
    nodepool = (base or {}).get("nodepool")
    for segment in text.split("; "):
        nodepool = _nodepool(segment) or nodepool
        for rule in SEGMENT_RULES:
            if not any(k in segment for k in rule.keywords):
                continue
            fields = dict(base or {})
            if nodepool:
                fields["nodepool"] = nodepool
            hit = rule.match(segment, fields)
            if hit is not None:
                yield hit


# Karpenter files quota, subnet and Unsupported launch errors under "insufficient capacity" as well;
# their own rules own those lines unless a real capacity error is named too.
_NOT_CAPACITY = (
    "VcpuLimitExceeded", "MaxSpotInstanceCountExceeded", "MaxFleetCountExceeded", "vCPU limit",
    "InsufficientFreeAddressesInSubnet", "not supported in your requested Availability Zone",
)
_REAL_CAPACITY = ("InsufficientInstanceCapacity", "do not have sufficient", "UnfulfillableCapacity", "ReservationCapacityExceeded")


def _ice(fields: dict[str, str], text: str) -> Verdict | None:
    if any(c in text for c in _NOT_CAPACITY) and not any(c in text for c in _REAL_CAPACITY):
        return None
    return Verdict()


def _registration(fields: dict[str, str], text: str) -> Verdict | None:
    if "ttl" in text or "missing required startup taint" in text:
        return Verdict(severity="error", confidence="high", title="Karpenter: NodeClaim never registered a Node and was deleted")
    if "NodeRegistrationHealthy" in text:
        if "False" not in text:
            return None
        return Verdict(severity="error", confidence="medium", title="Karpenter: NodePool NodeRegistrationHealthy=False (recent launches did not register)")
    if "Unable to register node" in text:
        if "Unauthorized" in text or "Forbidden" in text or "forbidden" in text:
            return Verdict(severity="error", confidence="high", title="kubelet cannot register the node: API server says Unauthorized (node role not mapped)")
        return Verdict(severity="warning", confidence="low", title="kubelet could not register the node with the API server (yet)")
    return Verdict()


def _out_of(fields: dict[str, str], text: str) -> Verdict | None:
    resource = fields.get("resource", "")
    if "/" not in resource:
        return None  # OutOfcpu / OutOfmemory: not an extended resource
    if fields.get("capacity") == "0":
        return Verdict()
    return Verdict(severity="warning", confidence="low", title="kubelet rejected the pod: not enough {resource} on the node")


def _disruption(fields: dict[str, str], text: str) -> Verdict:
    reason = fields.pop("reason2", None) or fields.get("reason") or fields.get("method") or "unknown"
    return Verdict(fields={"reason": reason[:1].upper() + reason[1:]})


LINE_RULES: tuple[Rule, ...] = (
    Rule(
        name="ec2.insufficient_capacity",
        code="karpenter.insufficient_capacity",
        severity="error",
        confidence="high",
        title="EC2 has no capacity[ for {instance_type}][ in {zone}] right now",
        keywords=("InsufficientInstanceCapacity", "insufficient capacity", "InsufficientCapacityError", "do not have sufficient", "UnfulfillableCapacity", "ReservationCapacityExceeded"),
        extract=(
            re.compile(r"(?P<error_code>InsufficientInstanceCapacity|UnfulfillableCapacity|ReservationCapacityExceeded)"),
            re.compile(r"sufficient (?P<instance_type>[a-z0-9-]{1,20}\.[a-z0-9-]{1,20}) capacity"),
            re.compile(r"Availability Zone you requested \((?P<zone>[a-z0-9-]{1,30})\)"),
            re.compile(r"NodeClaim (?P<nodeclaim>[a-z0-9][a-z0-9-]{0,240}-[a-z0-9]{5})\b"),
        ),
        refine=_ice,
        fields_doc="error_code, instance_type, zone, nodeclaim",
        example="NodeClaim gpu-x8k2p event: creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient p5.48xlarge capacity in the Availability Zone you requested (us-east-2a).",
    ),
    Rule(
        name="ec2.unsupported_zone",
        code="karpenter.offering_unavailable_in_zone",
        severity="error",
        confidence="high",
        title="EC2: instance type[ {instance_type}] is not offered in the requested Availability Zone[ {zone}]",
        keywords=("not supported in your requested Availability Zone", "requested configuration is currently not supported"),
        extract=(
            re.compile(r"instance type \((?P<instance_type>[a-z0-9.-]{1,40})\)"),
            re.compile(r"Availability Zone \((?P<zone>[a-z0-9-]{1,30})\)"),
            re.compile(r"choosing (?P<alternatives>[a-z0-9-]+(?:, [a-z0-9-]+)*)"),
        ),
        fields_doc="instance_type, zone, alternatives (zones EC2 suggests)",
        example="Unsupported: Your requested instance type (p4d.24xlarge) is not supported in your requested Availability Zone (us-west-2d). Please retry your request by not specifying an Availability Zone or choosing us-west-2a, us-west-2b, us-west-2c.",
    ),
    Rule(
        name="ec2.quota",
        code="karpenter.quota_exceeded",
        severity="error",
        confidence="high",
        title="EC2 account quota blocks the launch[ ({error_code})]",
        keywords=("VcpuLimitExceeded", "MaxSpotInstanceCountExceeded", "MaxFleetCountExceeded", "current vCPU limit", "Max spot instance count exceeded"),
        extract=(
            re.compile(r"(?P<error_code>VcpuLimitExceeded|MaxSpotInstanceCountExceeded|MaxFleetCountExceeded)"),
            re.compile(r"current vCPU limit of (?P<limit>\d+)"),
        ),
        fields_doc="error_code, limit (vCPU)",
        example="creating instance, insufficient capacity, with fleet error(s), VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU limit of 0 allows for the instance bucket that the specified instance type belongs to.",
    ),
    Rule(
        name="ec2.subnet",
        code="karpenter.subnet_problem",
        severity="error",
        confidence="high",
        title="Karpenter: subnet problem ({problem})",
        keywords=("InsufficientFreeAddressesInSubnet", "not enough free addresses in subnet", "no subnets matched selector", "no subnets found", "InvalidSubnetID"),
        pattern=re.compile(r"(?P<problem>InsufficientFreeAddressesInSubnet|not enough free addresses in subnet|no subnets matched selector|no subnets found|InvalidSubnetID[.\w]*)"),
        extract=(re.compile(r"(?P<subnet>subnet-[0-9a-f]{6,})"),),
        fields_doc="problem, subnet",
        example="InsufficientFreeAddressesInSubnet: There are not enough free addresses in subnet 'subnet-0a1b2c3d4e5f' to satisfy the requested number of instances.",
    ),
    Rule(
        name="ec2.volume_zone",
        code="scheduling.volume_zone_conflict",
        severity="error",
        confidence="high",
        title="EBS volume is in a different Availability Zone than the node",
        keywords=("InvalidVolume.ZoneMismatch",),
        extract=(re.compile(r"(?P<volume>vol-[0-9a-f]{6,})"),),
        fields_doc="volume",
        example="AttachVolume.Attach failed for volume \"pvc-1\" : InvalidVolume.ZoneMismatch: The volume 'vol-0abc123def' is not in the same availability zone as instance 'i-0123'",
    ),
    Rule(
        name="nodeclaim.registration",
        code="karpenter.node_registration_failed",
        severity="warning",
        confidence="medium",
        title="Karpenter: NodeClaim launched but its Node has not registered",
        keywords=("Node not registered with cluster", "registration ttl", "missing required startup taint", "NodeRegistrationHealthy", "Unable to register node"),
        extract=(re.compile(r'err="(?P<error>[^"]{1,300})"'),),
        refine=_registration,
        fields_doc="error (kubelet err=)",
        example="Registered  Unknown  NodeNotFound  Node not registered with cluster",
    ),
    Rule(
        name="nodeclaim.resource_not_registered",
        code="karpenter.resource_not_registered",
        severity="error",
        confidence="high",
        title="Node never advertised the requested[ {resource}] resource: its device plugin is missing or failing",
        keywords=("ResourceNotRegistered", "was requested but not registered"),
        extract=(re.compile(r'Resource \\?"(?P<resource>[^"\\]{1,253})\\?" was requested but not registered'),),
        fields_doc="resource",
        example='Initialized  False  ResourceNotRegistered  Resource "vpc.amazonaws.com/efa" was requested but not registered',
    ),
    Rule(
        name="kubelet.out_of_resource",
        code="karpenter.resource_not_registered",
        severity="error",
        confidence="high",
        title="kubelet rejected the pod: node advertises no {resource} (capacity 0)",
        keywords=("didn't have enough resource", "OutOfnvidia.com", "OutOfvpc.amazonaws.com"),
        pattern=re.compile(r"(?:OutOf|enough resource: )(?P<resource>[a-z0-9.-]{1,100}(?:/[a-z0-9.-]{1,100})?)"),
        extract=(re.compile(r"requested: (?P<requested>\d+), used: (?P<used>\d+), capacity: (?P<capacity>\d+)"),),
        refine=_out_of,
        fields_doc="resource, requested, used, capacity",
        example="Warning  OutOfnvidia.com/gpu  2m  kubelet  Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0",
    ),
    Rule(
        name="karpenter.disrupting",
        code="karpenter.disruption",
        severity="warning",
        confidence="high",
        title="Karpenter is disrupting a node ({reason})",
        keywords=("Disrupting Node", "disrupting node(s)", "disrupting via", "deprovisioning via"),
        extract=(
            re.compile(r"Disrupting Node(?:Claim)?: (?P<reason>\w+)"),
            re.compile(r"reason=(?P<reason>\w+)"),
            re.compile(r"command=(?P<reason2>[A-Za-z]+)/"),
            re.compile(r"(?:disrupting|deprovisioning) via (?P<method>[a-z]+(?: [a-z]+)?)"),
            re.compile(r"(?P<node>ip-[0-9-]+\.[a-z0-9.-]+|i-[0-9a-f]{8,17})"),
        ),
        refine=_disruption,
        fields_doc="reason (Underutilized|Empty|Drifted|Expired|...), method (older logs), node",
        example="Normal  DisruptionTerminating  2m  karpenter  Disrupting Node: Underutilized",
    ),
    Rule(
        name="karpenter.spot_interruption",
        code="karpenter.disruption",
        severity="warning",
        confidence="high",
        title="Spot interruption: EC2 is reclaiming the node",
        keywords=("SpotInterrupted", "Spot interruption warning", "spot interruption"),
        refine=lambda f, t: Verdict(fields={"reason": "SpotInterrupted"}),
        fields_doc="reason (SpotInterrupted)",
        example="Warning  SpotInterrupted  1m  karpenter  Spot interruption warning was triggered",
    ),
    Rule(
        name="karpenter.evicted",
        code="karpenter.disruption",
        severity="warning",
        confidence="medium",
        title="Karpenter evicted a pod while draining a node",
        keywords=("Evicted pod", "tainted node"),
        unless=("Evicted pod:",),  # generic drain tools, not Karpenter
        refine=lambda f, t: Verdict(fields={"reason": "Eviction"}) if ("Evicted pod" in t or "karpenter.sh/disrupted" in t) else None,
        fields_doc="reason (Eviction)",
        example="Normal  Evicted  40s  karpenter  Evicted pod",
    ),
    Rule(
        name="karpenter.blocked",
        code="karpenter.disruption",
        severity="info",
        confidence="high",
        title="Karpenter disruption is blocked (do-not-disrupt or budget)",
        keywords=("Cannot disrupt", "DisruptionBlocked", "No allowed disruptions"),
        extract=(re.compile(r"(?:Cannot disrupt \w+: |DisruptionBlocked\s+\S+\s+\S+\s+)(?P<blocker>.{1,300})$"),),
        fields_doc="blocker",
        example='Normal  DisruptionBlocked  36s  karpenter  Cannot disrupt Node: pod "default/llama-3-8b-node-0-0" has "karpenter.sh/do-not-disrupt" annotation',
    ),
)
