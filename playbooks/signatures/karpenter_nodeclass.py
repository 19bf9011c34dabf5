"""The AWS NodeClass's own conditions: what makes an EC2NodeClass (and so its NodePools) not Ready.

aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass_status.go: ConditionTypeSubnetsReady,
SecurityGroupsReady, AMIsReady, InstanceProfileReady, ValidationSucceeded (v1.3+), CapacityReservationsReady
(v1.3+); pkg/controllers/nodeclass/{subnet,securitygroup,ami,instanceprofile}.go set them False with
reasons SubnetsNotFound ("SubnetSelector did not match any Subnets"), SecurityGroupsNotFound, AMINotFound
("AMISelector did not match any AMIs"), InstanceProfileNotFound... A NodeClass that is not Ready makes its
NodePools not Ready (NodeClassReady=False), and Karpenter then leaves them out without a word on the pod.
They are read as `kubectl describe ec2nodeclass` prints them: "Type  Status  Reason  Message".

SubnetsReady is karpenter.subnet_problem; every other condition is karpenter.nodeclass_not_ready, the
condition quoted:
- AMIsReady (pkg/controllers/nodeclass/ami.go): ``AMINotFound`` "AMISelector did not match any AMIs"
  (v1.0+); ``UnsupportedAlias`` (v1.6+) with pkg/providers/amifamily/ami.go's "AL2 aliases are no longer
  supported on EKS 1.33+" for ``al2@latest`` on Kubernetes 1.33 and later (and Windows 2025 on too old a
  version);
- SecurityGroupsReady (securitygroup.go): ``SecurityGroupsNotFound`` "SecurityGroupSelector did not match
  any SecurityGroups";
- InstanceProfileReady (instanceprofile.go): the profile could not be created or read (v1.0-v1.2 status/
  instanceprofile.go set it False; later versions keep it Unknown and retry);
- ValidationSucceeded (validation.go, v1.3+): the controller's dry runs of ec2:CreateFleet,
  CreateLaunchTemplate, RunInstances (``CreateFleetAuthCheckFailed``, ...), tags, kubelet settings, user data
  size. ``DependenciesNotReady`` only repeats another condition and is left to it. A NodePool's own
  ValidationSucceeded (its requirements) is karpenter_nodeclaim.py's.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict

_LINE = linear.compile(r"(?P<condition>SubnetsReady|SecurityGroupsReady|AMIsReady|InstanceProfileReady|CapacityReservationsReady|"
                       r"ValidationSucceeded)\s+(?P<status>False|Unknown)\s+(?P<reason>\w+)?\s*(?P<message>.{0,300})")

# aws/karpenter-provider-aws pkg/controllers/nodeclass/validation.go: the EC2NodeClass's own validation reasons.
VALIDATION_REASONS = (
    "CreateFleetAuthCheckFailed", "CreateLaunchTemplateAuthCheckFailed", "RunInstancesAuthCheckFailed",
    "InstanceProfileNotFound", "TagValidationFailed", "InvalidKubeletConfiguration", "KubeletExpressionInvalid",
    "KubeletExpressionEvaluationFailed", "KubeletExpressionsDisabled", "UnsupportedKubeletConfiguration",
    "DryRunDisabled", "UserDataSizeLimitExceeded", "ClusterCIDRResolutionFailed",
)


def _not_ready(fields: dict[str, str], text: str) -> Verdict | None:
    if fields.get("condition") == "ValidationSucceeded" and fields.get("reason") not in VALIDATION_REASONS:
        return None  # DependenciesNotReady repeats another condition; a NodePool's validation is not ours
    if fields.get("reason") == "UnsupportedAlias":
        return Verdict(title="EC2NodeClass AMI alias is not supported for this Kubernetes version (AMIsReady=False "
                             "UnsupportedAlias): its NodePools launch nothing")
    return Verdict()


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
        code="karpenter.nodeclass_not_ready",
        severity="error",
        confidence="high",
        title="EC2NodeClass condition {condition} is {status} ({reason}): its NodePools launch nothing",
        keywords=("SecurityGroupsReady", "AMIsReady", "InstanceProfileReady", "CapacityReservationsReady",
                  "ValidationSucceeded"),
        pattern=_LINE,
        refine=_not_ready,
        fields_doc="condition, status, reason, message",
        example="AMIsReady  False  AMINotFound  AMISelector did not match any AMIs",
    ),
)
