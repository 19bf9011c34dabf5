"""Scenario discovery and loading: YAML files of Kubernetes objects and container logs.

Each scenario stands on a base cluster: `base: karpenter | auto-mode | none` (sim/bases/), or, when
omitted, the directory's `_base.yaml` if it has one, else `karpenter`. Scenarios served together must
stand on the same base, in the same region. The format is described in sim/scenarios/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import yaml

from sim import bases, timestamps
from sim.access import parse_rule
from sim.bases import BaseError, KarpenterOptions
from sim.cluster import Cluster

BASE_NAME = "_base"
DEFAULT_REGION = "us-west-2"
# Namespaces every real cluster has; objects may live there without a scenario declaring them.
_BUILTIN_NAMESPACES = ("default", "kube-system")
_KEYS = frozenset({
    "name", "seed", "source", "description", "base", "karpenter", "region", "target", "namespace",
    "expect", "ec2", "api", "objects", "logs",
})
CAPACITY_TYPES = ("on-demand", "spot", "reserved")
LEADER_LEASE = "karpenter-leader-election"
_CONTROLLER_CONTAINER = "controller"


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
    source: str = ""
    base: str = ""  # the base it stands on: karpenter, auto-mode, none or _base (the directory's)
    region: str = ""


@dataclass(frozen=True)
class ApiSettings:
    """How the scenario's API server differs from the default one."""

    forbidden: tuple[str, ...] = ()
    serve: tuple[tuple[str, str], ...] = ()  # (group, the only version served)


@dataclass(frozen=True)
class _Scenario:
    info: ScenarioInfo
    path: Path
    objects: list[dict]
    logs: list[dict]
    karpenter: KarpenterOptions | None = None
    offerings: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    api: ApiSettings = ApiSettings()


@dataclass(frozen=True)
class Loaded:
    """What load() put into the cluster, and what the rest of the sim (EC2, API) must honour."""

    scenarios: list[ScenarioInfo]
    base: str
    region: str
    offerings: dict[str, dict[str, list[str]]]  # instance type -> zone -> capacity types
    api: ApiSettings


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _mapping(doc: dict, key: str, path: Path) -> dict:
    value = doc.get(key) or {}
    if not isinstance(value, dict):
        raise ScenarioError(f"{path}: {key} must be a mapping")
    return value


def _parse_offerings(raw: dict, *, path: Path, region: str) -> dict[str, dict[str, list[str]]]:
    offerings: dict[str, dict[str, list[str]]] = {}
    for instance_type, zones in (raw.get("offerings") or {}).items():
        if not isinstance(zones, dict):
            raise ScenarioError(f"{path}: ec2.offerings.{instance_type} must map zones to capacity types")
        offerings[str(instance_type)] = {}
        for zone, capacity_types in zones.items():
            if not str(zone).startswith(region):
                raise ScenarioError(f"{path}: ec2.offerings.{instance_type}: zone {zone} is not in region {region}; "
                                    "set `region:` or use its zones")
            listed = [str(c) for c in (capacity_types or [])]
            wrong = [c for c in listed if c not in CAPACITY_TYPES]
            if wrong:
                raise ScenarioError(f"{path}: ec2.offerings.{instance_type}.{zone}: unknown capacity type(s) "
                                    f"{', '.join(wrong)}; valid: {', '.join(CAPACITY_TYPES)}")
            offerings[str(instance_type)][str(zone)] = listed
    return offerings


