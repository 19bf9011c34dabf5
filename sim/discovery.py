"""Minimal discovery documents: /version, /api, /apis, /apis/{group} and resource lists."""

from __future__ import annotations

from sim.cluster import Cluster

_VERBS = ["create", "delete", "get", "list", "patch", "update"]


def version() -> dict:
    return {
        "major": "1",
        "minor": "33",
        "gitVersion": "v1.33.3-sim",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-07-15T00:00:00Z",
        "goVersion": "go1.24.4",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def _group_versions(cluster: Cluster) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for rt in cluster.resource_types():
        versions = groups.setdefault(rt.group, [])
        if rt.version not in versions:
            versions.append(rt.version)
    return groups


def _group(name: str, versions: list[str]) -> dict:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def answer(cluster: Cluster, segments: list[str]) -> dict | None:
    """/api, /apis and /apis/{group}; None when the path is none of them."""
    if segments == ["api"]:
        return {"kind": "APIVersions", "apiVersion": "v1", "versions": ["v1"], "serverAddressByClientCIDRs": []}
    groups = _group_versions(cluster)
    if segments == ["apis"]:
        named = [_group(name, versions) for name, versions in sorted(groups.items()) if name]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": named}
    if len(segments) == 2 and segments[0] == "apis" and segments[1] in groups and segments[1]:
        return {"kind": "APIGroup", "apiVersion": "v1", **_group(segments[1], groups[segments[1]])}
    return None


def resource_list(cluster: Cluster, *, group: str, version: str) -> dict | None:
    types = [rt for rt in cluster.resource_types() if rt.group == group and rt.version == version]
    if not types:
        return None
    resources = []
    for rt in types:
        base = {"singularName": rt.kind.lower(), "namespaced": rt.namespaced, "kind": rt.kind}
        resources.append({"name": rt.plural, **base, "verbs": _VERBS})
        resources.append({"name": f"{rt.plural}/status", **base, "verbs": ["get", "patch", "update"]})
        if rt.kind == "Pod" and not group:
            resources.append({"name": "pods/log", **base, "kind": "Pod", "verbs": ["get"]})
    group_version = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}
