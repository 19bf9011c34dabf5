"""Alerts grouped by cause, and Alertmanager's webhook bodies kept until handled.

``alert_groups.cause_kind`` / ``cause_name``: the cause a group's problems share (bot.alerts.causes), which
its message names; ``alerts.pods``: the pods of a problem's target that wait on it, for the counts.
``webhook_payloads``: each accepted webhook body, stored before the 202 and handled afterwards by a
consumer that claims rows (``claimed_at``; ``FOR UPDATE SKIP LOCKED`` on PostgreSQL); the unique
``dedupe_key`` makes Alertmanager's retry of the same notification a no-op.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("alert_groups", sa.Column("cause_kind", sa.String(16)))
    op.add_column("alert_groups", sa.Column("cause_name", sa.String(253)))
    op.add_column("alerts", sa.Column("pods", sa.Integer, nullable=False, server_default="0"))
    op.create_table(
        "webhook_payloads",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("dedupe_key", sa.String(64), nullable=False),
        sa.Column("body", sa.Text),
        sa.Column("alerts", sa.Integer, nullable=False),
        sa.Column("received_at", TS, nullable=False),
        sa.Column("claimed_by", sa.String(253)),
        sa.Column("claimed_at", TS),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("handled_at", TS),
        sa.Column("error", sa.Text),
    )
    op.create_index("uq_webhook_payloads_dedupe_key", "webhook_payloads", ["dedupe_key"], unique=True)
    op.create_index("ix_webhook_payloads_pending", "webhook_payloads", ["handled_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_webhook_payloads_pending", table_name="webhook_payloads")
    op.drop_index("uq_webhook_payloads_dedupe_key", table_name="webhook_payloads")
    op.drop_table("webhook_payloads")
    with op.batch_alter_table("alerts") as batch:
        batch.drop_column("pods")
    with op.batch_alter_table("alert_groups") as batch:
        batch.drop_column("cause_name")
        batch.drop_column("cause_kind")
