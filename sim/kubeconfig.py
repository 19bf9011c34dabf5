"""Kubeconfig for the simulated cluster, with the AWS region and EC2 endpoint as a cluster extension.

Each simulated person has a kubeconfig of their own: the same context (the cluster's name in
gpubot's policy) with their own bearer token, as each person's laptop would hold. The simulator
maps the token to a user and groups (sim/authn.py), which is what SelfSubjectReview answers.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

AWS_EXTENSION = "gpubot.dev/aws"
SIM_TOKEN = "sim"


@dataclass(frozen=True)
class SimUser:
    name: str  # the kubeconfig's user entry, and the suffix of the person's kubeconfig file
    token: str
    username: str  # as the cluster authenticates the token
    groups: tuple[str, ...] = ()


# The admin's token is the one every kubeconfig written before carried; the three people let the
# checks act as distinct identities: two SREs who may approve, and a researcher who may not.
ADMIN = SimUser("admin", SIM_TOKEN, "gpubot-sim-admin", ("system:masters",))
SIM_USERS = (
    ADMIN,
    SimUser("alice", "sim-alice", "alice@example.com", ("sre-oncall",)),
    SimUser("bob", "sim-bob", "bob@example.com", ("sre",)),
    SimUser("carol", "sim-carol", "carol@example.com", ("ml-researchers",)),
)


def kubeconfig_document(*, server_url: str, context: str, region: str, ec2_endpoint: str | None,
                        user: SimUser = ADMIN) -> dict:
    entry = context if user == ADMIN else f"{context}-{user.name}"
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
        "users": [{"name": entry, "user": {"token": user.token}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": entry}}],
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
    user: SimUser = ADMIN,
) -> Path:
    """Write atomically (temp file + rename): other processes poll for this file to appear."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(
        kubeconfig_document(server_url=server_url, context=context, region=region, ec2_endpoint=ec2_endpoint,
                            user=user),
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


def user_kubeconfig_path(path: Path | str, user: SimUser) -> Path:
    """Where ``user``'s own kubeconfig sits beside the admin's (``kubeconfig`` -> ``kubeconfig.alice``)."""
    path = Path(path)
    return path if user == ADMIN else path.with_name(f"{path.name}.{user.name}")
