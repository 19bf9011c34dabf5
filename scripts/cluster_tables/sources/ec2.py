"""The EC2 (and IAM / SQS / SSM) error codes aws/karpenter-provider-aws classifies, v1.0 to v1.14 (the last
patch tag of each minor series): every code string of pkg/errors/errors.go (the not-found, already-exists
and unfulfillable-capacity sets, the named code constants, and the codes ``ToReasonMessage`` looks for in
an error's text). Each snapshot item says which of the provider's sets or checks named the code, and carries
the meaning the EC2 API reference gives for it (REFERENCE below, summarised from
https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html, and the IAM / SQS / SSM API
references for their codes), so a reader knows what EC2 meant without the page.

Rows are kind ``ec2_code``, component ``ec2``, reason and message the code itself (literal).
"""
from __future__ import annotations

import re
from pathlib import Path

from scripts.cluster_tables import common
from scripts.cluster_tables.sources import karpenter

NAME = "ec2"
MIRRORS = ("github:aws/karpenter-provider-aws",)
PATH = "pkg/errors/errors.go"
REFERENCE_URL = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html"

# What the API references say each code means (summarised; the URL above for EC2, the IAM, SQS and SSM API
# references for NoSuchEntity / EntityAlreadyExists, QueueDoesNotExist and ParameterNotFound).
REFERENCE = {
    "InsufficientInstanceCapacity": "There is not enough capacity of the requested instance type (in the requested "
    "Availability Zone) to fulfil the request right now; retry later, or choose another instance type or zone.",
    "MaxSpotInstanceCountExceeded": "The account has reached its limit of Spot Instance requests (overall or for "
    "the instance type) in the Region.",
    "VcpuLimitExceeded": "The account has reached its limit on the number of vCPUs assigned to running "
    "On-Demand instances; increase the On-Demand instance limit (a vCPU-based quota) and retry.",
    "UnfulfillableCapacity": "There is not enough spare capacity to fulfil the request for Spot Instances at "
    "this time; wait, or make the request more flexible (more instance types or Availability Zones).",
    "Unsupported": "The request is not supported, for example the requested instance type is not supported in "
    "the requested Availability Zone.",
    "InsufficientFreeAddressesInSubnet": "The specified subnet does not have enough free private IP addresses "
    "to satisfy the request.",
    "MaxFleetCountExceeded": "The account has reached its limit on the number of EC2 Fleets that can exist "
    "at the same time.",
    "ReservationCapacityExceeded": "The targeted Capacity Reservation has no remaining available capacity for "
    "the instances requested.",
    "InvalidLaunchTemplateName.NotFoundException": "The specified launch template name does not exist.",
    "InvalidLaunchTemplateId.NotFound": "The specified launch template ID does not exist.",
    "InvalidCapacityReservationId.NotFound": "The specified Capacity Reservation ID does not exist.",
    "InvalidInstanceID.NotFound": "The specified instance does not exist (it may have been terminated, or the "
    "ID is not yet propagated).",
    "InvalidParameterValue": "A value supplied for a parameter was not valid (Karpenter checks it for an "
    "invalid IAM instance profile name).",
    "DryRunOperation": "The caller has the required permissions, so the request would have succeeded, but "
    "the DryRun parameter was used.",
    "UnauthorizedOperation": "The caller is not authorized to perform this operation (an IAM policy, "
    "permission boundary or service control policy denies it); the encoded message can be decoded with "
    "sts:DecodeAuthorizationMessage.",
    "RequestLimitExceeded": "The maximum request rate permitted by the Amazon EC2 APIs has been exceeded for "
    "the account; requests are throttled and should be retried with backoff.",
    "AuthFailure.ServiceLinkedRoleCreationNotPermitted": "The caller is not permitted to create the service-"
    "linked role the request needs (for Spot, AWSServiceRoleForEC2Spot).",
    "AuthFailure": "The provided credentials could not be validated, or the caller is not authorized to use a "
    "resource in the request (for example an AMI it has no permission to use).",
    "AccessDenied": "The caller does not have permission to perform the action.",
    "InvalidUserData.Malformed": "The user data is malformed or exceeds the size limit.",
    "InvalidAMIID.Malformed": "The specified AMI ID is malformed.",
    "InvalidAMIID.NotFound": "The specified AMI does not exist, or the caller has no permission to use it.",
    "InvalidParameter": "A parameter specified in the request is not valid (Karpenter checks it for security "
    "groups and subnets that belong to different networks).",
    "InternalError": "An internal error occurred on the AWS side; retry the request.",
    "PendingVerification": "The account's request to launch resources in this Region is still being verified.",
    "QueueDoesNotExist": "The SQS queue named does not exist (Karpenter's interruption queue).",
    "NoSuchEntity": "The IAM entity (role or instance profile) named does not exist.",
    "ParameterNotFound": "The SSM parameter named does not exist (an AMI alias's SSM path).",
    "EntityAlreadyExists": "The IAM entity (an instance profile) already exists.",
}

