"""Kubeconfig for the simulated cluster, with the AWS region and EC2 endpoint as a cluster extension."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import yaml

AWS_EXTENSION = "gpubot.dev/aws"
SIM_TOKEN = "sim"


def kubeconfig_document(*, server_url: str, context: str, region: str, ec2_endpoint: str | None) -> dict:
    aws = {"region": region}
    if ec2_endpoint is not None:
        aws["ec2Endpoint"] = ec2_endpoint
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": context,
                "cluster": {"server": server_url, "extensions": [{"name": AWS_EXTENSION, "extension": aws}]},
            }
        ],
        "users": [{"name": context, "user": {"token": SIM_TOKEN}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
        "preferences": {},
    }


def write_kubeconfig(
    path: Path | str,
    *,
    server_url: str,
    context: str = "gpubot-sim",
    region: str = "ap-northeast-2",
    ec2_endpoint: str | None = None,
) -> Path:
    """Write atomically (temp file + rename): other processes poll for this file to appear."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(
        kubeconfig_document(server_url=server_url, context=context, region=region, ec2_endpoint=ec2_endpoint),
        sort_keys=False,
    )
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
