"""Kubeconfig as kubectl reads it, plus what the ``kubernetes`` client does not read: cluster names and
the gpubot AWS extension.

Several files (``KUBECONFIG=a:b``) merge by client-go's rules (k8s.io/client-go/tools/clientcmd/
loader.go, ``ClientConfigLoadingRules.Load``): missing files are ignored; the first file to set a map
key (a cluster, user or context name) wins and later entries of that name are dropped whole; a plain
value such as ``current-context`` comes from the first file that sets it. Relative paths inside a
file stay relative to that file (the client's ``KubeConfigMerger`` keeps each entry's own path).

A cluster entry may carry ``extensions: [{name: gpubot.dev/aws, extension: {region, ec2Endpoint}}]``;
without it the region comes from the settings or from an EKS API server URL.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes.config.kube_config import KubeConfigMerger

from bot.errors import ClusterConfigError

AWS_EXTENSION = "gpubot.dev/aws"
_EKS_URL = re.compile(r"\.(?P<region>[a-z]{2}(-gov)?-[a-z]+-\d)\.eks\.amazonaws\.com")


@dataclass(frozen=True)
class ContextInfo:
    name: str
    server: str
    region: str | None
    ec2_endpoint: str | None


@dataclass(frozen=True)
class Kubeconfig:
    """The merged view of every file: ``merged`` is what the kubernetes client's loader takes."""

    paths: tuple[Path, ...]
    merged: Any  # kubernetes.config.kube_config.ConfigNode
    current_context: str | None

    def _named(self, kind: str) -> dict[str, dict]:
        entries = self.merged.value.get(kind) or []
        return {_value(e).get("name"): _value(e) for e in entries if _value(e).get("name")}

    def contexts(self) -> list[str]:
        return sorted(self._named("contexts"))

    def resolve(self, context: str | None) -> str:
        """The context to use: the one asked for, found in any file, or the current one."""
        name = context or self.current_context
        if not name or name not in self._named("contexts"):
            known = ", ".join(self.contexts()) or "none"
            where = ":".join(str(p) for p in self.paths)
            what = f"context {name!r} is" if name else "no context is selected and current-context is"
            raise ClusterConfigError(f"{what} not in {where} (contexts: {known}): pass --context or set "
                                     "GPUBOT_CONTEXT to one of them")
        return name

    def user(self, context: str) -> dict:
        entry = self._named("contexts")[context].get("context") or {}
        return self._named("users").get(entry.get("user"), {}).get("user") or {}

    def set_user(self, context: str, user: dict) -> None:
        """Replace the user entry of ``context`` in this merged view (the files are never written)."""
        name = (self._named("contexts")[context].get("context") or {}).get("user")
        for entry in self.merged.value.get("users") or []:
            if _value(entry).get("name") == name:
                _value(entry)["user"] = user

    def info(self, context: str) -> ContextInfo:
        entry = self._named("contexts")[context].get("context") or {}
        cluster = self._named("clusters").get(entry.get("cluster"), {}).get("cluster") or {}
        server = str(cluster.get("server", ""))
        ext: dict = {}
        for item in cluster.get("extensions") or []:
            if item.get("name") == AWS_EXTENSION:
                ext = item.get("extension") or {}
        region = ext.get("region")
        if not region:
            match = _EKS_URL.search(server)
            region = match.group("region") if match else None
        return ContextInfo(name=context, server=server, region=region, ec2_endpoint=ext.get("ec2Endpoint"))


def _value(entry: Any) -> dict:
    return entry.value if hasattr(entry, "value") else entry


def kubeconfig_paths(explicit: str | None) -> list[Path]:
    """The kubeconfig files that exist, in precedence order: ``explicit`` (``--kubeconfig`` or
    KUBECONFIG, a path list either way), else ~/.kube/config. Empty files are skipped as kubectl
    skips them."""
    raw = explicit or os.environ.get("KUBECONFIG") or str(Path.home() / ".kube" / "config")
    found: list[Path] = []
    for part in raw.split(os.pathsep):
        path = Path(part).expanduser() if part else None
        if path is not None and path.is_file() and path not in found and path.stat().st_size > 0:
            found.append(path)
    return found


def load_kubeconfig(explicit: str | None) -> Kubeconfig | None:
    """Every kubeconfig file merged as kubectl merges them; None when there is none."""
    paths = kubeconfig_paths(explicit)
    current: str | None = None
    readable: list[Path] = []
    for path in paths:
        try:
            doc = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise ClusterConfigError(f"cannot read kubeconfig {path}: {' '.join(str(exc).split())}") from None
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise ClusterConfigError(f"kubeconfig {path} is not a kubeconfig (a YAML mapping with clusters, "
                                     "users and contexts)")
        readable.append(path)
        # client-go merges plain values in reverse with override: the first non-empty one wins.
        current = current or doc.get("current-context") or None
    if not readable:
        return None
    merger = KubeConfigMerger(os.pathsep.join(str(p) for p in readable))
    return Kubeconfig(paths=tuple(readable), merged=merger.config, current_context=current)


def missing_kubeconfig(explicit: str | None) -> ClusterConfigError:
    looked = explicit or os.environ.get("KUBECONFIG") or str(Path.home() / ".kube" / "config")
    return ClusterConfigError(f"no kubeconfig found at {looked} and not running in a cluster: set KUBECONFIG "
                              "or pass --kubeconfig")
