"""What kube-apiserver refuses on writes to custom resources: CRD schema errors (422 Invalid)."""

from __future__ import annotations

import re

from playbooks.validation import validate_object
from sim.resources import ApiError, ResourceType

_ENUM = re.compile(r"^'(?P<value>.*)' is not one of \[(?P<allowed>.*)\]$")
_REQUIRED = re.compile(r"^'(?P<field>[^']+)' is a required property$")


def _cause(path: str, message: str) -> dict:
    """A jsonschema message in apimachinery field.Error wording (field/errors.go)."""
    if enum := _ENUM.match(message):
        allowed = ", ".join(f'"{v.strip()[1:-1]}"' for v in enum.group("allowed").split(","))
        text = f'Unsupported value: "{enum.group("value")}": supported values: {allowed}'
        return {"reason": "FieldValueNotSupported", "message": text, "field": path}
    if required := _REQUIRED.match(message):
        field = f"{path}.{required.group('field')}" if path != "(root)" else required.group("field")
        return {"reason": "FieldValueRequired", "message": "Required value", "field": field}
    return {"reason": "FieldValueInvalid", "message": f"Invalid value: {message}", "field": path}


def _schema_errors(obj: dict) -> list[tuple[str, str]]:
    """(field path, message) of CRD schema errors; kinds without a bundled schema have none."""
    errors = []
    for text in validate_object(obj):
        parts = text.split(": ", 2)
        if len(parts) == 3 and "no schema to validate against" not in text:
            errors.append((parts[1], parts[2]))
    return errors


def check_custom(rt: ResourceType, new: dict, *, old: dict | None = None) -> None:
    """Raise kube-apiserver's 422 when `new` breaks its CRD schema.

    Errors already present in `old` are let through, as CRD validation ratcheting does (Kubernetes
    1.30+, KEP-4008): an update is refused only for what it makes invalid.
    """
    if not rt.is_custom:
        return
    existing = set(_schema_errors(old)) if old is not None else set()
    causes = [_cause(path, message) for path, message in _schema_errors(new) if (path, message) not in existing]
    if not causes:
        return
    name = (new.get("metadata") or {}).get("name", "")
    described = [f"{c['field']}: {c['message']}" for c in causes]
    listed = described[0] if len(described) == 1 else "[" + ", ".join(described) + "]"
    raise ApiError(
        code=422,
        reason="Invalid",
        message=f'{rt.kind}.{rt.group} "{name}" is invalid: {listed}',
        details={"name": name, "group": rt.group, "kind": rt.kind, "causes": causes},
    )
