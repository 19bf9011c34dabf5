"""The base clusters a scenario can stand on: open-source Karpenter on EKS, or EKS Auto Mode.

The YAML under sim/bases/ holds the objects with ${...} placeholders; this module fills them in.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

import yaml

KARPENTER = "karpenter"
AUTO_MODE = "auto-mode"
NONE = "none"
NAMES = (KARPENTER, AUTO_MODE, NONE)

DEFAULT_KARPENTER_VERSION = "1.5.0"
# kubernetes-sigs/karpenter charts/karpenter/values.yaml: replicas: 2; the upstream install docs
# put the controller in kube-system.
DEFAULT_KARPENTER_NAMESPACE = "kube-system"
DEFAULT_REPLICAS = 2
_REPLICA_SET_HASH = "6c9f7d9b8"
_POD_SUFFIXES = ("2k7xq", "m4n8r", "p9s2t", "b5v7w", "h3j6k")
_SHORT_DIRECTIONS = {
    "northeast": "ne", "northwest": "nw", "southeast": "se", "southwest": "sw",
    "north": "n", "south": "s", "east": "e", "west": "w", "central": "c",
}
_WHOLE_PLACEHOLDER = re.compile(r"^\$\{(\w+)\}$")


class BaseError(ValueError):
    """A scenario asks for a base or Karpenter setting that does not exist."""


@dataclass(frozen=True)
class KarpenterOptions:
    version: str = DEFAULT_KARPENTER_VERSION
    namespace: str = DEFAULT_KARPENTER_NAMESPACE
    replicas: int = DEFAULT_REPLICAS
    leader: int = 0
    # extra controller environment, e.g. {MIN_VALUES_POLICY: BestEffort}: Karpenter's settings
    # (kubernetes-sigs/karpenter pkg/operator/options/options.go) as the Helm chart's controller.env sets them
    env: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, raw: object, *, where: str) -> "KarpenterOptions":
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise BaseError(f"{where}: karpenter must be a mapping (version, namespace, replicas, leader, env)")
        unknown = sorted(set(raw) - {"version", "namespace", "replicas", "leader", "env"})
        if unknown:
            raise BaseError(f"{where}: unknown karpenter key(s) {', '.join(unknown)}; "
                            "valid: version, namespace, replicas, leader, env")
        env = raw.get("env") or {}
        if not isinstance(env, dict):
            raise BaseError(f"{where}: karpenter.env must map variable names to values, e.g. {{MIN_VALUES_POLICY: BestEffort}}")
        options = cls(
            version=str(raw.get("version", DEFAULT_KARPENTER_VERSION)).removeprefix("v"),
            namespace=str(raw.get("namespace", DEFAULT_KARPENTER_NAMESPACE)),
            replicas=int(raw.get("replicas", DEFAULT_REPLICAS)),
            leader=int(raw.get("leader", 0)),
            env=tuple((str(k), str(v)) for k, v in env.items()),
        )
        if not 1 <= options.replicas <= len(_POD_SUFFIXES):
            raise BaseError(f"{where}: karpenter.replicas must be 1 to {len(_POD_SUFFIXES)}, got {options.replicas}")
        if not 0 <= options.leader < options.replicas:
            raise BaseError(f"{where}: karpenter.leader must index one of the {options.replicas} replicas "
                            f"(0 to {options.replicas - 1}), got {options.leader}")
        return options


@dataclass(frozen=True)
class RenderedBase:
    objects: list[dict]
    controller_namespace: str = ""
    controller_pods: list[str] = field(default_factory=list)
    leader: str = ""


def zone_id_prefix(region: str) -> str:
    """us-east-1 -> use1, ap-northeast-2 -> apne2: the prefix of EC2's zone ids (use1-az1)."""
    parts = region.split("-")
    if len(parts) != 3:
        return region
    return parts[0] + _SHORT_DIRECTIONS.get(parts[1], parts[1][:1]) + parts[2]


def controller_pod_names(replicas: int) -> list[str]:
    return [f"karpenter-{_REPLICA_SET_HASH}-{suffix}" for suffix in _POD_SUFFIXES[:replicas]]


def _fill(node: object, values: dict[str, object]) -> object:
    if isinstance(node, dict):
        return {_fill(k, values): _fill(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_fill(v, values) for v in node]
    if isinstance(node, str) and "${" in node:
        whole = _WHOLE_PLACEHOLDER.match(node)
        if whole and whole.group(1) in values:
            return values[whole.group(1)]  # keeps ints ints (replicas)
        return Template(node).safe_substitute({k: str(v) for k, v in values.items()})
    return node


def _template(name: str) -> dict:
    path = Path(__file__).resolve().parent / "bases" / f"{name}.yaml"
    return yaml.safe_load(path.read_text())


def render(name: str, *, region: str, karpenter: KarpenterOptions | None = None) -> RenderedBase:
    if name not in NAMES:
        raise BaseError(f"unknown base {name!r}; valid: {', '.join(NAMES)}")
    if name == NONE:
        return RenderedBase(objects=[])
    template = _template(name)
    options = karpenter or KarpenterOptions()
    values: dict[str, object] = {
        "region": region,
        "zone_id_prefix": zone_id_prefix(region),
        "karpenter_version": options.version,
        "karpenter_namespace": options.namespace,
        "replicas": options.replicas,
        "leader": options.leader,
    }
    objects = list(_fill(template.get("objects") or [], values))
    if name != KARPENTER:
        return RenderedBase(objects=objects)
    pods = controller_pod_names(options.replicas)
    for index, pod in enumerate(pods):
        objects.append(_fill(template["controller_pod"], {**values, "pod_name": pod, "pod_ip": f"10.0.1.{118 + index}"}))
    for obj in objects:
        if options.env and obj.get("kind") in ("Deployment", "Pod") and "karpenter/controller" in str(obj):
            spec = obj["spec"]["template"]["spec"] if obj["kind"] == "Deployment" else obj["spec"]
            for container in spec.get("containers") or []:
                container["env"] = [*(container.get("env") or []), *({"name": k, "value": v} for k, v in options.env)]
    leader = pods[options.leader]
    # client-go leaderelection: the identity Karpenter passes is "<hostname>_<uuid>".
    identity = f"{leader}_{uuid.uuid5(uuid.NAMESPACE_DNS, leader + region)}"
    objects.append(_fill(template["lease"], {**values, "holder_identity": identity}))
    return RenderedBase(objects=objects, controller_namespace=options.namespace, controller_pods=pods, leader=leader)
