"""Reading what the ``kubernetes`` client does not: cluster names and the gpubot AWS extension.

A cluster entry may carry ``extensions: [{name: gpubot.dev/aws, extension: {region, ec2Endpoint}}]``;
without it the region comes from the settings or from an EKS API server URL.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from bot.errors import ClusterConfigError

AWS_EXTENSION = "gpubot.dev/aws"
_EKS_URL = re.compile(r"\.(?P<region>[a-z]{2}(-gov)?-[a-z]+-\d)\.eks\.amazonaws\.com")


@dataclass(frozen=True)
class ContextInfo:
    name: str
    server: str
    region: str | None
    ec2_endpoint: str | None


def kubeconfig_path(explicit: str | None) -> Path:
    raw = explicit or os.environ.get("KUBECONFIG") or str(Path.home() / ".kube" / "config")
    # KUBECONFIG may list several files; the first one that exists wins for our extra reads.
    for part in raw.split(os.pathsep):
        if part and Path(part).expanduser().exists():
            return Path(part).expanduser()
    raise ClusterConfigError(
        f"no kubeconfig found at {raw}: set KUBECONFIG or pass --kubeconfig, or run inside the cluster"
    )


def read_context(path: Path, context: str | None) -> ContextInfo:
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ClusterConfigError(f"cannot read kubeconfig {path}: {exc}") from None
    name = context or doc.get("current-context")
    contexts = {c.get("name"): c.get("context") or {} for c in doc.get("contexts") or []}
    if not name or name not in contexts:
        known = ", ".join(sorted(k for k in contexts if k)) or "none"
        raise ClusterConfigError(f"context {name!r} is not in {path} (contexts: {known})")
    clusters = {c.get("name"): c.get("cluster") or {} for c in doc.get("clusters") or []}
    cluster = clusters.get(contexts[name].get("cluster"), {})
    server = str(cluster.get("server", ""))
    ext = {}
    for entry in cluster.get("extensions") or []:
        if entry.get("name") == AWS_EXTENSION:
            ext = entry.get("extension") or {}
    region = ext.get("region")
    if not region:
        match = _EKS_URL.search(server)
        region = match.group("region") if match else None
    return ContextInfo(name=name, server=server, region=region, ec2_endpoint=ext.get("ec2Endpoint"))
