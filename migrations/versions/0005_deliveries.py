"""Slack deliveries already taken: retries and duplicates are acknowledged and ignored.

Slack retries an event it thinks went unanswered (X-Slack-Retry-Num) and may deliver it to any
replica: the record of what was taken lives in the database, where every replica sees it, keyed by a
hash of what identifies the delivery (see bot.store.deliveries).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deliveries",
        sa.Column("key", sa.String(128), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_deliveries_first_seen_at", "deliveries", ["first_seen_at"])


def downgrade() -> None:
    op.drop_index("ix_deliveries_first_seen_at", table_name="deliveries")
    op.drop_table("deliveries")
