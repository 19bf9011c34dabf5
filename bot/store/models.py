"""Tables of the incident store. Only migrations change the schema; these mirror the latest one."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, DateTime, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

STATUSES = ("open", "acknowledged", "resolved")
TIMELINE_KINDS = (
    "diagnosis", "alert_sent", "acknowledged", "remediation_proposed", "remediation_approved",
    "remediation_rejected", "remediation_applied", "remediation_undone", "resolved", "reopened",
)


class Base(DeclarativeBase):
    pass


class Incident(Base):
    __tablename__ = "incidents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64), nullable=False)
    cluster: Mapped[str] = mapped_column(String(253), nullable=False)
    namespace: Mapped[str | None] = mapped_column(String(63))
    target_kind: Mapped[str] = mapped_column(String(32), nullable=False)
    target_name: Mapped[str] = mapped_column(String(253), nullable=False)
    code: Mapped[str] = mapped_column(String(64), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="open")
    severity: Mapped[str] = mapped_column(String(16), nullable=False)
    title: Mapped[str] = mapped_column(Text, nullable=False)
    occurrences: Mapped[int] = mapped_column(Integer, nullable=False, default=1)
    opened_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    slack_channel: Mapped[str | None] = mapped_column(String(32))
    slack_ts: Mapped[str | None] = mapped_column(String(32))
    acknowledged_by: Mapped[str | None] = mapped_column(String(64))
    resolved_by: Mapped[str | None] = mapped_column(String(64))
    resolution: Mapped[str | None] = mapped_column(Text)

    runs: Mapped[list["DiagnosisRun"]] = relationship(back_populates="incident", cascade="all, delete-orphan")
    timeline: Mapped[list["TimelineEntry"]] = relationship(back_populates="incident", cascade="all, delete-orphan",
                                                           order_by="TimelineEntry.id")

    __table_args__ = (
        CheckConstraint("status IN ('open', 'acknowledged', 'resolved')", name="ck_incidents_status"),
        # One open (or acknowledged) incident per fingerprint, enforced by the database itself so two
        # replicas recording the same problem at once cannot both insert.
        Index("uq_incidents_active_fingerprint", "fingerprint", unique=True,
              postgresql_where=text("status <> 'resolved'"), sqlite_where=text("status <> 'resolved'")),
        Index("ix_incidents_status_updated", "status", "updated_at"),
        Index("ix_incidents_fingerprint_resolved", "fingerprint", "resolved_at"),
    )


class DiagnosisRun(Base):
    __tablename__ = "diagnosis_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"), nullable=False, index=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    actor: Mapped[str] = mapped_column(String(64), nullable=False)
    source: Mapped[str] = mapped_column(String(16), nullable=False)  # slack, cli, sweep, alert
    summary: Mapped[str] = mapped_column(Text, nullable=False)

    incident: Mapped[Incident] = relationship(back_populates="runs")
    findings: Mapped[list["FindingRecord"]] = relationship(back_populates="run", cascade="all, delete-orphan",
                                                           order_by="FindingRecord.position")


class FindingRecord(Base):
    __tablename__ = "findings"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("diagnosis_runs.id", ondelete="CASCADE"), nullable=False, index=True)
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    code: Mapped[str] = mapped_column(String(64), nullable=False, index=True)
    severity: Mapped[str] = mapped_column(String(16), nullable=False)
    confidence: Mapped[str] = mapped_column(String(16), nullable=False)
    title: Mapped[str] = mapped_column(Text, nullable=False)
    evidence: Mapped[str] = mapped_column(Text, nullable=False)  # JSON list of {source, text}

    run: Mapped[DiagnosisRun] = relationship(back_populates="findings")


class TimelineEntry(Base):
    __tablename__ = "timeline"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"), nullable=False, index=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    kind: Mapped[str] = mapped_column(String(32), nullable=False)
    actor: Mapped[str] = mapped_column(String(64), nullable=False)
    detail: Mapped[str] = mapped_column(Text, nullable=False, default="")

    incident: Mapped[Incident] = relationship(back_populates="timeline")


class BotThread(Base):
    """A Slack thread the bot answered in (see migration 0002)."""

    __tablename__ = "bot_threads"

    channel: Mapped[str] = mapped_column(String(32), primary_key=True)
    thread_ts: Mapped[str] = mapped_column(String(32), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)

    __table_args__ = (Index("ix_bot_threads_created_at", "created_at"),)
