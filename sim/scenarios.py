"""Scenario discovery and loading: YAML files of Kubernetes objects and container logs.

`<directory>/_base.yaml` holds objects every scenario shares and is always loaded first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from sim.cluster import Cluster

BASE_NAME = "_base"
# Namespaces every real cluster has; objects may live there without a scenario declaring them.
_BUILTIN_NAMESPACES = ("default", "kube-system")


def default_directory() -> Path:
    return Path(__file__).resolve().parent / "scenarios"


class ScenarioError(ValueError):
    """A scenario file is malformed or two scenarios disagree about an object."""


@dataclass(frozen=True)
class ScenarioInfo:
    name: str
    seed: str
    description: str
    target: str  # "kind/name"
    namespace: str
    first_finding: str


@dataclass(frozen=True)
class _Scenario:
    info: ScenarioInfo
    path: Path
    objects: list[dict]
    logs: list[dict]


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read(path: Path) -> _Scenario:
    try:
        doc = yaml.load(path.read_text(), Loader=_Loader) or {}
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise ScenarioError(f"{path}: a scenario must be a mapping")
    name = str(doc.get("name", ""))
    if name != path.stem:
        raise ScenarioError(f"{path}: name {name!r} must equal the file name {path.stem!r}")
    info = ScenarioInfo(
        name=name,
        seed=str(doc.get("seed", "")),
        description=str(doc.get("description", "")),
        target=str(doc.get("target", "")),
        namespace=str(doc.get("namespace", "")),
        first_finding=str((doc.get("expect") or {}).get("first_finding", "")),
    )
    return _Scenario(info, path, list(doc.get("objects") or []), list(doc.get("logs") or []))


def _paths(directory: Path) -> dict[str, Path]:
    return {p.stem: p for p in sorted(directory.glob("*.yaml")) if p.stem != BASE_NAME}


def list_scenarios(directory: Path | str | None = None) -> list[ScenarioInfo]:
    """Every scenario in the directory except _base, sorted by name."""
    directory = Path(directory) if directory else default_directory()
    return [_read(path).info for name, path in sorted(_paths(directory).items())]


def _select(directory: Path, names: list[str] | None) -> list[_Scenario]:
    available = _paths(directory)
    wanted = sorted(available) if names is None else list(dict.fromkeys(names))
    unknown = [n for n in wanted if n not in available]
    if unknown:
        valid = ", ".join(sorted(available)) or "(none)"
        raise ValueError(f"unknown scenario(s): {', '.join(unknown)}; valid names: {valid}")
    base = directory / f"{BASE_NAME}.yaml"
    chosen = [_read(base)] if base.exists() else []
    return chosen + [_read(available[n]) for n in wanted]


def _identity(obj: dict, scenario: _Scenario) -> tuple[str, str, str, str]:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    complete = isinstance(metadata, dict) and obj.get("apiVersion") and obj.get("kind") and metadata.get("name")
    if not complete:
        raise ScenarioError(f"{scenario.path}: every object needs apiVersion, kind and metadata.name: {obj!r:.200}")
    return (obj["apiVersion"], obj["kind"], metadata.get("namespace", ""), metadata["name"])


def _with_namespace(cluster: Cluster, obj: dict, scenario: _Scenario) -> dict:
    """Namespaced objects written without a namespace land in the scenario's namespace."""
    metadata = obj.get("metadata") or {}
    if metadata.get("namespace") or not cluster.type_for(obj).namespaced:
        return obj
    namespace = scenario.info.namespace or "default"
    return {**obj, "metadata": {**metadata, "namespace": namespace}}


def _collect_objects(cluster: Cluster, scenarios: list[_Scenario]) -> list[dict]:
    seen: dict[tuple[str, str, str, str], tuple[str, dict]] = {}
    for scenario in scenarios:
        for raw in scenario.objects:
            _identity(raw, scenario)
            obj = _with_namespace(cluster, raw, scenario)
            identity = _identity(obj, scenario)
            if identity in seen:
                first_scenario, first = seen[identity]
                if first != obj:
                    raise ScenarioError(
                        f"{'/'.join(identity)} is defined differently by scenarios "
                        f"{first_scenario!r} and {scenario.info.name!r}"
                    )
                continue
            seen[identity] = (scenario.info.name, obj)
    return [obj for _, obj in seen.values()]


def _ensure_namespaces(cluster: Cluster, objects: list[dict]) -> None:
    namespace_type = cluster.resolve(group="", version="v1", plural="namespaces")
    wanted = dict.fromkeys([*_BUILTIN_NAMESPACES, *((o.get("metadata") or {}).get("namespace") for o in objects)])
    for name in wanted:
        if name and cluster.find(namespace_type, namespace=None, name=name) is None:
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            cluster.add({**namespace, "status": {"phase": "Active"}})


def _load_logs(cluster: Cluster, scenario: _Scenario, directory: Path) -> None:
    for entry in scenario.logs:
        if "text" in entry:
            text = str(entry["text"])
        elif "file" in entry:
            text = (directory / entry["file"]).read_text()
        else:
            raise ScenarioError(f"{scenario.path}: log entry needs 'text' or 'file': {entry!r:.200}")
        cluster.add_log(
            namespace=entry.get("namespace") or scenario.info.namespace or "default",
            pod=entry["pod"],
            container=entry.get("container", ""),
            previous=bool(entry.get("previous", False)),
            text=text,
        )


def load_into(
    cluster: Cluster,
    names: list[str] | None,
    directory: Path | str | None = None,
) -> list[ScenarioInfo]:
    """Load _base and the named scenarios (None: all). Returns what was loaded, _base excluded."""
    directory = Path(directory) if directory else default_directory()
    scenarios = _select(directory, names)
    objects = _collect_objects(cluster, scenarios)
    for obj in objects:
        cluster.add(obj)
    _ensure_namespaces(cluster, objects)
    for scenario in scenarios:
        _load_logs(cluster, scenario, directory)
    return [s.info for s in scenarios if s.info.name != BASE_NAME]