_SETS = {"notFoundErrorCodes": "not_found", "alreadyExistsErrorCodes": "already_exists",
         "unfulfillableCapacityErrorCodes": "unfulfillable_capacity"}
_CODE = r'"([A-Z][A-Za-z]+(?:\.[A-Za-z]+)*)"'


def _codes(src: str) -> list[tuple[str, str, int]]:
    """(code, how the provider names it, line) for every code string in errors.go."""
    found = []
    consts = {name: value for name, value in re.findall(r"^\s*(\w+)\s*=\s*" + _CODE, src, re.M)}
    for name, value in consts.items():
        line = src[:src.index(f'"{value}"')].count("\n") + 1
        found.append((value, f"constant {name}", line))
    for set_name, label in _SETS.items():
        found_set = re.search(rf"\b{set_name}\s*=\s*sets\.New(?:\[string\])?\(", src)  # sets.New[string]( before v1.1
        if not found_set:
            continue
        start = found_set.start()
        end = karpenter._close(src, src.index("(", start))
        for m in re.finditer(_CODE + r"|\b(\w+)\b(?=,)", src[start:end]):
            code = m.group(1) or consts.get(m.group(2) or "")
            if code:
                found.append((code, label, src[:start + m.start()].count("\n") + 1))
    start = src.find("func ToReasonMessage(")
    if start >= 0:
        end = karpenter._close(src, src.index("{", src.index(") (string, string)", start)))
        for m in re.finditer(r"strings\.Contains\(err\.Error\(\),\s*" + _CODE + r"\)", src[start:end]):
            code = m.group(1)
            if " " not in code:
                found.append((code, "ToReasonMessage", src[:start + m.start()].count("\n") + 1))
    return found


def refresh(mirrors: Path) -> dict:
    repo = karpenter.Repo(mirrors, karpenter.AWS)
    tags = repo.release_tags()
    merged: dict[str, dict] = {}
    for tag in tags:
        src = common.show(repo.gitdir, tag, PATH)
        if src is None:
            continue
        for code, how, line in _codes(src):
            item = merged.setdefault(code, {"code": code, "named_by": [], "where": []})
            item["named_by"].append(how)
            item["where"].append(f"{tag}:{PATH}:{line}")
    items = []
    for code in sorted(merged):
        item = merged[code]
        item["named_by"] = sorted(set(item["named_by"]))
        item["where"] = sorted(set(item["where"]), key=karpenter._where_order)
        item["reference"] = REFERENCE.get(code, "")
        items.append(item)
    return {"source": f"{karpenter.AWS} {PATH} at {', '.join(tags)}; meanings: {REFERENCE_URL}",
            "tags": tags, "items": items}