def _parse_api(raw: dict, *, path: Path) -> ApiSettings:
    from sim.resources import SERVABLE_VERSIONS

    forbidden = raw.get("forbidden") or []
    if not isinstance(forbidden, list) or not all(isinstance(r, str) for r in forbidden):
        raise ScenarioError(f"{path}: api.forbidden must be a list of resources such as pods/log")
    for rule in forbidden:
        try:
            parse_rule(rule)
        except ValueError as exc:
            raise ScenarioError(f"{path}: {exc}") from exc
    serve = raw.get("serve") or {}
    if not isinstance(serve, dict):
        raise ScenarioError(f"{path}: api.serve must map an API group to the one version served")
    for group, version in serve.items():
        valid = SERVABLE_VERSIONS.get(str(group))
        if valid is None or str(version) not in valid:
            known = "; ".join(f"{g}: {', '.join(v)}" for g, v in SERVABLE_VERSIONS.items())
            raise ScenarioError(f"{path}: api.serve: {group} {version} is not a version the sim knows ({known})")
    return ApiSettings(tuple(forbidden), tuple((str(g), str(v)) for g, v in serve.items()))


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
    unknown = sorted(set(doc) - _KEYS)
    if unknown:
        raise ScenarioError(f"{path}: unknown key(s) {', '.join(unknown)}; valid keys: {', '.join(sorted(_KEYS))}")
    base = str(doc.get("base") or "")
    if base and base not in bases.NAMES:
        raise ScenarioError(f"{path}: base {base!r} is not one of {', '.join(bases.NAMES)}")
    if "karpenter" in doc and base not in ("", bases.KARPENTER):
        raise ScenarioError(f"{path}: karpenter settings need base: karpenter (this file says base: {base})")
    region = str(doc.get("region") or "")
    try:
        karpenter = KarpenterOptions.parse(doc["karpenter"], where=str(path)) if "karpenter" in doc else None
    except (BaseError, TypeError, ValueError) as exc:
        raise ScenarioError(str(exc)) from exc
    info = ScenarioInfo(
        name=name,
        seed=str(doc.get("seed", "")),
        description=str(doc.get("description", "")),
        target=str(doc.get("target", "")),
        namespace=str(doc.get("namespace", "")),
        first_finding=str((doc.get("expect") or {}).get("first_finding", "")),
        source=str(doc.get("source", "")),
        base=base,
        region=region,
    )
    return _Scenario(
        info=info,
        path=path,
        objects=list(doc.get("objects") or []),
        logs=list(doc.get("logs") or []),
        karpenter=karpenter,
        offerings=_parse_offerings(_mapping(doc, "ec2", path), path=path, region=region or DEFAULT_REGION),
        api=_parse_api(_mapping(doc, "api", path), path=path),
    )


def _paths(directory: Path) -> dict[str, Path]:
    return {p.stem: p for p in sorted(directory.glob("*.yaml")) if p.stem != BASE_NAME}


def _directory(directory: Path | str | None) -> Path:
    directory = Path(directory) if directory else default_directory()
    if not directory.is_dir():
        raise ScenarioError(f"scenario directory {directory} does not exist")
    return directory


@dataclass(frozen=True)
class _Ground:
    """The base a scenario stands on, resolved: what must match for scenarios to be served together."""

    base: str
    region: str
    karpenter: KarpenterOptions

    def describe(self) -> str:
        text = f"base {self.base}, region {self.region}"
        if self.base == bases.KARPENTER:
            k = self.karpenter
            text += f", Karpenter {k.version} in {k.namespace} ({k.replicas} replicas, leader {k.leader})"
        return text


def _ground(scenario: _Scenario | None, *, directory_base: _Scenario | None) -> _Ground:
    raw_base = scenario.info.base if scenario else ""
    base = raw_base or (BASE_NAME if directory_base else bases.KARPENTER)
    region = (scenario.info.region if scenario else "") or (
        directory_base.info.region if base == BASE_NAME and directory_base else ""
    ) or DEFAULT_REGION
    karpenter = (scenario.karpenter if scenario else None) or KarpenterOptions()
    return _Ground(base, region, karpenter)


def _with_ground(scenario: _Scenario, ground: _Ground) -> _Scenario:
    info = ScenarioInfo(**{**scenario.info.__dict__, "base": ground.base, "region": ground.region})
    return _Scenario(info, scenario.path, scenario.objects, scenario.logs, scenario.karpenter,
                     scenario.offerings, scenario.api)


def _read_directory_base(directory: Path) -> _Scenario | None:
    path = directory / f"{BASE_NAME}.yaml"
    return _read(path) if path.exists() else None


def list_scenarios(directory: Path | str | None = None) -> list[ScenarioInfo]:
    """Every scenario in the directory except _base, sorted by name."""
    directory = _directory(directory)
    directory_base = _read_directory_base(directory)
    infos = []
    for _, path in sorted(_paths(directory).items()):
        scenario = _read(path)
        infos.append(_with_ground(scenario, _ground(scenario, directory_base=directory_base)).info)
    return infos


