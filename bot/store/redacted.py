"""Column types that redact on the way in: every text the store writes passes the one redaction step,
whichever code path wrote it (ORM objects, ``update().values()``, a note typed into a form).

The explicit ``redact`` calls at the store's entry points stay (they let a caller use the redacted
value, e.g. in the reply it posts); these types make sure nothing is missed when a new column or a
new writer appears. Redacting twice changes nothing: a mask is never found again.
"""
from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Text
from sqlalchemy.types import TypeDecorator

from playbooks.redact import redact


class RedactedText(TypeDecorator):
    """TEXT whose every value is redacted before it is sent to the database."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return redact(value) if isinstance(value, str) else value


class RedactedJsonText(TypeDecorator):
    """TEXT holding JSON: every string inside it is redacted and the shape kept, so what reads it back
    still parses; a value that is not JSON is redacted as plain text."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return redact_json_text(value) if isinstance(value, str) else value


def redact_json_text(stored: str) -> str:
    try:
        value = json.loads(stored)
    except ValueError:
        return redact(stored)
    cleaned = _strings(value)
    return stored if cleaned == value else json.dumps(cleaned)


def _strings(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_strings(item) for item in value]
    if isinstance(value, dict):
        return {key: _strings(item) for key, item in value.items()}
    return value
