"""Label and field selectors, parsed and matched the way the Kubernetes API server does."""

from __future__ import annotations

import re
from dataclasses import dataclass


class SelectorError(ValueError):
    """A selector the real server would reject with 400 Bad Request."""


_KEY = r"[A-Za-z0-9][A-Za-z0-9._/-]*"
_SET_RE = re.compile(rf"^({_KEY})\s+(in|notin)\s*\((.*)\)$")
_CMP_RE = re.compile(rf"^({_KEY})\s*(==|!=|=|>|<)\s*(.*)$")
_KEY_RE = re.compile(rf"^{_KEY}$")
_VALUE_RE = re.compile(r"^[A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class LabelRequirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", ">", "<"
    values: tuple[str, ...] = ()

    def matches(self, labels: dict) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        if self.op in ("=", "in"):
            return present and value in self.values
        if self.op in ("!=", "notin"):
            return not present or value not in self.values
        # ">" / "<": the server compares integers and skips labels that are not integers.
        try:
            number = int(value) if present else None
        except ValueError:
            return False
        if number is None:
            return False
        limit = int(self.values[0])
        return number > limit if self.op == ">" else number < limit


@dataclass(frozen=True)
class LabelSelector:
    requirements: tuple[LabelRequirement, ...]

    def matches(self, labels: dict | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside an `in (...)` value list."""
    parts, depth, current = [], 0, []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts]


def _check_value(value: str, text: str) -> str:
    if not _VALUE_RE.match(value) or len(value) > 63:
        raise SelectorError(f"unable to parse requirement: invalid label value: {value!r} in {text!r}")
    return value


def _parse_label_requirement(part: str, text: str) -> LabelRequirement:
    if not part:
        raise SelectorError(f"unable to parse requirement: empty requirement in {text!r}")
    if part.startswith("!"):
        key = part[1:].strip()
        if not _KEY_RE.match(key):
            raise SelectorError(f"unable to parse requirement: invalid label key {key!r}")
        return LabelRequirement(key, "!")
    if match := _SET_RE.match(part):
        key, op, raw = match.groups()
        values = tuple(_check_value(v.strip(), text) for v in raw.split(","))
        return LabelRequirement(key, op, values)
    if match := _CMP_RE.match(part):
        key, op, value = match.groups()
        value = _check_value(value.strip(), text)
        if op in (">", "<"):
            if not value.lstrip("-").isdigit():
                raise SelectorError(f"unable to parse requirement: {op} needs an integer value in {text!r}")
            return LabelRequirement(key, op, (value,))
        return LabelRequirement(key, "=" if op == "==" else op, (value,))
    if _KEY_RE.match(part):
        return LabelRequirement(part, "exists")
    raise SelectorError(f"unable to parse requirement: {part!r} in {text!r}")


def parse_label_selector(text: str | None) -> LabelSelector | None:
    """None for an empty selector, so callers can skip matching altogether."""
    if not text or not text.strip():
        return None
    parts = _split_top_level(text.strip())
    return LabelSelector(tuple(_parse_label_requirement(p, text) for p in parts))


# Field labels each kind accepts; anything else is rejected, as the real server does.
_COMMON_FIELDS = frozenset({"metadata.name", "metadata.namespace"})
_KIND_FIELDS: dict[str, frozenset[str]] = {
    "Pod": frozenset({
        "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
        "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName",
    }),
    "Event": frozenset({
        "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "source.component",
        "type",
    }),
    "Node": frozenset({"spec.unschedulable"}),
    "Namespace": frozenset({"status.phase"}),
    "Job": frozenset({"status.successful"}),
    "Secret": frozenset({"type"}),
}
# The server's "source" field label is the event's reporting component.
_FIELD_ALIASES = {"source": "source.component"}


@dataclass(frozen=True)
class FieldRequirement:
    path: tuple[str, ...]
    op: str  # "=" or "!="
    value: str

    def matches(self, obj: dict) -> bool:
        actual = _field_value(obj, self.path)
        return (actual == self.value) == (self.op == "=")


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...]

    def matches(self, obj: dict) -> bool:
        return all(r.matches(obj) for r in self.requirements)


def _field_value(obj: dict, path: tuple[str, ...]) -> str:
    current: object = obj
    for step in path:
        if not isinstance(current, dict):
            return ""
        current = current.get(step)
    if current is None:
        return ""
    if isinstance(current, bool):
        return "true" if current else "false"
    return str(current)


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def _split_unescaped(text: str, sep: str) -> list[str]:
    return re.split(rf"(?<!\\){re.escape(sep)}", text)


def parse_field_selector(text: str | None, *, kind: str) -> FieldSelector | None:
    if not text or not text.strip():
        return None
    allowed = _COMMON_FIELDS | _KIND_FIELDS.get(kind, frozenset())
    requirements = []
    for part in _split_unescaped(text.strip(), ","):
        match = re.match(r"^([^=!]+?)\s*(==|!=|=)(.*)$", part.strip())
        if not match:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        field, op, value = match.groups()
        if field not in allowed:
            raise SelectorError(f'field label not supported: {field}')
        path = tuple(_FIELD_ALIASES.get(field, field).split("."))
        requirements.append(FieldRequirement(path, "!=" if op == "!=" else "=", _unescape(value)))
    return FieldSelector(tuple(requirements))
