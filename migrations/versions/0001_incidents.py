"""Incidents, their diagnosis runs and findings, and the timeline.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "incidents",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("cluster", sa.String(253), nullable=False),
        sa.Column("namespace", sa.String(63)),
        sa.Column("target_kind", sa.String(32), nullable=False),
        sa.Column("target_name", sa.String(253), nullable=False),
        sa.Column("code", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("occurrences", sa.Integer, nullable=False),
        sa.Column("opened_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("resolved_at", TS),
        sa.Column("slack_channel", sa.String(32)),
        sa.Column("slack_ts", sa.String(32)),
        sa.Column("acknowledged_by", sa.String(64)),
        sa.Column("resolved_by", sa.String(64)),
        sa.Column("resolution", sa.Text),
        sa.CheckConstraint("status IN ('open', 'acknowledged', 'resolved')", name="ck_incidents_status"),
    )
    # The database, not Python, keeps one active incident per fingerprint (two replicas may race).
    op.create_index("uq_incidents_active_fingerprint", "incidents", ["fingerprint"], unique=True,
                    postgresql_where=sa.text("status <> 'resolved'"), sqlite_where=sa.text("status <> 'resolved'"))
    op.create_index("ix_incidents_status_updated", "incidents", ["status", "updated_at"])
    op.create_index("ix_incidents_fingerprint_resolved", "incidents", ["fingerprint", "resolved_at"])
    op.create_table(
        "diagnosis_runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("incident_id", sa.Integer, sa.ForeignKey("incidents.id", ondelete="CASCADE"), nullable=False),
        sa.Column("at", TS, nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
    )
    op.create_index("ix_diagnosis_runs_incident_id", "diagnosis_runs", ["incident_id"])
    op.create_table(
        "findings",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("diagnosis_runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("code", sa.String(64), nullable=False),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("confidence", sa.String(16), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("evidence", sa.Text, nullable=False),
    )
    op.create_index("ix_findings_run_id", "findings", ["run_id"])
    op.create_index("ix_findings_code", "findings", ["code"])
    op.create_table(
        "timeline",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("incident_id", sa.Integer, sa.ForeignKey("incidents.id", ondelete="CASCADE"), nullable=False),
        sa.Column("at", TS, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
    )
    op.create_index("ix_timeline_incident_id", "timeline", ["incident_id"])


def downgrade() -> None:
    op.drop_table("timeline")
    op.drop_table("findings")
    op.drop_table("diagnosis_runs")
    op.drop_index("ix_incidents_fingerprint_resolved", table_name="incidents")
    op.drop_index("ix_incidents_status_updated", table_name="incidents")
    op.drop_index("uq_incidents_active_fingerprint", table_name="incidents")
    op.drop_table("incidents")
