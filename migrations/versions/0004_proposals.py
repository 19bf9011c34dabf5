"""Remediation proposals, their approvals, and the Slack messages that show them.

Proposal state lives here, not in a replica's memory: a restart, or another replica receiving the
click, loses nothing, and every state change is one guarded UPDATE, so two clicks cannot both win.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "proposals",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("incident_id", sa.Integer, sa.ForeignKey("incidents.id", ondelete="SET NULL")),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("target", sa.String(320), nullable=False),
        sa.Column("cluster", sa.String(253), nullable=False),
        sa.Column("namespace", sa.String(63)),
        sa.Column("params", sa.Text, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("finding_code", sa.String(64)),
        sa.Column("requested_by", sa.String(64), nullable=False),
        sa.Column("requested_at", TS, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("decided_by", sa.String(64)),
        sa.Column("applied_at", TS),
        sa.Column("undone_by", sa.String(64)),
        sa.Column("undone_at", TS),
        sa.Column("plan", sa.Text, nullable=False),
        sa.Column("results", sa.Text, nullable=False),
        sa.Column("undo", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.CheckConstraint("state IN ('pending', 'approved', 'applied', 'rejected', 'expired', 'failed', 'undone')",
                           name="ck_proposals_state"),
    )
    op.create_index("ix_proposals_incident_id", "proposals", ["incident_id"])
    op.create_index("ix_proposals_state_expires", "proposals", ["state", "expires_at"])
    op.create_table(
        "proposal_approvals",
        sa.Column("proposal_id", sa.Integer, sa.ForeignKey("proposals.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("approver", sa.String(64), primary_key=True),
        sa.Column("at", TS, nullable=False),
    )
    op.create_table(
        "proposal_messages",
        sa.Column("proposal_id", sa.Integer, sa.ForeignKey("proposals.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("channel", sa.String(32), primary_key=True),
        sa.Column("ts", sa.String(32), primary_key=True),
    )


def downgrade() -> None:
    op.drop_table("proposal_messages")
    op.drop_table("proposal_approvals")
    op.drop_index("ix_proposals_state_expires", table_name="proposals")
    op.drop_index("ix_proposals_incident_id", table_name="proposals")
    op.drop_table("proposals")
