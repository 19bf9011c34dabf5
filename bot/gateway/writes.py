"""What the gateway needs to write: the REST path of any object, and the error a refused write raises.

Writes go through one generic call (path built from an ObjectRef, Content-Type set exactly) rather
than the generated per-kind methods: those pick the patch type from the body (a dict sent as
``json-patch+json`` silently becomes a strategic merge patch) and cover only built-in kinds.
"""
from __future__ import annotations

import json
from typing import Any

from kubernetes.client.exceptions import ApiException

from bot.errors import GpubotError
from playbooks.remediations.model import JSON_PATCH, MERGE_PATCH, ObjectRef

# Statuses a write is retried on: the API server refused it before doing anything (API priority and
# fairness answers 429, an overloaded or starting server 503, both with Retry-After). A 500 or 504,
# or a timeout, may come after the write was stored: retrying could apply it twice.
RETRY_WRITE = frozenset({429, 503})
_MESSAGE_CAP = 300


class WriteFailed(GpubotError):
    """The cluster refused or did not confirm one write.

    ``status``: the HTTP status (None: no answer); ``reason``: the API Status reason ("Conflict",
    "Forbidden", "NotFound", "Invalid"), or "timeout" when no answer came in time (the write may
    have happened: read the object back before trying again); ``message``: the API's own message,
    first line, at most 300 characters."""

    def __init__(self, verb: str, ref: ObjectRef, *, status: int | None, reason: str, message: str) -> None:
        self.verb = verb
        self.ref = ref
        self.status = status
        self.reason = reason
        self.message = message
        code = f" ({status})" if status is not None else ""
        super().__init__(f"{verb} {ref}: {reason}{code}: {message}")

    @classmethod
    def from_api(cls, verb: str, ref: ObjectRef, exc: ApiException) -> "WriteFailed":
        status_body = _status_body(exc)
        reason = str(status_body.get("reason") or exc.reason or "Error")
        message = str(status_body.get("message") or exc.reason or "")
        if not status_body and isinstance(exc.body, str):
            message = exc.body.strip() or message
        return cls(verb, ref, status=exc.status, reason=reason, message=first_line(message))


def first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:_MESSAGE_CAP]


def _status_body(exc: ApiException) -> dict[str, Any]:
    try:
        body = json.loads(exc.body)
    except (TypeError, ValueError):
        return {}
    return body if isinstance(body, dict) and body.get("kind") == "Status" else {}


def object_path(ref: ObjectRef) -> str:
    """The object's REST path with ``{name}`` / ``{namespace}`` placeholders (the client quotes them)."""
    base = f"/apis/{ref.group}/{ref.version}" if ref.group else f"/api/{ref.version}"
    scope = "/namespaces/{namespace}" if ref.namespace else ""
    return f"{base}{scope}/{ref.plural}/{{name}}"


def path_params(ref: ObjectRef) -> dict[str, str]:
    params = {"name": ref.name}
    if ref.namespace:
        params["namespace"] = ref.namespace
    return params


def check_patch(patch_type: str, body: Any) -> None:
    """A body that does not fit its patch type is a bug in the caller: say so before sending."""
    if patch_type == JSON_PATCH:
        if not isinstance(body, list):
            raise ValueError(f"a JSON patch is a list of operations, got {type(body).__name__}")
    elif patch_type == MERGE_PATCH:
        if not isinstance(body, dict):
            raise ValueError(f"a merge patch is an object, got {type(body).__name__}")
    else:
        raise ValueError(f"patch type {patch_type!r} is not one gpubot writes ({MERGE_PATCH}, {JSON_PATCH})")
