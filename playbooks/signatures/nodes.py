"""Nodes and images: NotReady causes (CNI / IAM, kubelet), and slow image pulls."""
from __future__ import annotations

import re

from playbooks.signatures.model import Rule, Verdict

SLOW_PULL_SECONDS = 120.0  # the pull itself
SLOW_WAIT_SECONDS = 300.0  # the pull including time queued behind other pulls
_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|us|µs|ns|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def go_duration_seconds(text: str) -> float:
    """Seconds in a Go duration string such as ``3m51.333s`` or ``1h2m``; 0.0 when unparsable."""
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in _GO_DURATION_PART.findall(text))


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


RULES: tuple[Rule, ...] = (
    Rule(
        name="kubelet.image_pulled",
        code="image.slow_pull",
        severity="warning",
        confidence="high",
        title="Image pull took {pulled_in}[ for a {image_size_gb} GB image]",
        keywords=("Successfully pulled image",),
        pattern=re.compile(r"Successfully pulled image \\?\"(?P<image>[^\"\\\s]{1,400})\\?\" in (?P<pulled_in>[\dhmsuµn.]{1,30})(?: \((?P<including_waiting>[\dhmsuµn.]{1,30}) including waiting\))?"),
        extract=(re.compile(r"Image size: (?P<image_size>\d+) bytes"),),
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
        extract=(re.compile(r"(?P<operation>(?:AssignPrivateIpAddresses|AttachNetworkInterface|CreateNetworkInterface|DescribeNetworkInterfaces|DescribeInstances|CreateTags|AssignIpv6Addresses)\b)"),),
        refine=lambda f, t: Verdict(fields={"problem": "UnauthorizedOperation"}),
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
        pattern=re.compile(r"(?P<condition>NodeNotReady|NodeHasDiskPressure|NodeHasMemoryPressure|NodeHasPIDPressure|Kubelet stopped posting node status|EvictionThresholdMet|KubeletNotReady)"),
        extract=(re.compile(r"Node (?P<node>\S{1,253}) status is now"),),
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
        fields_doc="(none)",
        example='E0101 00:00:01.000000 1234 kubelet_node_status.go:96] "Error getting node" err="node \\"ip-10-0-5-89.ec2.internal\\" not found"',
    ),
)
