"""What a cause has used up: ``alerts.cause_usage`` and ``alert_groups.cause_usage``.

JSON ``{"resource_type", "used", "limit"}`` from a NodePool-limit finding's structured labels
(bot.alerts.causes.usage_of), so the message about the NodePool says "has used all 32 of its GPUs"
without parsing a title. Null where the problem carries none (Alertmanager's ratio-only alert).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("alerts", sa.Column("cause_usage", sa.Text))
    op.add_column("alert_groups", sa.Column("cause_usage", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("alert_groups") as batch:
        batch.drop_column("cause_usage")
    with op.batch_alter_table("alerts") as batch:
        batch.drop_column("cause_usage")