def _select(directory: Path, names: list[str] | None) -> tuple[_Ground, list[_Scenario], _Scenario | None]:
    available = _paths(directory)
    wanted = sorted(available) if names is None else list(dict.fromkeys(names))
    unknown = [n for n in wanted if n not in available]
    if unknown:
        valid = ", ".join(sorted(available)) or "(none)"
        raise ValueError(f"unknown scenario(s): {', '.join(unknown)}; valid names: {valid}")
    directory_base = _read_directory_base(directory)
    chosen = [_read(available[n]) for n in wanted]
    grounds = [_ground(s, directory_base=directory_base) for s in chosen]
    ground = grounds[0] if grounds else _ground(None, directory_base=directory_base)
    for scenario, other in zip(chosen, grounds):
        if other != ground:
            raise ScenarioError(
                f"scenarios {chosen[0].info.name} ({ground.describe()}) and {scenario.info.name} "
                f"({other.describe()}) need different base clusters: serve them separately with --scenario NAME"
            )
    return ground, [_with_ground(s, ground) for s in chosen], directory_base


def _identity(obj: dict, scenario_path: Path) -> tuple[str, str, str, str]:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    complete = isinstance(metadata, dict) and obj.get("apiVersion") and obj.get("kind") and metadata.get("name")
    if not complete:
        raise ScenarioError(f"{scenario_path}: every object needs apiVersion, kind and metadata.name: {obj!r:.200}")
    return (obj["apiVersion"], obj["kind"], metadata.get("namespace", ""), metadata["name"])


def _with_namespace(cluster: Cluster, obj: dict, namespace: str) -> dict:
    """Namespaced objects written without a namespace land in the scenario's namespace."""
    metadata = obj.get("metadata") or {}
    if metadata.get("namespace") or not cluster.type_for(obj).namespaced:
        return obj
    return {**obj, "metadata": {**metadata, "namespace": namespace or "default"}}


def _collect_objects(
    cluster: Cluster, sources: list[tuple[str, Path, str, list[dict]]], *, now: datetime
) -> list[dict]:
    """sources: (scenario name, path, default namespace, objects) in load order."""
    seen: dict[tuple[str, str, str, str], tuple[str, dict]] = {}
    for name, path, namespace, objects in sources:
        for raw in objects:
            _identity(raw, path)
            obj = timestamps.resolve(_with_namespace(cluster, raw, namespace), now=now)
            identity = _identity(obj, path)
            if identity in seen:
                first_scenario, first = seen[identity]
                if first != obj:
                    raise ScenarioError(
                        f"{'/'.join(identity)} is defined differently by scenarios {first_scenario!r} and {name!r}"
                    )
                continue
            seen[identity] = (name, obj)
    return [obj for _, obj in seen.values()]


def _ensure_namespaces(cluster: Cluster, names: list[str], *, now: datetime) -> None:
    namespace_type = cluster.resolve(group="", version="v1", plural="namespaces")
    for name in dict.fromkeys([*_BUILTIN_NAMESPACES, *names]):
        if name and cluster.find(namespace_type, namespace=None, name=name) is None:
            cluster.add({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name},
                             "creationTimestamp": timestamps.format_time(now)},
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            })


def _karpenter_pods(cluster: Cluster) -> tuple[str, str, list[str]]:
    """(namespace, leader pod, follower pods) from the leader-election Lease and the controller pods."""
    leases = cluster.resolve(group="coordination.k8s.io", version="v1", plural="leases")
    pods = cluster.resolve(group="", version="v1", plural="pods")
    for lease in cluster.list(leases).items:
        if lease["metadata"]["name"] != LEADER_LEASE:
            continue
        namespace = lease["metadata"]["namespace"]
        # client-go leaderelection: holderIdentity is "<pod name>_<uuid>".
        leader = str((lease.get("spec") or {}).get("holderIdentity", "")).split("_")[0]
        controllers = [
            p["metadata"]["name"] for p in cluster.list(pods, namespace=namespace).items
            if (p["metadata"].get("labels") or {}).get("app.kubernetes.io/name") == "karpenter"
        ]
        return namespace, leader, [p for p in controllers if p != leader]
    return "", "", []


def _load_logs(cluster: Cluster, scenario: _Scenario, directory: Path) -> None:
    for entry in scenario.logs:
        if not isinstance(entry, dict):
            raise ScenarioError(f"{scenario.path}: a log entry must be a mapping: {entry!r:.200}")
        if "text" in entry:
            text = str(entry["text"])
        elif "file" in entry:
            text = (directory / entry["file"]).read_text()
        else:
            raise ScenarioError(f"{scenario.path}: log entry needs 'text' or 'file': {entry!r:.200}")
        if "karpenter" in entry:
            role = entry["karpenter"]
            namespace, leader, followers = _karpenter_pods(cluster)
            if role not in ("leader", "follower"):
                raise ScenarioError(f"{scenario.path}: karpenter: {role!r} must be leader or follower")
            if not leader:
                raise ScenarioError(f"{scenario.path}: karpenter: {role} needs the {LEADER_LEASE} Lease "
                                    "(base: karpenter provides it)")
            if role == "follower" and not followers:
                raise ScenarioError(f"{scenario.path}: karpenter: follower needs karpenter.replicas of 2 or more")
            pod = leader if role == "leader" else followers[0]
            cluster.add_log(namespace=namespace, pod=pod, container=_CONTROLLER_CONTAINER,
                            previous=bool(entry.get("previous", False)), text=text)
            continue
        cluster.add_log(
            namespace=entry.get("namespace") or scenario.info.namespace or "default",
            pod=entry["pod"],
            container=entry.get("container", ""),
            previous=bool(entry.get("previous", False)),
            text=text,
        )


