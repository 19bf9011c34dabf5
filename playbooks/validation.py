"""Validate Kubernetes objects and merge patches against the real upstream schemas.

Custom resources (Karpenter NodePool / NodeClaim / EC2NodeClass, Kubeflow PyTorchJob) are checked
against the ``openAPIV3Schema`` of the served version in ``schemas/crds/``; core kinds against the
JSON schemas bundled with the ``kubernetes-validate`` package (Kubernetes 1.33). EKS Auto Mode's
``eks.amazonaws.com/v1 NodeClass`` has no public schema: it gets a shape check only.

Every function returns human-readable error strings (``[]`` when valid) of the form
``"NodePool/gpu: spec.disruption.consolidationPolicy: 'Sometimes' is not one of [...]"``.
Schemas are loaded lazily on first use and cached for the life of the process.
"""
from __future__ import annotations

import copy
import functools
import json
import re
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource

K8S_VERSION = "1.33.0"
CRD_DIR = Path(__file__).parent / "schemas" / "crds"
AUTO_MODE_KINDS = frozenset({("eks.amazonaws.com/v1", "NodeClass")})

# Kinds whose API server validation requires a spec even though the JSON schema leaves it optional.
_SPEC_REQUIRED = frozenset({"Pod", "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job", "CronJob"})

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


# ---------------------------------------------------------------------------------------------
# public API


def validate_object(obj: Any, *, strict: bool = False) -> list[str]:
    """Errors for one whole object; ``strict`` also reports fields the schema does not know."""
    if not isinstance(obj, dict):
        return [f"object must be a mapping, got {type(obj).__name__}"]
    errors = _check_shape(obj)
    if errors:
        return errors
    api_version, kind = obj["apiVersion"], obj["kind"]
    label = f"{kind}/{obj['metadata'].get('name') or obj['metadata'].get('generateName', '?')}"
    if (api_version, kind) in AUTO_MODE_KINDS:
        return _check_metadata(obj, label)
    validator = _validator_for(api_version, kind, strict=strict)
    if validator is None:
        return [f"{label}: unknown kind {kind} in {api_version}: no schema to validate against"]
    schema_errors = sorted(validator.iter_errors(obj), key=_error_order)
    errors = [_format(label, e) for e in schema_errors]
    errors += _unknown_top_level(obj, validator.schema, label) if not strict else []
    if kind in _SPEC_REQUIRED and "spec" not in obj:
        errors.append(f"{label}: spec: a {kind} needs a spec")
    reported = {_path(e) for e in schema_errors}
    return errors + [e for e in _check_metadata(obj, label) if e.split(": ")[1] not in reported]


