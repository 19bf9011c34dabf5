"""Redact again what is stored, with the detector-based redaction (playbooks/redaction/).

Migration 0003 rewrote the stored texts through the redaction of its day, which missed forms the
detector now catches (a value that swallowed an inner ``KEY=``, escaped JSON, URL passwords holding
"/", PEM body lines, Azure keys and SAS signatures, ``x-api-key``, ``PGPASSWORD``, ``--password VALUE``,
base64 registry credentials, Slack webhooks); tables added since (proposals, alerts) were never
rewritten. This rewrites every text column of every table, JSON columns string by string so they
still parse. Rows are read in batches by id and only rows whose text changes are written; running it
again changes nothing. Nothing to undo: the downgrade leaves the values redacted.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""
from __future__ import annotations

from typing import Any, Callable

import sqlalchemy as sa
from alembic import op

from bot.store.redacted import redact_json_text
from playbooks.redact import redact

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

BATCH = 500
TEXT, JSON = redact, redact_json_text
COLUMNS: dict[str, dict[str, Callable[[str], str]]] = {
    "incidents": {"title": TEXT, "resolution": TEXT},
    "diagnosis_runs": {"summary": TEXT},
    "findings": {"title": TEXT, "evidence": JSON},
    "timeline": {"detail": TEXT},
    "proposals": {"params": JSON, "reason": TEXT, "plan": JSON, "results": JSON, "undo": JSON},
    "alert_groups": {"title": TEXT, "resolved_reason": TEXT},
    "alerts": {"title": TEXT, "evidence": JSON, "resolved_reason": TEXT},
}


def upgrade() -> None:
    bind = op.get_bind()
    for table, columns in COLUMNS.items():
        _rewrite(bind, table, columns)


def downgrade() -> None:
    """Nothing to undo: the secrets are gone, which is the point."""


def _rewrite(bind: sa.Connection, name: str, columns: dict[str, Callable[[str], str]]) -> None:
    ident = sa.column("id", sa.Integer)
    table = sa.table(name, ident, *(sa.column(c, sa.Text) for c in columns))
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
