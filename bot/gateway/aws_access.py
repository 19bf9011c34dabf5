"""Whether gpubot's AWS credentials work where it will use them (``gpubot doctor``): who STS says they
are (GetCallerIdentity, allowed to every principal) and one small DescribeInstanceTypes, the EC2 call a
diagnosis makes."""
from __future__ import annotations

import boto3
import botocore.exceptions
from botocore.config import Config

from bot.gateway.ec2 import _sts_endpoint


class AwsAccessError(Exception):
    """One line: the call, what AWS (or the network) answered, and what to check."""


def check_aws(*, region: str, endpoint_url: str | None, timeout: float) -> tuple[str, int]:
    """The caller's ARN and how many instance types one page listed; AwsAccessError otherwise."""
    cfg = Config(connect_timeout=timeout, read_timeout=timeout, retries={"max_attempts": 2, "mode": "standard"})
    session = boto3.session.Session(region_name=region)
    if session.get_credentials() is None:
        raise AwsAccessError("no AWS credentials found: give the pod an IAM role (IRSA or EKS Pod Identity) "
                             "or set AWS_PROFILE / AWS_ACCESS_KEY_ID")
    try:
        sts = session.client("sts", endpoint_url=_sts_endpoint(endpoint_url), config=cfg)
        arn = str(sts.get_caller_identity()["Arn"])
    except botocore.exceptions.ClientError as exc:
        raise AwsAccessError(f"sts:GetCallerIdentity refused ({_code(exc)}): the credentials are invalid or "
                             "expired") from None
    except botocore.exceptions.BotoCoreError as exc:
        raise AwsAccessError(f"sts:GetCallerIdentity failed ({_line(exc)}): check the network path to STS "
                             "and AWS_ENDPOINT_URL_STS") from None
    try:
        ec2 = session.client("ec2", endpoint_url=endpoint_url, config=cfg)
        listed = ec2.describe_instance_types(MaxResults=5)["InstanceTypes"]
    except botocore.exceptions.ClientError as exc:
        raise AwsAccessError(f"{arn} may not call ec2:DescribeInstanceTypes ({_code(exc)}): allow it in the "
                             "role's IAM policy") from None
    except botocore.exceptions.BotoCoreError as exc:
        raise AwsAccessError(f"ec2:DescribeInstanceTypes failed ({_line(exc)}): check AWS_REGION and the "
                             "network path to EC2 (AWS_ENDPOINT_URL_EC2)") from None
    return arn, len(listed)


def _code(exc: botocore.exceptions.ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code") or "error")


def _line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:200]