def validate_patch(live: dict, patch: Any, *, strict: bool = False) -> list[str]:
    """Apply ``patch`` as an RFC 7386 JSON merge patch to a copy of ``live`` and validate the result."""
    if not isinstance(patch, dict):
        return [f"a merge patch must be a mapping, got {type(patch).__name__}"]
    errors = []
    for field in ("apiVersion", "kind"):
        if field in patch and patch[field] != live.get(field):
            errors.append(f"patch changes {field} from {live.get(field)!r} to {patch[field]!r}")
    patch_meta = patch.get("metadata") if isinstance(patch.get("metadata"), dict) else {}
    live_meta = live.get("metadata") or {}
    for field in ("name", "namespace"):
        if field in patch_meta and patch_meta[field] != live_meta.get(field):
            errors.append(f"patch changes metadata.{field} from {live_meta.get(field)!r} to {patch_meta[field]!r}")
    return errors + validate_object(merge_patch(live, patch), strict=strict)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: mappings merge recursively, ``null`` deletes a key, anything else replaces.

    Never mutates ``target``: containers along patched paths are new, untouched branches are shared.
    """
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def known_kinds() -> frozenset[tuple[str, str]]:
    """Every ``(apiVersion, kind)`` this module can validate."""
    return frozenset(_crd_schemas()) | frozenset(_core_kind_files()) | AUTO_MODE_KINDS


# ---------------------------------------------------------------------------------------------
# shape and metadata checks the JSON schemas do not express


def _check_shape(obj: dict) -> list[str]:
    errors = []
    for field in ("apiVersion", "kind"):
        if not isinstance(obj.get(field), str) or not obj.get(field):
            errors.append(f"{field} is required and must be a non-empty string")
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        errors.append("metadata is required and must be a mapping")
    elif not (meta.get("name") or meta.get("generateName")):
        errors.append(f"{obj.get('kind', 'object')}: metadata.name is required")
    return errors


def _check_metadata(obj: dict, label: str) -> list[str]:
    meta = obj["metadata"]
    errors = []
    name = meta.get("name")
    if name is not None and (not isinstance(name, str) or len(name) > 253 or not _DNS_SUBDOMAIN.match(name)):
        errors.append(f"{label}: metadata.name: {name!r} is not a valid DNS subdomain name")
    for key, value in (meta.get("labels") or {}).items():
        problem = _label_problem(key, value)
        if problem:
            errors.append(f"{label}: metadata.labels.{key}: {problem}")
    return errors


def _label_problem(key: Any, value: Any) -> str | None:
    if not isinstance(key, str) or not key:
        return "label keys must be non-empty strings"
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return f"key prefix {prefix!r} is not a DNS subdomain"
    if len(name) > 63 or not _LABEL_NAME.match(name):
        return f"key name {name!r} must be 1-63 alphanumerics, '-', '_' or '.'"
    if not isinstance(value, str):
        return f"value must be a string, got {type(value).__name__} {value!r} (quote it)"
    if len(value) > 63 or not _LABEL_VALUE.match(value):
        return f"value {value!r} must be at most 63 alphanumerics, '-', '_' or '.'"
    return None


def _unknown_top_level(obj: dict, schema: dict, label: str) -> list[str]:
    known = schema.get("properties") or {}
    return [f"{label}: unknown top-level field {key!r}" for key in obj if key not in known]


# ---------------------------------------------------------------------------------------------
# error formatting


def _error_order(error: ValidationError) -> tuple:
    return tuple(str(p) for p in error.absolute_path), error.message


def _path(error: ValidationError) -> str:
    text = ""
    for part in error.absolute_path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(root)"


def _format(label: str, error: ValidationError) -> str:
    # anyOf / oneOf failures say "is not valid under any of the given schemas"; the closest branch
    # says what is actually wrong.
    if error.context:
        error = best_match(error.context) or error
    message = error.message
    if len(message) > 300:
        message = message[:297] + "..."
    return f"{label}: {_path(error)}: {message}"


# ---------------------------------------------------------------------------------------------
# custom resources


@functools.cache
def _crd_schemas() -> dict[tuple[str, str], dict]:
    """``(apiVersion, kind)`` -> openAPIV3Schema of every served version of the bundled CRDs."""
    schemas = {}
    for path in sorted(CRD_DIR.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        spec = crd["spec"]
        for version in spec["versions"]:
            if version.get("served", True):
                api_version = f"{spec['group']}/{version['name']}"
                schemas[(api_version, spec["names"]["kind"])] = version["schema"]["openAPIV3Schema"]
    return schemas


def _structural_to_json_schema(node: Any, *, strict: bool) -> Any:
    """Translate Kubernetes structural-schema extensions into plain JSON Schema."""
    if isinstance(node, list):
        return [_structural_to_json_schema(item, strict=strict) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _structural_to_json_schema(value, strict=strict) for key, value in node.items()
           if not key.startswith("x-kubernetes-") and key != "nullable"}
    if node.get("x-kubernetes-int-or-string") and "anyOf" not in node and "type" not in node:
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    if (strict and "properties" in node and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False  # what the API server would prune
    return out


@functools.cache
def _crd_validator(api_version: str, kind: str, strict: bool) -> jsonschema.protocols.Validator | None:
    schema = _crd_schemas().get((api_version, kind))
    if schema is None:
        return None
    converted = _structural_to_json_schema(schema, strict=strict)
    converted.setdefault("properties", {})
    for field in ("apiVersion", "kind"):
        converted["properties"].setdefault(field, {"type": "string"})
    return jsonschema.Draft7Validator(converted)


# ---------------------------------------------------------------------------------------------
# core kinds (schemas bundled with kubernetes-validate)


def _schema_dir(strict: bool) -> str:
    return f"v{K8S_VERSION}-local" + ("-strict" if strict else "")


def _schema_root():
    return importlib_resources.files("kubernetes_validate").joinpath("kubernetes-json-schema")


def _load_json(strict: bool, filename: str) -> Any:
    return json.loads(_schema_root().joinpath(_schema_dir(strict), filename).read_text())


def _core_filename(api_version: str, kind: str) -> str:
    # kubernetes-validate's naming: rbac.authorization.k8s.io/v1 -> rbac-v1, v1 -> v1
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{group_version}.json"


@functools.cache
def _core_kind_files() -> dict[tuple[str, str], str]:
    """``(apiVersion, kind)`` -> schema file, for top-level kinds with a single group/version/kind."""
    kinds = {}
    for entry in _schema_root().joinpath(_schema_dir(False)).iterdir():
        if entry.name.startswith("_") or not entry.name.endswith(".json"):
            continue
        schema = json.loads(entry.read_text())
        gvks = schema.get("x-kubernetes-group-version-kind") or []
        if len(gvks) != 1:
            continue
        gvk = gvks[0]
        api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
        kinds[(api_version, gvk["kind"])] = entry.name
    return kinds


@functools.cache
def _core_registry(strict: bool) -> Registry:
    definitions = Resource.from_contents(_load_json(strict, "_definitions.json"))
    return definitions @ Registry()


@functools.cache
def _core_validator(api_version: str, kind: str, strict: bool) -> jsonschema.protocols.Validator | None:
    filename = _core_filename(api_version, kind)
    if not _schema_root().joinpath(_schema_dir(strict), filename).is_file():
        return None
    schema = _load_json(strict, filename)
    group, _, version = api_version.rpartition("/")
    if {"group": group, "kind": kind, "version": version} not in schema.get("x-kubernetes-group-version-kind", []):
        return None
    registry = Resource.from_contents(schema) @ _core_registry(strict)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def _validator_for(api_version: str, kind: str, *, strict: bool) -> jsonschema.protocols.Validator | None:
    if (api_version, kind) in _crd_schemas():
        return _crd_validator(api_version, kind, strict)
    return _core_validator(api_version, kind, strict)

