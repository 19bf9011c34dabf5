"""Karpenter after scheduling: a node on its way, EC2 launch errors, NodeClaim and NodePool conditions.

Sources: kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/events.go (``Nominated``),
pkg/controllers/nodeclaim/lifecycle/{launch,registration,initialization,liveness,events}.go,
pkg/controllers/nodepool/readiness/controller.go, pkg/apis/v1/nodeclaim_status.go and
nodepool_status.go; aws/karpenter-provider-aws pkg/errors/errors.go (capacity error codes),
pkg/providers/instance/instance.go. Condition texts are the same from v0.32 (NodeClaim) to v1.14;
v0.19-v0.31 used Machine and ``MachineLaunched`` / ``MachineRegistered`` / ``MachineInitialized``.

A condition reaches us as one line in three shapes: a ``kubectl get -o custom-columns`` / table row
(``Launched  False  LaunchFailed  <message>``), a condition object in JSON (unwrapped by the
catalogue to ``<message>, reason=X, type=Y, status=Z``), or the ``Reason:`` / ``Message:`` lines of
``kubectl describe`` taken one at a time.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict
from playbooks.signatures.karpenter_nodeclass import VALIDATION_REASONS

_TYPES = (
    "Launched|Registered|Initialized|MachineLaunched|MachineRegistered|MachineInitialized"
    "|NodeRegistrationHealthy|NodeClassReady|ValidationSucceeded"
)
_ROW = linear.compile(
    rf"^\s*(?P<type>{_TYPES})\s+(?P<status>True|False|Unknown)(?:\s+(?P<reason>[A-Z][A-Za-z]{{1,80}}))?(?:\s+(?P<message>.{{1,600}}))?$"
)
_JSON_TYPE = linear.compile(rf'(?:\btype=|"type":\s?")(?P<type>{_TYPES})\b')
_JSON_STATUS = linear.compile(r'(?:\bstatus=|"status":\s?")(?P<status>True|False|Unknown)\b')
_JSON_REASON = linear.compile(r'(?:\breason=|"reason":\s?")(?P<reason>[A-Z][A-Za-z]{1,80})\b')
_DESCRIBE_REASON = linear.compile(r"^\s*Reason:\s+(?P<reason>[A-Z][A-Za-z]{1,80})\s*$")

# Launch errors the EC2 rules below own (they capture better fields).
_EC2_OWNED = (
    "InsufficientInstanceCapacity", "insufficient capacity", "UnfulfillableCapacity", "ReservationCapacityExceeded",
    "VcpuLimitExceeded", "MaxSpotInstanceCountExceeded", "MaxFleetCountExceeded", "InsufficientFreeAddressesInSubnet",
    "not supported in your requested Availability Zone", "no subnets", "do not have sufficient", "InstanceLimitExceeded",
    "InsufficientHostCapacity", "InsufficientReservedInstanceCapacity",
)
# EC2 API error codes (docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html) by what they
# mean for a launch. Karpenter (aws/karpenter-provider-aws pkg/errors/errors.go) files several of them
# under "insufficient capacity" (InsufficientCapacityError) although they are quotas or subnets; EKS node
# groups / Auto Scaling print "Could not launch On-Demand Instances. <Code> - <message>".
_CAPACITY_CODES = ("InsufficientInstanceCapacity", "UnfulfillableCapacity", "ReservationCapacityExceeded",
                   "InsufficientHostCapacity", "InsufficientReservedInstanceCapacity")
_QUOTA_CODES = ("VcpuLimitExceeded", "MaxSpotInstanceCountExceeded", "MaxFleetCountExceeded", "InstanceLimitExceeded",
                "MaxSpotFleetRequestCountExceeded")


# The condition a reason belongs to, for describe output where the Type: line is separate.
_KIND_OF_REASON = {
    "LaunchFailed": "Launched",
    "MultipleNodesFound": "Registered",
    "StartupTaintsExist": "Initialized",
    "KnownEphemeralTaintsExist": "Initialized",
    "NodeNotReady": "Initialized",
    "NodeClassNotFound": "NodeClassReady",
    "NodeClassTerminating": "NodeClassReady",
    "NodeClassReadinessUnknown": "NodeClassReady",
}


def condition(text: str) -> dict[str, str]:
    """type / status / reason / message of a condition written as a row, as JSON or as a describe line."""
    row = _ROW.match(text)
    if row:
        return {k: v.strip() for k, v in row.groupdict().items() if v}
    found: dict[str, str] = {}
    for pattern in (_JSON_TYPE, _JSON_STATUS, _JSON_REASON, _DESCRIBE_REASON):
        match = pattern.search(text)
        if match:
            found.update(match.groupdict())
    return found


_STARTUP_TAINT = linear.compile(r'Taint \\?"(?P<taint>[^"\\]{1,320})')


def _nodeclaim_condition(fields: dict[str, str], text: str) -> Verdict | None:
    """Which code a NodeClaim / NodePool condition stands for (None: not a problem, or another rule's)."""
    cond = condition(text)
    reason = cond.get("reason", "")
    kind, status = cond.get("type") or _KIND_OF_REASON.get(reason, ""), cond.get("status", "")
    if not kind and "NodeClassNotReady" in text:  # lifecycle/events.go: "NodeClaim <n> event: <err>"
        kind, reason = "NodeClassReady", "NodeClassNotReady"
    if not kind or status == "True" or kind == "NodeRegistrationHealthy":
        return None  # nodeclaim.registration owns NodeRegistrationHealthy
    if any(owned in text for owned in _EC2_OWNED):
        return None
    extra = {k: v for k, v in (("condition", kind), ("reason", reason), ("message", cond.get("message", ""))) if v}
    kind = kind.removeprefix("Machine")
    if reason in ("", "AwaitingReconciliation", "RegistrationHookPending") and kind in ("Launched", "Registered", "Initialized"):
        if status == "Unknown":  # the NodeClaim was created and is being launched / is joining
            return Verdict(
                code="karpenter.provisioning", severity="info", confidence="high",
                title="Karpenter: NodeClaim is still launching ({condition} Unknown)", fields=extra,
            )
        return None
    if reason in ("NodeNotFound", "ResourceNotRegistered", "RegistrationFailed"):
        return None  # nodeclaim.registration / nodeclaim.resource_not_registered own these messages
    if reason in ("InsufficientCapacity", "InsufficientCapacityError"):
        return Verdict(code="karpenter.insufficient_capacity", severity="error", confidence="high",
                       title="Karpenter: NodeClaim launch failed for lack of EC2 capacity", fields=extra)
    if kind == "Launched" or reason == "LaunchFailed":
        # Karpenter files launch failures under NodeRegistrationHealthy too (liveness.go): a NodeClaim
        # that never became a node.
        return Verdict(severity="error", confidence="medium", title="Karpenter: NodeClaim failed to launch ({reason})", fields=extra)
    if kind == "Registered":
        return Verdict(severity="error", confidence="medium", title="Karpenter: NodeClaim did not register ({reason})", fields=extra)
    if kind == "Initialized":
        taint = _STARTUP_TAINT.search(text)
        if taint:
            extra["taint"] = taint.group("taint")
        if reason == "KnownEphemeralTaintsExist":
            return Verdict(severity="warning", confidence="low",
                           title="Karpenter: node is up but not initialized yet (ephemeral taint[ {taint}])", fields=extra)
        if reason == "StartupTaintsExist":
            return Verdict(severity="warning", confidence="medium",
                           title="Karpenter: node is up but a startup taint[ {taint}] was never removed", fields=extra)
        return Verdict(severity="warning", confidence="medium", title="Karpenter: node is up but not initialized ({reason})", fields=extra)
    if kind == "NodeClassReady" or reason in ("NodeClassNotFound", "NodeClassTerminating", "NodeClassReadinessUnknown", "NodeClassNotReady"):
        if "ubnet" in text:
            return Verdict(code="karpenter.subnet_problem", severity="error", confidence="medium",
                           title="Karpenter: the NodePool's NodeClass is not ready (subnets)", fields={**extra, "problem": "NodeClass not ready"})
        return Verdict(code="karpenter.nodeclass_not_ready", severity="error", confidence="medium",
                       title="Karpenter: the NodePool's NodeClass is not ready ({reason}): nothing can launch", fields=extra)
    if kind == "ValidationSucceeded" and reason in (*VALIDATION_REASONS, "DependenciesNotReady"):
        return None  # the EC2NodeClass's own validation: karpenter_nodeclass.py
    if kind == "ValidationSucceeded":
        # An invalid NodePool is ignored by the provisioner: it offers no instance type at all.
        return Verdict(code="karpenter.no_instance_type", severity="error", confidence="medium",
                       title="Karpenter: NodePool failed validation ({reason}) and is ignored", fields=extra)
    return None


def _ice(fields: dict[str, str], text: str) -> Verdict | None:
    # Karpenter files quota, subnet and Unsupported launch errors under "insufficient capacity" as well;
    # their own rules own those lines unless a real capacity error is named too.
    not_capacity = (*_QUOTA_CODES, "vCPU limit", "InsufficientFreeAddressesInSubnet", "not supported in your requested Availability Zone")
    real = (*_CAPACITY_CODES, "do not have sufficient")
    if any(c in text for c in not_capacity) and not any(c in text for c in real):
        return None
    return Verdict()


# The EC2 message without its code, as Auto Scaling activities and consoles print it.
_QUOTA_MESSAGES = (
    ("current vCPU limit", "VcpuLimitExceeded"),
    ("current instance limit", "InstanceLimitExceeded"),
    ("Max spot instance count exceeded", "MaxSpotInstanceCountExceeded"),
)


def _quota(fields: dict[str, str], text: str) -> Verdict:
    if "error_code" in fields:
        return Verdict()
    code = next((code for message, code in _QUOTA_MESSAGES if message in text), "")
    return Verdict(fields={"error_code": code} if code else {})


def _registration(fields: dict[str, str], text: str) -> Verdict | None:
    if "ttl" in text or "missing required startup taint" in text or "prevents registration" in text:
        return Verdict(severity="error", confidence="high", title="Karpenter: NodeClaim never registered a Node and was deleted")
    if "NodeRegistrationHealthy" in text:
        if "False" not in text:
            return None
        return Verdict(severity="error", confidence="medium", title="Karpenter: NodePool NodeRegistrationHealthy=False (recent launches did not register)")
    if "Failed to register node" in text:
        return Verdict(severity="error", confidence="medium", title="Karpenter: NodePool NodeRegistrationHealthy=False (recent launches did not register)")
    if "Unable to register node" in text:
        if "Unauthorized" in text or "Forbidden" in text or "forbidden" in text:
            return Verdict(severity="error", confidence="high", title="kubelet cannot register the node: API server says Unauthorized (node role not mapped)")
        # kubelet_node_status.go registerWithAPIServer: err= is the client error; a dial error means the
        # node cannot reach the endpoint at all (private endpoint access, security group, DNS).
        if any(dial in text for dial in ("connection refused", "i/o timeout", "no such host", "TLS handshake timeout", "context deadline exceeded")):
            return Verdict(severity="error", confidence="medium", title="kubelet cannot reach the API server to register the node (network path to the EKS endpoint)")
        return Verdict(severity="warning", confidence="low", title="kubelet could not register the node with the API server (yet)")
    return Verdict()


def _out_of(fields: dict[str, str], text: str) -> Verdict | None:
    resource = fields.get("resource", "")
    if "/" not in resource:
        return None  # OutOfcpu / OutOfmemory: not an extended resource
    if fields.get("capacity") == "0":
        return Verdict()
    return Verdict(severity="warning", confidence="low", title="kubelet rejected the pod: not enough {resource} on the node")


def _nominated(fields: dict[str, str], text: str) -> Verdict:
    # v0.27 "Pod should schedule on <node>"; v0.28-v0.31 "machine/<m>"; v0.32+ "nodeclaim/<n>[, node/<n>]"
    if "nodeclaim" not in fields and "machine" in fields:
        fields["nodeclaim"] = fields.pop("machine")
    if "node" in fields and "nodeclaim" not in fields:
        return Verdict(title="Karpenter nominated node {node} for the pod: it is on its way")
    return Verdict()


RULES: tuple[Rule, ...] = (
    Rule(
        # events.go NominatePodEvent: v0.32-v1.14 "Pod should schedule on: nodeclaim/<n>[, node/<n>]",
        # v0.28-v0.31 "machine/<m>", v0.27 "Pod should schedule on <node>".
        name="karpenter.nominated",
        code="karpenter.provisioning",
        severity="info",
        confidence="high",
        title="Karpenter nominated NodeClaim {nodeclaim} for the pod: a node is on its way",
        keywords=("Pod should schedule on",),
        extract=(
            linear.compile(r"nodeclaim/(?P<nodeclaim>[a-z0-9][a-z0-9.-]{0,252})"),
            linear.compile(r"machine/(?P<machine>[a-z0-9][a-z0-9.-]{0,252})"),
            linear.compile(r"(?:node/|should schedule on )(?P<node>[a-z0-9][a-z0-9.-]{0,252})"),
        ),
        refine=_nominated,
        fields_doc="nodeclaim, node",
        example="Normal  Nominated  11m  karpenter  Pod should schedule on: nodeclaim/gpu-v278f",
    ),
    Rule(
        # Controller logs when a node starts its way: v0.32+ "created nodeclaim" / "launched nodeclaim"
        # (JSON with NodeClaim, instance-type, zone, capacity-type), v0.19-v0.31 "... machine",
        # v0.5-v0.18 aws provider "Launched instance: i-..., hostname: ..., type: ..., zone: ...".
        name="karpenter.launched",
        code="karpenter.provisioning",
        severity="info",
        confidence="high",
        title="Karpenter launched a node[ ({instance_type})][ in {zone}]",
        keywords=("launched nodeclaim", "created nodeclaim", "launched machine", "created machine", "Launched instance:"),
        extract=(
            linear.compile(r'"?instance-type"?[=:] ?"?(?P<instance_type>[a-z0-9-]{1,20}\.[a-z0-9-]{1,20})'),
            linear.compile(r"type: (?P<instance_type>[a-z0-9-]{1,20}\.[a-z0-9-]{1,20})"),
            linear.compile(r'"?zone"?[=:] ?"?(?P<zone>[a-z]{2}-[a-z]+-\d[a-z])'),
        ),
        fields_doc="instance_type, zone",
        example='{"level":"INFO","time":"2026-01-01T12:00:00.000Z","logger":"controller","message":"launched nodeclaim","NodeClaim":{"name":"gpu-x8k2p"},"provider-id":"aws:///us-east-2a/i-0123","instance-type":"p5.48xlarge","zone":"us-east-2a","capacity-type":"on-demand"}',
    ),
    Rule(
        # NodeClaim and NodePool conditions (see module doc); reasons from launch.go (LaunchFailed, the
        # provider's CreateError reasons), registration.go (MultipleNodesFound, RegistrationHookPending),
        # initialization.go (NodeNotReady, StartupTaintsExist, KnownEphemeralTaintsExist), liveness.go
        # (NodeRegistrationHealthy, v1.4+), nodepool readiness (NodeClassReady, v1.0+) and validation.
        name="karpenter.condition",
        code="karpenter.node_registration_failed",
        severity="error",
        confidence="medium",
        title="Karpenter: NodeClaim condition {condition} is {reason}",
        keywords=(
            "Launched", "Registered", "Initialized", "NodeClassReady", "ValidationSucceeded", "NodeRegistrationHealthy",
            "LaunchFailed", "StartupTaintsExist", "KnownEphemeralTaintsExist", "NodeNotReady", "MultipleNodesFound",
            "NodeClassNotFound", "NodeClassTerminating", "NodeClassNotReady", "AwaitingReconciliation",
        ),
        refine=_nodeclaim_condition,
        fields_doc="condition (type), reason, message, taint",
        example="Launched  False  LaunchFailed  creating instance, getting launch template configs, no amis exist given constraints",
    ),
    Rule(
        name="ec2.insufficient_capacity",
        code="karpenter.insufficient_capacity",
        severity="error",
        confidence="high",
        title="EC2 has no capacity[ for {instance_type}][ in {zone}] right now",
        keywords=("insufficient capacity", "InsufficientCapacityError", "do not have sufficient", *_CAPACITY_CODES),
        extract=(
            linear.compile(r"(?P<error_code>" + "|".join(_CAPACITY_CODES) + ")"),
            linear.compile(r"sufficient (?P<instance_type>[a-z0-9-]{1,20}\.[a-z0-9-]{1,20}) capacity"),
            linear.compile(r"Availability Zone you requested \((?P<zone>[a-z0-9-]{1,30})\)"),
            linear.compile(r"capacity by not specifying an Availability Zone in your request or choosing (?P<alternatives>[a-z0-9-]{1,30}(?:, [a-z0-9-]{1,30}){0,8})"),
            linear.compile(r"NodeClaim (?P<nodeclaim>[a-z0-9][a-z0-9-]{0,240}-[a-z0-9]{5})\b"),
        ),
        refine=_ice,
        fields_doc="error_code, instance_type, zone, alternatives (zones EC2 says have capacity), nodeclaim",
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
            linear.compile(r"instance type \((?P<instance_type>[a-z0-9.-]{1,40})\)"),
            linear.compile(r"Availability Zone \((?P<zone>[a-z0-9-]{1,30})\)"),
            linear.compile(r"choosing (?P<alternatives>[a-z0-9-]+(?:, [a-z0-9-]+)*)"),
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
        keywords=(*_QUOTA_CODES, "current vCPU limit", "Max spot instance count exceeded", "current instance limit"),
        extract=(
            linear.compile(r"(?P<error_code>" + "|".join(_QUOTA_CODES) + r")\b"),
            linear.compile(r"current vCPU limit of (?P<limit>\d+)"),
            linear.compile(r"current instance limit of (?P<instance_limit>\d+)"),
        ),
        refine=_quota,
        fields_doc="error_code, limit (vCPU), instance_limit (instances of the type)",
        example="creating instance, insufficient capacity, with fleet error(s), VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU limit of 0 allows for the instance bucket that the specified instance type belongs to.",
    ),
    Rule(
        name="ec2.subnet",
        code="karpenter.subnet_problem",
        severity="error",
        confidence="high",
        title="Karpenter: subnet problem ({problem})",
        keywords=("InsufficientFreeAddressesInSubnet", "not enough free addresses in subnet", "no subnets matched selector", "no subnets found", "InvalidSubnetID"),
        pattern=linear.compile(r"(?P<problem>InsufficientFreeAddressesInSubnet|not enough free addresses in subnet|no subnets matched selector|no subnets found|InvalidSubnetID[.\w]*)"),
        extract=(linear.compile(r"(?P<subnet>subnet-[0-9a-f]{6,})"),),
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
        extract=(linear.compile(r"(?P<volume>vol-[0-9a-f]{6,})"),),
        fields_doc="volume",
        example="AttachVolume.Attach failed for volume \"pvc-1\" : InvalidVolume.ZoneMismatch: The volume 'vol-0abc123def' is not in the same availability zone as instance 'i-0123'",
    ),
    Rule(
        # registration.go "Node not registered with cluster" (Registered / Initialized Unknown NodeNotFound);
        # v0.x "registration ttl"; v1.x event UnregisteredTaintMissing; liveness.go NodeRegistrationHealthy
        # False "Failed to register node" (v1.4+); kubelet's own "Unable to register node".
        name="nodeclaim.registration",
        code="karpenter.node_registration_failed",
        severity="warning",
        confidence="medium",
        title="Karpenter: NodeClaim launched but its Node has not registered",
        keywords=("Node not registered with cluster", "registration ttl", "missing required startup taint", "prevents registration", "NodeRegistrationHealthy", "Failed to register node", "Unable to register node"),
        extract=(linear.compile(r'err="(?P<error>[^"]{1,300})"'),),
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
        extract=(linear.compile(r'Resource \\?"(?P<resource>[^"\\]{1,253})\\?" was requested but not registered'),),
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
        pattern=linear.compile(r"(?:OutOf|enough resource: )(?P<resource>[a-z0-9.-]{1,100}(?:/[a-z0-9.-]{1,100})?)"),
        extract=(linear.compile(r"requested: (?P<requested>\d+), used: (?P<used>\d+), capacity: (?P<capacity>\d+)"),),
        refine=_out_of,
        fields_doc="resource, requested, used, capacity",
        example="Warning  OutOfnvidia.com/gpu  2m  kubelet  Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0",
    ),
)
