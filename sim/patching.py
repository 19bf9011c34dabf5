"""Merge patch (RFC 7386) and JSON patch (RFC 6902), applied without mutating their input.

Stored objects share sub-dicts (see scale.py), so nothing here mutates its input: a merge patch
copies the object it patches, a JSON patch rebuilds the containers along the paths it changes.
"""

from __future__ import annotations

import copy
from typing import Any

from playbooks.validation import merge_patch as _merge_patch


class PatchError(ValueError):
    """The patch document is malformed: the server answers 400."""


class PatchBodyError(PatchError):
    """The body has the wrong shape for its Content-Type: the server answers 400."""


class PatchTestFailed(ValueError):
    """A JSON-patch `test` operation did not hold: the server answers 422."""


class UnsupportedPatchType(ValueError):
    """A Content-Type the server does not patch with: 415."""


MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
PATCH_TYPES = (MERGE_PATCH, STRATEGIC_MERGE_PATCH, JSON_PATCH)

# One RFC 7386 implementation for the simulator and for validating fix snippets.
merge_patch = _merge_patch


def _unescape_token(token: str) -> str:
    # RFC 6901 order matters: "~01" must become "~1", not "/".
    return token.replace("~1", "/").replace("~0", "~")


def _parse_pointer(pointer: Any) -> list[str]:
    if not isinstance(pointer, str):
        raise PatchError(f"JSON pointer must be a string, got {pointer!r}")
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f'JSON pointer "{pointer}" must start with "/"')
    return [_unescape_token(t) for t in pointer[1:].split("/")]


def _list_index(container: list, token: str, *, for_insert: bool) -> int:
    if for_insert and token == "-":
        return len(container)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchError(f"invalid array index {token!r}")
    index = int(token)
    limit = len(container) if for_insert else len(container) - 1
    if index > limit:
        raise PatchError(f"array index {index} out of bounds")
    return index


def _get(doc: Any, tokens: list[str]) -> Any:
    current = doc
    for token in tokens:
        if isinstance(current, dict):
            if token not in current:
                raise PatchError(f'path "/{"/".join(tokens)}" does not exist')
            current = current[token]
        elif isinstance(current, list):
            current = current[_list_index(current, token, for_insert=False)]
        else:
            raise PatchError(f'path "/{"/".join(tokens)}" does not exist')
    return current


def _parent(doc: Any, tokens: list[str]) -> tuple[Any, str]:
    if not tokens:
        raise PatchError("operation on the document root is not supported")
    return _get(doc, tokens[:-1]), tokens[-1]


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent, last = _parent(doc, tokens)
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_list_index(parent, last, for_insert=True), value)
    else:
        raise PatchError(f'cannot add at "/{"/".join(tokens)}"')
    return doc


def _remove(doc: Any, tokens: list[str]) -> Any:
    parent, last = _parent(doc, tokens)
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f'unable to remove nonexistent key "{last}"')
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_list_index(parent, last, for_insert=False))
    raise PatchError(f'cannot remove "/{"/".join(tokens)}"')


def _apply_operation(doc: Any, op: dict) -> Any:
    if not isinstance(op, dict) or "op" not in op:
        raise PatchError(f"invalid JSON patch operation {op!r}")
    name = op["op"]
    tokens = _parse_pointer(op.get("path"))
    if name in ("add", "replace", "test") and "value" not in op:
        raise PatchError(f'"{name}" operation is missing "value"')
    if name == "add":
        return _add(doc, tokens, copy.deepcopy(op["value"]))
    if name == "remove":
        _remove(doc, tokens)
        return doc
    if name == "replace":
        _get(doc, tokens)  # replace requires the target to exist
        if not tokens:
            return copy.deepcopy(op["value"])
        _remove(doc, tokens)
        return _add(doc, tokens, copy.deepcopy(op["value"]))
    if name == "test":
        actual = _get(doc, tokens)
        if actual != op["value"]:
            raise PatchTestFailed(f'testing value {op.get("path")} failed: test failed')
        return doc
    if name in ("move", "copy"):
        source = _parse_pointer(op.get("from"))
        if name == "move" and tokens[: len(source)] == source and tokens != source:
            raise PatchError("cannot move a value into one of its own children")
        value = _remove(doc, source) if name == "move" else copy.deepcopy(_get(doc, source))
        return _add(doc, tokens, value)
    raise PatchError(f"unknown JSON patch operation {name!r}")


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902, atomically: the input is never touched, so a failing op leaves nothing half-done."""
    if not isinstance(operations, list):
        raise PatchError("json patch body must be a list of operations")
    doc = copy.deepcopy(target)
    for op in operations:
        doc = _apply_operation(doc, op)
    return doc


def apply_patch(target: dict, *, patch_type: str, body: Any) -> dict:
    """Dispatch on the request's Content-Type. Strategic merge is applied as a plain merge patch:
    it differs only on keyed lists, and the bot patches maps (annotations, disruption settings)."""
    if patch_type == JSON_PATCH:
        if not isinstance(body, list):
            raise PatchBodyError("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
        result = json_patch(target, body)
    elif patch_type in (MERGE_PATCH, STRATEGIC_MERGE_PATCH):
        if not isinstance(body, dict):
            raise PatchBodyError("json: cannot unmarshal array into Go value of type map[string]interface {}")
        result = merge_patch(target, body)
    else:
        accepted = ", ".join(PATCH_TYPES)
        raise UnsupportedPatchType(
            f"the body of the request was in an unknown format - accepted media types include: {accepted}"
        )
    if not isinstance(result, dict):
        raise PatchBodyError("the patched document is not an object")
    return result
