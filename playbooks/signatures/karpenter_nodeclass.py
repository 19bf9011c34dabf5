"""The AWS NodeClass's own conditions: what makes an EC2NodeClass (and so its NodePools) not Ready.

aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass_status.go: ConditionTypeSubnetsReady,
SecurityGroupsReady, AMIsReady, InstanceProfileReady, ValidationSucceeded (v1.3+), CapacityReservationsReady
(v1.3+); pkg/controllers/nodeclass/{subnet,securitygroup,ami,instanceprofile}.go set them False with
reasons SubnetsNotFound ("SubnetSelector did not match any Subnets"), SecurityGroupsNotFound, AMINotFound
("AMISelector did not match any AMIs"), InstanceProfileNotFound... A NodeClass that is not Ready makes its
NodePools not Ready (NodeClassReady=False), and Karpenter then leaves them out without a word on the pod.
They are read as `kubectl describe ec2nodeclass` prints them: "Type  Status  Reason  Message".
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule

_LINE = linear.compile(r"(?P<condition>SubnetsReady|SecurityGroupsReady|AMIsReady|InstanceProfileReady|CapacityReservationsReady)"
                   r"\s+(?P<status>False|Unknown)\s+(?P<reason>\w+)?\s*(?P<message>.{0,300})")

RULES: tuple[Rule, ...] = (
    Rule(
        name="nodeclass.subnets",
        code="karpenter.subnet_problem",
        severity="error",
        confidence="high",
        title="EC2NodeClass has no usable subnet ({reason}): its NodePools cannot launch anything",
        keywords=("SubnetsReady",),
        pattern=_LINE,
        fields_doc="condition, status, reason, message",
        example="SubnetsReady  False  SubnetsNotFound  SubnetSelector did not match any Subnets",
    ),
    Rule(
        name="nodeclass.not_ready",
        code="karpenter.node_registration_failed",
        severity="error",
        confidence="medium",
        title="EC2NodeClass condition {condition} is {status} ({reason}): its NodePools cannot launch nodes",
        keywords=("SecurityGroupsReady", "AMIsReady", "InstanceProfileReady", "CapacityReservationsReady"),
        pattern=_LINE,
        fields_doc="condition, status, reason, message",
        example="AMIsReady  False  AMINotFound  AMISelector did not match any AMIs",
    ),
)
