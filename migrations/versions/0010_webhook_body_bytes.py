"""The size of each stored Alertmanager body: ``webhook_payloads.body_bytes``.

The inbox refuses a body once the unhandled ones hold GPUBOT_ALERTMANAGER_INBOX_BYTES (bot.store.webhooks);
summing a column written at insert keeps that check from reading every stored body on each request.
Rows stored before count their body's length in characters, which is its size for the JSON Alertmanager
sends (ASCII but for label values); handled rows have no body and count 0.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-29
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("webhook_payloads", sa.Column("body_bytes", sa.Integer, nullable=False, server_default="0"))
    op.execute("UPDATE webhook_payloads SET body_bytes = length(body) WHERE body IS NOT NULL")


def downgrade() -> None:
    with op.batch_alter_table("webhook_payloads") as batch:
        batch.drop_column("body_bytes")
