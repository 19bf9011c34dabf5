"""Redact what earlier versions stored: evidence, titles, summaries, resolutions, timeline details.

Before redaction, gathered log lines (and what people typed as the fix) went into the store as they
were, tokens included. This rewrites every stored text through the same redaction step the engine
uses now, keeping the rest of each line. Rows are read in batches by id, so a large table never sits
in memory, and only rows whose text changes are written; running it again changes nothing.

The tables are named here with SQLAlchemy Core, not the ORM models, which follow the latest schema.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""
from __future__ import annotations

import json
from typing import Any, Callable

import sqlalchemy as sa
from alembic import op

from playbooks.redact import redact

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

BATCH = 500


def upgrade() -> None:
    bind = op.get_bind()
    _rewrite(bind, "findings", {"title": redact, "evidence": redact_evidence})
    _rewrite(bind, "diagnosis_runs", {"summary": redact})
    _rewrite(bind, "incidents", {"title": redact, "resolution": redact})
    _rewrite(bind, "timeline", {"detail": redact})


def downgrade() -> None:
    """Nothing to undo: the secrets are gone and cannot be put back; the schema is unchanged."""


def redact_evidence(stored: str) -> str:
    """Evidence is a JSON list of {"source", "text"}: redact every string in it and keep its shape.
    A value that is not JSON is redacted as plain text."""
    try:
        evidence = json.loads(stored)
    except ValueError:
        return redact(stored)
    cleaned = _redact_json(evidence)
    # Unchanged content keeps its stored spelling, so a second run finds nothing to write.
    return stored if cleaned == evidence else json.dumps(cleaned)


def _redact_json(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redact_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _redact_json(item) for key, item in value.items()}
    return value


def _rewrite(bind: sa.Connection, name: str, columns: dict[str, Callable[[str], str]]) -> None:
    ident = sa.column("id", sa.Integer)
    table = sa.table(name, ident, *(sa.column(c, sa.Text) for c in columns))
    # Every listed column is written back for a changed row (unchanged ones with their own value).
    update = sa.update(table).where(ident == sa.bindparam("row_id")).values(
        {c: sa.bindparam(f"new_{c}") for c in columns})
    last = 0
    while True:
        rows = bind.execute(sa.select(table).where(ident > last).order_by(ident).limit(BATCH)).mappings().all()
        if not rows:
            return
        changed = [params for params in (_redacted(row, columns) for row in rows) if params]
        if changed:
            bind.execute(update, changed)
        last = rows[-1]["id"]


def _redacted(row: sa.RowMapping, columns: dict[str, Callable[[str], str]]) -> dict[str, Any] | None:
    """The UPDATE parameters for ``row``, or None when redaction leaves all of its text as it was."""
    new = {c: fn(row[c]) if row[c] else row[c] for c, fn in columns.items()}
    if all(new[c] == row[c] for c in columns):
        return None
    return {"row_id": row["id"], **{f"new_{c}": text for c, text in new.items()}}