# ------------------------------------------------------------------------------------------ classing
_ENC = "kubectl describe ec2nodeclass <name>"
_NC = "kubectl describe nodeclaim <name> (condition Launched)"
# code -> (level, owner, finding code, next step, upgrade). The provider's own classing decides first:
# unfulfillableCapacityErrorCodes are retried on other offerings (an InsufficientCapacityError), cached as
# unavailable for 3 minutes (aws pkg/providers/instance/instance.go, pkg/cache).
CLASSES: dict[str, tuple[str, str, str | None, str, str]] = {
    "InsufficientInstanceCapacity": ("error", "capacity", "karpenter.insufficient_capacity",
        "Allow more instance types, zones or capacity types in the NodePool (or a capacity reservation for "
        "large GPU types), then " + _NC + ".", "the same code for every offering in the fleet error list"),
    "UnfulfillableCapacity": ("error", "capacity", "karpenter.insufficient_capacity",
        "Allow more instance types or zones for spot, or on-demand, in the NodePool; " + _NC + ".",
        "the spot placement score of the wanted types"),
    "ReservationCapacityExceeded": ("error", "capacity", "karpenter.insufficient_capacity",
        "aws ec2 describe-capacity-reservations (AvailableInstanceCount) for the reservation the "
        "EC2NodeClass selects; extend it or allow on-demand fallback.", "the reservation's instance counts"),
    "MaxSpotInstanceCountExceeded": ("error", "capacity", "karpenter.quota_exceeded",
        "Service Quotas: raise 'All ... Spot Instance Requests' for the family in the Region, or allow "
        "on-demand in the NodePool.", "the account's spot vCPU usage"),
    "VcpuLimitExceeded": ("error", "capacity", "karpenter.quota_exceeded",
        "Service Quotas: raise 'Running On-Demand ... instances' (vCPUs) for the instance family in the "
        "Region (P and G families have their own quotas).", "aws service-quotas get-service-quota for the family"),
    "MaxFleetCountExceeded": ("error", "capacity", "karpenter.quota_exceeded",
        "Service Quotas: the EC2 Fleet quota in the Region; delete stale fleets of other tools.",
        "aws ec2 describe-fleets count"),
    "Unsupported": ("error", "capacity", "karpenter.offering_unavailable_in_zone",
        "aws ec2 describe-instance-type-offerings --location-type availability-zone --filters "
        "Name=instance-type,Values=<type>; allow zones where the type is offered.",
        "the zone named in the EC2 message"),
    "InsufficientFreeAddressesInSubnet": ("error", "platform", "karpenter.subnet_problem",
        "aws ec2 describe-subnets (AvailableIpAddressCount) for the EC2NodeClass subnets; add subnets or free "
        "addresses.", "status.subnets of the EC2NodeClass"),
    "UnauthorizedOperation": ("error", "platform", None,
        "Add the denied EC2 action to the Karpenter controller role (or lift the boundary / SCP); decode the "
        "message with aws sts decode-authorization-message.", "CloudTrail AccessDenied for the controller role"),
    "AccessDenied": ("error", "platform", None,
        "Add the denied action to the Karpenter controller role's IAM policy.", "CloudTrail for the call"),
    "AuthFailure": ("error", "platform", None,
        "Check the controller's credentials (IRSA / Pod Identity) and its permission on the AMI.",
        "the AMI's launch permissions"),
    "AuthFailure.ServiceLinkedRoleCreationNotPermitted": ("error", "platform", None,
        "aws iam create-service-linked-role --aws-service-name spot.amazonaws.com, or allow "
        "iam:CreateServiceLinkedRole to the controller role.", ""),
    "RequestLimitExceeded": ("warning", "transient", None,
        "Nothing if it clears; otherwise find other callers throttling EC2 in the account (CloudTrail).",
        "the same code over several minutes"),
    "InternalError": ("warning", "transient", None, "Nothing if it clears; Karpenter retries.", ""),
    "DryRunOperation": ("normal", "benign", None, "Nothing: Karpenter's validation dry-run succeeded.", ""),
    "PendingVerification": ("error", "platform", None,
        "Wait for the account's Region verification or contact AWS Support.", ""),
    "InvalidUserData.Malformed": ("error", "platform", None,
        _ENC + " (spec.userData): shrink it below EC2's 16 KB limit.", ""),
    "InvalidAMIID.Malformed": ("error", "platform", "karpenter.nodeclass_not_ready",
        _ENC + " (spec.amiSelectorTerms).", ""),
    "InvalidAMIID.NotFound": ("error", "platform", "karpenter.nodeclass_not_ready",
        _ENC + " (status.amis): the AMI was deregistered or is not shared with the account.", ""),
    "InvalidParameter": ("error", "platform", None,
        _ENC + ": select security groups and subnets of the same VPC.", ""),
    "InvalidParameterValue": ("error", "platform", None,
        _ENC + " (status.instanceProfile): the instance profile must exist.", ""),
    "NoSuchEntity": ("error", "platform", "karpenter.nodeclass_not_ready",
        _ENC + " (spec.role / spec.instanceProfile): the IAM role or profile must exist.", ""),
    "ParameterNotFound": ("error", "platform", "karpenter.nodeclass_not_ready",
        _ENC + " (spec.amiSelectorTerms alias): the alias has no SSM parameter for this Kubernetes version.", ""),
    "QueueDoesNotExist": ("warning", "platform", None,
        "The controller's --interruption-queue / settings.interruptionQueue must name an existing SQS queue.", ""),
}
# Not-found codes of resources Karpenter manages itself are looked up again (aws pkg/errors IgnoreNotFound).
_NOT_FOUND = ("warning", "transient", None,
              "Nothing if it clears: Karpenter treats the resource as gone and recreates or forgets it.", "")


def classify(snapshot: dict) -> list[dict]:
    rows = []
    for item in snapshot["items"]:
        code = item["code"]
        if code in CLASSES:
            level, owner, finding, next_step, upgrade = CLASSES[code]
        elif "not_found" in item["named_by"] or "already_exists" in item["named_by"]:
            level, owner, finding, next_step, upgrade = _NOT_FOUND
        else:
            level, owner, finding, next_step, upgrade = ("error", "platform", None, _NC, "")
        meaning = item["reference"] or f"EC2 returned the error code {code}."
        rows.append(common.row(component="ec2", kind="ec2_code", reason=code, level=level, message=code,
                               owner=owner, meaning=meaning, next_step=next_step, upgrade=upgrade, code=finding,
                               where=item["where"], literal=True))
    return rows
