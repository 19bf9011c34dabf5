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

from alembic import op

from bot.store.redacted import redact_json_text
from bot.store.rewrite import rewrite_columns
from playbooks.redact import redact

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    # Evidence is a JSON list of {"source", "text"}: every string in it is redacted and its shape kept.
    rewrite_columns(bind, "findings", {"title": redact, "evidence": redact_json_text})
    rewrite_columns(bind, "diagnosis_runs", {"summary": redact})
    rewrite_columns(bind, "incidents", {"title": redact, "resolution": redact})
    rewrite_columns(bind, "timeline", {"detail": redact})


def downgrade() -> None:
    """Nothing to undo: the secrets are gone and cannot be put back; the schema is unchanged."""
