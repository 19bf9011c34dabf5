"""Slack threads the bot answered in, shared by every replica.

A log pasted into one of those threads is explained; with several replicas behind a Service the paste
may reach a replica that did not answer the thread, so the set lives in the database.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bot_threads",
        sa.Column("channel", sa.String(32), primary_key=True),
        sa.Column("thread_ts", sa.String(32), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_bot_threads_created_at", "bot_threads", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_bot_threads_created_at", table_name="bot_threads")
    op.drop_table("bot_threads")
