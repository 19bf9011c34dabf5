"""Proactive alerts: one row per problem (fingerprint) and one per Slack message (group).

A sweep or Alertmanager reports problems; each is an ``alerts`` row while it fires, and problems that
share a storm key are told in one message, an ``alert_groups`` row. Both carry a unique index over
their active rows, like incidents, so two replicas in a split brain cannot both open the same alert,
and posting a group's message is claimed by one guarded UPDATE (``claimed_until``) so only one of
them posts it. Snoozes and acknowledgements live on the group, in the database, and survive restarts.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-10
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)
FIRING = sa.text("status = 'firing'")


def upgrade() -> None:
    op.create_table(
        "alert_groups",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("group_key", sa.String(128), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("cluster", sa.String(253), nullable=False),
        sa.Column("namespace", sa.String(63)),
        sa.Column("code", sa.String(64), nullable=False),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("resolved_reason", sa.Text),
        sa.Column("first_seen", TS, nullable=False),
        sa.Column("last_seen", TS, nullable=False),
        sa.Column("resolved_at", TS),
        sa.Column("channel", sa.String(32)),
        sa.Column("ts", sa.String(32)),
        sa.Column("in_digest", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("shown", sa.String(64)),
        sa.Column("claimed_by", sa.String(253)),
        sa.Column("claimed_until", TS),
        sa.Column("acknowledged_by", sa.String(64)),
        sa.Column("acknowledged_at", TS),
        sa.Column("snoozed_by", sa.String(64)),
        sa.Column("snoozed_until", TS),
        sa.Column("snoozed_until_resolved", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.CheckConstraint("status IN ('firing', 'resolved')", name="ck_alert_groups_status"),
    )
    op.create_index("uq_alert_groups_active_key", "alert_groups", ["cluster", "group_key"], unique=True,
                    postgresql_where=FIRING, sqlite_where=FIRING)
    op.create_index("ix_alert_groups_key_resolved", "alert_groups", ["cluster", "group_key", "resolved_at"])
    op.create_index("ix_alert_groups_message", "alert_groups", ["channel", "ts"])
    op.create_table(
        "alerts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("group_id", sa.Integer, sa.ForeignKey("alert_groups.id", ondelete="CASCADE"), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("group_key", sa.String(128), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("code", sa.String(64), nullable=False),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("cluster", sa.String(253), nullable=False),
        sa.Column("namespace", sa.String(63)),
        sa.Column("target_kind", sa.String(32), nullable=False),
        sa.Column("target_name", sa.String(253), nullable=False),
        sa.Column("nodepool", sa.String(253)),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("evidence", sa.Text, nullable=False),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("first_seen", TS, nullable=False),
        sa.Column("last_seen", TS, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("resolved_reason", sa.Text),
        sa.Column("resolved_at", TS),
        sa.Column("incident_id", sa.Integer, sa.ForeignKey("incidents.id", ondelete="SET NULL")),
        sa.Column("incident_state", sa.String(16), nullable=False, server_default="pending"),
        sa.CheckConstraint("status IN ('firing', 'resolved')", name="ck_alerts_status"),
        sa.CheckConstraint("incident_state IN ('pending', 'open', 'closed')", name="ck_alerts_incident_state"),
    )
    op.create_index("uq_alerts_active_fingerprint", "alerts", ["fingerprint"], unique=True,
                    postgresql_where=FIRING, sqlite_where=FIRING)
    op.create_index("ix_alerts_group_id", "alerts", ["group_id"])
    op.create_index("ix_alerts_cluster_source_status", "alerts", ["cluster", "source", "status"])
    op.create_index("ix_alerts_incident_state", "alerts", ["incident_state", "status"])


def downgrade() -> None:
    op.drop_index("ix_alerts_incident_state", table_name="alerts")
    op.drop_index("ix_alerts_cluster_source_status", table_name="alerts")
    op.drop_index("ix_alerts_group_id", table_name="alerts")
    op.drop_index("uq_alerts_active_fingerprint", table_name="alerts")
    op.drop_table("alerts")
    op.drop_index("ix_alert_groups_message", table_name="alert_groups")
    op.drop_index("ix_alert_groups_key_resolved", table_name="alert_groups")
    op.drop_index("uq_alert_groups_active_key", table_name="alert_groups")
    op.drop_table("alert_groups")
