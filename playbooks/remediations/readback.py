"""Verification of a change from the object read back after it: every value the patch sets is
there, every value it removes is gone. Shared by all definitions: it reads only the patch."""
from __future__ import annotations

from typing import Any, Iterator

from playbooks.remediations.model import JSON_PATCH, Change, escape, pointer_get


def verify_change(change: Change, after: dict) -> str | None:
    """None when ``after`` shows the change, else one line naming the first field that does not."""
    for pointer, wanted in expected_values(change):
        actual = pointer_get(after, pointer)
        if actual == wanted:
            continue
        where = f"{change.ref}: {dotted(pointer)}"
        if wanted is None:
            return f"{where} is still {actual!r}, expected it removed"
        if actual is None:
            return f"{where} is absent, expected {wanted!r}"
        return f"{where} is {actual!r}, expected {wanted!r}"
    return None


def expected_values(change: Change) -> Iterator[tuple[str, Any]]:
    """(JSON pointer, value) the object must show after the change; None: absent."""
    if change.patch_type == JSON_PATCH:
        for op in change.patch:
            if op["op"] in ("add", "replace"):
                yield from _leaves(op["value"], op["path"])
            elif op["op"] == "remove":
                yield op["path"], None
        return
    yield from _leaves(change.patch, "")


def _leaves(value: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    # A merge patch's mappings merge: only their leaves are promised, other keys may sit beside them.
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaves(item, f"{prefix}/{escape(str(key))}")
    else:
        yield prefix, value


def dotted(pointer: str) -> str:
    """``/spec/replicatedJobs/0/template`` -> ``spec.replicatedJobs[0].template``."""
    out = ""
    for raw in pointer.lstrip("/").split("/"):
        segment = raw.replace("~1", "/").replace("~0", "~")
        out += f"[{segment}]" if segment.isdigit() else (f".{segment}" if out else segment)
    return out
