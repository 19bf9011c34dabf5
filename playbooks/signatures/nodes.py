"""Nodes and images: NotReady causes (CNI / IAM, kubelet), pod IP exhaustion, EKS node group health, slow image pulls.

Rules defined here beyond the catalogue's table: ``kubelet.node_status_update`` (kubernetes/kubernetes
pkg/kubelet/kubelet_node_status.go ``"Unable to update node status" err="update node status exceeds retry
count"`` and ``"Error updating node status, will retry"``), ``cni.pod_ip_unavailable`` (aws/amazon-vpc-cni-k8s:
the CNI plugin's ``add cmd: failed to assign an IP address to container`` in a FailedCreatePodSandBox
event, ipamd datastore ``no available IP/Prefix addresses``) and ``nodegroup.health_issue`` (EKS managed
node group health issue codes, botocore eks ``NodegroupIssueCode``: AsgInstanceLaunchFailures,
InsufficientFreeAddresses, NodeCreationFailure, Ec2SubnetNotFound, Ec2SubnetInvalidConfiguration).
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict

SLOW_PULL_SECONDS = 120.0  # the pull itself
SLOW_WAIT_SECONDS = 300.0  # the pull including time queued behind other pulls
_GO_DURATION_PART = linear.compile(r"(\d+(?:\.\d+)?)(h|ms|us|µs|ns|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def go_duration_seconds(text: str) -> float:
    """Seconds in a Go duration string such as ``3m51.333s`` or ``1h2m``; 0.0 when unparsable."""
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in _GO_DURATION_PART.findall(text))


# Karpenter's controllers (controller-runtime names them: nodeclass, nodeclaim.lifecycle, provisioner ...;
# kubernetes-sigs/karpenter pkg/operator/logging) call EC2 with the Karpenter controller role, not the node role:
# their UnauthorizedOperation is that role's missing permission, which AmazonEKS_CNI_Policy does not touch.
_NOT_IPAMD_WRITERS = ("controller", "karpenter", "provisioner", "nodeclass", "nodeclaim", "disruption", "ebs", "csi")


_LAUNCH_PATH = ("creating instance", "with fleet error", "creating machine", "creating nodeclaim", "launching nodeclaim",
                "creating launch template", "launch template")


def _ipamd_unauthorized(fields: dict[str, str], text: str) -> Verdict | None:
    writer = fields.get("writer", "").lower()
    if writer and "ipamd" not in writer and any(word in writer for word in _NOT_IPAMD_WRITERS):
        return None
    if "assumed-role/" in text and "karpenter" in text.lower():
        return None
    if any(word in text for word in _LAUNCH_PATH):
        return None  # Karpenter's launch path wraps EC2's refusal (core pkg/controllers/nodeclaim/lifecycle/launch.go)
    return Verdict(fields={"problem": "UnauthorizedOperation"})


def _slow_pull(fields: dict[str, str], text: str) -> Verdict | None:
    pulled = go_duration_seconds(fields.get("pulled_in", ""))
    waited = go_duration_seconds(fields.get("including_waiting", ""))
    if pulled <= SLOW_PULL_SECONDS and waited <= SLOW_WAIT_SECONDS:
        return None
    extra = {"pull_seconds": f"{pulled:.0f}"}
    if waited:
        extra["wait_seconds"] = f"{waited:.0f}"
    if fields.get("image_size", "").isdigit():
        extra["image_size_gb"] = f"{int(fields['image_size']) / 1e9:.1f}"
    if pulled <= SLOW_PULL_SECONDS:
        return Verdict(title="Image pull waited {including_waiting} behind other pulls (pull itself {pulled_in})", fields=extra)
    return Verdict(fields=extra)


def _pressure(fields: dict[str, str], text: str) -> Verdict:
    condition = fields.get("condition", "")
    if condition == "NodeNotReady":
        return Verdict(title="Node[ {node}] became NotReady")
    return Verdict(title="Node[ {node}] reports {condition}")


# An EC2 code in the same line is read by the ec2.* rules (karpenter_nodeclaim.py), which name it.
_EC2_CODES = (
    "InsufficientInstanceCapacity", "UnfulfillableCapacity", "InsufficientHostCapacity", "VcpuLimitExceeded",
    "MaxSpotInstanceCountExceeded", "InstanceLimitExceeded", "InsufficientFreeAddressesInSubnet",
    "not supported in your requested Availability Zone", "do not have sufficient",
)
_NODEGROUP_ISSUES = {
    "InsufficientFreeAddresses": ("karpenter.subnet_problem", "error", "high", "EKS node group: its subnets have no free IP addresses for new nodes (InsufficientFreeAddresses)"),
    "Ec2SubnetNotFound": ("karpenter.subnet_problem", "error", "high", "EKS node group: a subnet it launches into no longer exists (Ec2SubnetNotFound)"),
    "Ec2SubnetInvalidConfiguration": ("karpenter.subnet_problem", "error", "medium", "EKS node group: a subnet does not auto-assign public IPs to its nodes (Ec2SubnetInvalidConfiguration)"),
    "NodeCreationFailure": ("karpenter.node_registration_failed", "error", "medium", "EKS node group: launched instances cannot join the cluster (NodeCreationFailure: node IAM role or outbound access)"),
    # Alone (describe-nodegroup prints the message on the next line) the code does not say why: capacity is
    # the usual cause for GPU types, but KMS keys, AMIs and quotas fail the same way.
    "AsgInstanceLaunchFailures": ("karpenter.insufficient_capacity", "warning", "low", "EKS node group: its Auto Scaling group keeps failing to launch instances (AsgInstanceLaunchFailures; the cause is in the ASG activity)"),
}


def _nodegroup_issue(fields: dict[str, str], text: str) -> Verdict | None:
    issue = fields["issue"]
    if issue == "AsgInstanceLaunchFailures" and any(code in text for code in _EC2_CODES):
        return None  # the ec2.* rule names the launch error itself
    code, severity, confidence, title = _NODEGROUP_ISSUES[issue]
    return Verdict(code=code, severity=severity, confidence=confidence, title=title, fields={"problem": issue})


def _status_update(fields: dict[str, str], text: str) -> Verdict:
    if "exceeds retry count" in text:
        # details.not_ready reads a condition; without one it would describe a CNI problem instead.
        return Verdict(fields={"condition": "kubelet node status updates failing"})
    # A single retried update is an API server blip; the retry-count error is what persists.
    return Verdict(severity="info", confidence="low", title="kubelet: a node status update failed and will be retried")


RULES: tuple[Rule, ...] = (
    Rule(
        name="kubelet.node_status_update",
        code="node.not_ready",
        severity="warning",
        confidence="medium",
        title="kubelet cannot update its node status: the node will go NotReady (the API server is unreachable from it)",
        keywords=("Unable to update node status", "Error updating node status"),
        extract=(linear.compile(r'err="(?P<error>[^"]{1,300})'),),
        refine=_status_update,
        fields_doc="error (kubelet err=), condition",
        example='E0429 12:22:18.192118  155021 kubelet_node_status.go:527] "Unable to update node status" err="update node status exceeds retry count"',
    ),
    Rule(
        name="cni.pod_ip_unavailable",
        code="karpenter.subnet_problem",
        severity="error",
        confidence="low",
        title="VPC CNI could not give the pod an IP address: the subnet (or the node's IP pool) is exhausted",
        keywords=("failed to assign an IP address to container", "no available IP/Prefix addresses"),
        refine=lambda f, t: Verdict(fields={"problem": "no pod IP address"}),
        fields_doc="problem (no pod IP address)",
        example='Warning  FailedCreatePodSandBox  23m  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "14bffa7734d01abd808dead23744386135518961ab240ba48b88a9e269398126": plugin type="aws-cni" name="aws-cni" failed (add): add cmd: failed to assign an IP address to container',
    ),
    Rule(
        name="nodegroup.health_issue",
        code="karpenter.insufficient_capacity",
        severity="error",
        confidence="low",
        title="EKS node group health issue {issue}",
        keywords=tuple(_NODEGROUP_ISSUES),
        pattern=linear.compile(r"\b(?P<issue>" + "|".join(_NODEGROUP_ISSUES) + r")\b"),
        refine=_nodegroup_issue,
        fields_doc="issue (node group issue code), problem",
        example='            "code": "InsufficientFreeAddresses", "message": "One or more of the subnets associated with your managed node group does not have enough available IP addresses for new nodes.",',
    ),
    Rule(
        name="kubelet.image_pulled",
        code="image.slow_pull",
        severity="warning",
        confidence="high",
        title="Image pull took {pulled_in}[ for a {image_size_gb} GB image]",
        keywords=("Successfully pulled image",),
        pattern=linear.compile(r"Successfully pulled image \\?\"(?P<image>[^\"\\\s]{1,400})\\?\" in (?P<pulled_in>[\dhmsuµn.]{1,30})(?: \((?P<including_waiting>[\dhmsuµn.]{1,30}) including waiting\))?"),
        extract=(linear.compile(r"Image size: (?P<image_size>\d+) bytes"),),
        refine=_slow_pull,
        fields_doc="image, pulled_in, including_waiting (Go durations), image_size (bytes), pull_seconds, wait_seconds, image_size_gb",
        example='Normal  Pulled  5m29s  kubelet  Successfully pulled image "public.ecr.aws/deep-learning-containers/pytorch-training:2.8.0-gpu-py312-cu129-ubuntu22.04-ec2-v1.0" in 3m51.333s (3m51.333s including waiting). Image size: 12916508213 bytes.',
    ),
    Rule(
        name="ipamd.unauthorized",
        code="node.not_ready",
        severity="error",
        confidence="medium",
        title="VPC CNI (ipamd) is not authorized to call EC2: nodes stay NotReady",
        keywords=("UnauthorizedOperation",),
        unless=("could not create volume", "failed to provision volume"),  # the EBS CSI driver: volumes.py
        extract=(linear.compile(r"(?P<operation>(?:AssignPrivateIpAddresses|AttachNetworkInterface|CreateNetworkInterface|DescribeNetworkInterfaces|DescribeInstances|CreateTags|AssignIpv6Addresses)\b)"),),
        refine=_ipamd_unauthorized,
        fields_doc="problem (UnauthorizedOperation), operation (EC2 API call, when named)",
        example='{"level":"error","ts":"2026-01-01T00:00:00.000Z","caller":"ipamd/ipamd.go:512","msg":"Failed to call ec2:CreateNetworkInterface: UnauthorizedOperation: You are not authorized to perform this operation."}',
    ),
    Rule(
        name="kubelet.cni_not_ready",
        code="node.not_ready",
        severity="warning",
        confidence="low",
        title="Container network not ready on the node (CNI not initialised)",
        keywords=("NetworkPluginNotReady", "cni plugin not initialized", "cni config uninitialized"),
        refine=lambda f, t: Verdict(fields={"problem": "NetworkPluginNotReady"}),
        fields_doc="problem (NetworkPluginNotReady)",
        example='E0101 00:00:05.000000 1234 kubelet.go:2862] "Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"',
    ),
    Rule(
        name="node.condition",
        code="node.not_ready",
        severity="warning",
        confidence="medium",
        title="Node[ {node}] reports {condition}",
        keywords=("NodeNotReady", "NodeHasDiskPressure", "NodeHasMemoryPressure", "NodeHasPIDPressure", "Kubelet stopped posting node status", "EvictionThresholdMet", "KubeletNotReady"),
        pattern=linear.compile(r"(?P<condition>NodeNotReady|NodeHasDiskPressure|NodeHasMemoryPressure|NodeHasPIDPressure|Kubelet stopped posting node status|EvictionThresholdMet|KubeletNotReady)"),
        # A node name is an RFC 1123 subdomain (Kubernetes ValidateNodeName): anything else in its place is
        # not captured, so the finding stands without a node and its fix keeps the placeholder.
        extract=(linear.compile(r"Node (?P<node>[a-z0-9][-a-z0-9.]{0,252}) status is now"),),
        refine=_pressure,
        fields_doc="condition, node",
        example="Normal  NodeNotReady  2m  node-controller  Node ip-10-0-5-89.ap-northeast-2.compute.internal status is now: NodeNotReady",
    ),
    Rule(
        name="kubelet.error_getting_node",
        code="node.not_ready",
        severity="info",
        confidence="low",
        title="kubelet: node object not found yet (normal during start-up)",
        keywords=("Error getting node",),
        # An error-level line that is routine until the kubelet's first registration creates the Node object
        # (kubernetes/kubernetes pkg/kubelet/kubelet_node_status.go registerWithAPIServer): said as a reasoned
        # info finding, never silence; node.not_ready above info comes from the node's conditions if it lasts.
        refine=lambda f, t: Verdict(fields={"error_class": "benign"}),
        fields_doc="error_class (benign)",
        example='E0101 00:00:01.000000 1234 kubelet_node_status.go:96] "Error getting node" err="node \\"ip-10-0-5-89.ec2.internal\\" not found"',
    ),
)
