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

from typing import Callable

from alembic import op

from bot.store.redacted import redact_json_text
from bot.store.rewrite import rewrite_columns
from playbooks.redact import redact

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

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
        rewrite_columns(bind, table, columns)


def downgrade() -> None:
    """Nothing to undo: the secrets are gone, which is the point."""