def _merge_offerings(scenarios: list[_Scenario]) -> dict[str, dict[str, list[str]]]:
    merged: dict[str, dict[str, list[str]]] = {}
    owner: dict[str, str] = {}
    for scenario in scenarios:
        for instance_type, zones in scenario.offerings.items():
            if instance_type in merged and merged[instance_type] != zones:
                raise ScenarioError(f"ec2.offerings.{instance_type} differs between scenarios {owner[instance_type]!r} "
                                    f"and {scenario.info.name!r}: serve them separately with --scenario NAME")
            merged[instance_type], owner[instance_type] = zones, scenario.info.name
    return merged


def _merge_api(scenarios: list[_Scenario]) -> ApiSettings:
    forbidden: list[str] = []
    serve: dict[str, tuple[str, str]] = {}
    for scenario in scenarios:
        forbidden += [r for r in scenario.api.forbidden if r not in forbidden]
        for group, version in scenario.api.serve:
            if group in serve and serve[group][0] != version:
                raise ScenarioError(f"api.serve.{group} is {serve[group][0]} in {serve[group][1]!r} but {version} in "
                                    f"{scenario.info.name!r}: serve them separately with --scenario NAME")
            serve[group] = (version, scenario.info.name)
    return ApiSettings(tuple(forbidden), tuple((g, v) for g, (v, _) in serve.items()))


def load(
    cluster: Cluster,
    names: list[str] | None,
    directory: Path | str | None = None,
    *,
    now: datetime | None = None,
) -> Loaded:
    """Load the base and the named scenarios (None: all) into the cluster."""
    directory = _directory(directory)
    now = now or datetime.now(timezone.utc)
    ground, scenarios, directory_base = _select(directory, names)
    api = _merge_api(scenarios)
    for group, version in api.serve:
        cluster.serve_only(group=group, version=version)
    cluster.forbid(api.forbidden)
    sources: list[tuple[str, Path, str, list[dict]]] = []
    controller_namespace = ""
    if ground.base == BASE_NAME and directory_base is not None:
        sources.append((BASE_NAME, directory_base.path, "default", directory_base.objects))
    else:
        rendered = bases.render(ground.base, region=ground.region, karpenter=ground.karpenter)
        controller_namespace = rendered.controller_namespace
        sources.append((ground.base, Path(f"sim/bases/{ground.base}.yaml"), "default", rendered.objects))
    sources += [(s.info.name, s.path, s.info.namespace, s.objects) for s in scenarios]
    objects = _collect_objects(cluster, sources, now=now)
    # Namespaces first, as a real cluster has them before anything in them.
    declared = [o for o in objects if o.get("kind") == "Namespace" and o.get("apiVersion") == "v1"]
    for obj in declared:
        cluster.add(obj)
    wanted = [controller_namespace, *(s.info.namespace for s in scenarios)]
    wanted += [(o.get("metadata") or {}).get("namespace") for o in objects]
    _ensure_namespaces(cluster, wanted, now=now)
    for obj in objects:
        if not (obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1"):
            cluster.add(obj)
    if ground.base == BASE_NAME and directory_base is not None:
        _load_logs(cluster, directory_base, directory)
    for scenario in scenarios:
        _load_logs(cluster, scenario, directory)
    return Loaded(
        scenarios=[s.info for s in scenarios],
        base=ground.base,
        region=ground.region,
        offerings=_merge_offerings(scenarios),
        api=api,
    )


def load_into(
    cluster: Cluster,
    names: list[str] | None,
    directory: Path | str | None = None,
) -> list[ScenarioInfo]:
    """Load the base and the named scenarios (None: all). Returns what was loaded, the base excluded."""
    return load(cluster, names, directory).scenarios
