"""Tables of the incident store. Only migrations change the schema; these mirror the latest one."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, CheckConstraint, DateTime, ForeignKey, Index, Integer, String, Text, false, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from bot.store.redacted import RedactedJsonText, RedactedText  # every text column passes the redaction step

STATUSES = ("open", "acknowledged", "resolved")
TIMELINE_KINDS = (
    "diagnosis", "alert_sent", "acknowledged", "remediation_proposed", "remediation_approved",
    "remediation_rejected", "remediation_applied", "remediation_failed", "remediation_undone",
    "remediation_expired", "resolved", "reopened",
)
# pending -> approved (claimed by one approval: being applied) -> applied | failed; failed may be
# approved again; pending | failed -> rejected | expired; applied -> undone (-> applied if the undo fails).
PROPOSAL_STATES = ("pending", "approved", "applied", "rejected", "expired", "failed", "undone")
ALERT_STATUSES = ("firing", "resolved")
# An alert's incident: pending (not opened yet) -> open -> closed (resolved, or none was needed).
ALERT_INCIDENT_STATES = ("pending", "open", "closed")


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
    title: Mapped[str] = mapped_column(RedactedText, nullable=False)
    occurrences: Mapped[int] = mapped_column(Integer, nullable=False, default=1)
    opened_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    slack_channel: Mapped[str | None] = mapped_column(String(32))
    slack_ts: Mapped[str | None] = mapped_column(String(32))
    acknowledged_by: Mapped[str | None] = mapped_column(String(64))
    resolved_by: Mapped[str | None] = mapped_column(String(64))
    resolution: Mapped[str | None] = mapped_column(RedactedText)

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
    summary: Mapped[str] = mapped_column(RedactedText, nullable=False)

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
    title: Mapped[str] = mapped_column(RedactedText, nullable=False)
    evidence: Mapped[str] = mapped_column(RedactedJsonText, nullable=False)  # JSON list of {source, text}

    run: Mapped[DiagnosisRun] = relationship(back_populates="findings")


class TimelineEntry(Base):
    __tablename__ = "timeline"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"), nullable=False, index=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    kind: Mapped[str] = mapped_column(String(32), nullable=False)
    actor: Mapped[str] = mapped_column(String(64), nullable=False)
    detail: Mapped[str] = mapped_column(RedactedText, nullable=False, default="")

    incident: Mapped[Incident] = relationship(back_populates="timeline")


class BotThread(Base):
    """A Slack thread the bot answered in (see migration 0002)."""

    __tablename__ = "bot_threads"

    channel: Mapped[str] = mapped_column(String(32), primary_key=True)
    thread_ts: Mapped[str] = mapped_column(String(32), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)

    __table_args__ = (Index("ix_bot_threads_created_at", "created_at"),)


class Proposal(Base):
    """A remediation waiting for (or past) approval; see migration 0004."""

    __tablename__ = "proposals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int | None] = mapped_column(ForeignKey("incidents.id", ondelete="SET NULL"), index=True)
    kind: Mapped[str] = mapped_column(String(64), nullable=False)
    target: Mapped[str] = mapped_column(String(320), nullable=False)
    cluster: Mapped[str] = mapped_column(String(253), nullable=False)
    namespace: Mapped[str | None] = mapped_column(String(63))
    params: Mapped[str] = mapped_column(RedactedJsonText, nullable=False)  # JSON object
    reason: Mapped[str] = mapped_column(RedactedText, nullable=False)
    finding_code: Mapped[str | None] = mapped_column(String(64))
    requested_by: Mapped[str] = mapped_column(String(64), nullable=False)
    requested_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    decided_by: Mapped[str | None] = mapped_column(String(64))
    applied_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    undone_by: Mapped[str | None] = mapped_column(String(64))
    undone_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    plan: Mapped[str] = mapped_column(RedactedJsonText, nullable=False)  # JSON object, as proposed
    results: Mapped[str] = mapped_column(RedactedJsonText, nullable=False)  # JSON list, one entry per API call
    undo: Mapped[str] = mapped_column(RedactedJsonText, nullable=False)  # JSON list of the changes that undo what was applied
    version: Mapped[int] = mapped_column(Integer, nullable=False)

    __table_args__ = (
        CheckConstraint("state IN ('pending', 'approved', 'applied', 'rejected', 'expired', 'failed', 'undone')",
                        name="ck_proposals_state"),
        Index("ix_proposals_state_expires", "state", "expires_at"),
    )


class ProposalApproval(Base):
    __tablename__ = "proposal_approvals"

    proposal_id: Mapped[int] = mapped_column(ForeignKey("proposals.id", ondelete="CASCADE"), primary_key=True)
    approver: Mapped[str] = mapped_column(String(64), primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class ProposalMessage(Base):
    """A Slack message showing a proposal, updated in place as it moves on."""

    __tablename__ = "proposal_messages"

    proposal_id: Mapped[int] = mapped_column(ForeignKey("proposals.id", ondelete="CASCADE"), primary_key=True)
    channel: Mapped[str] = mapped_column(String(32), primary_key=True)
    ts: Mapped[str] = mapped_column(String(32), primary_key=True)


class Delivery(Base):
    """A Slack delivery already taken (see migration 0005 and bot.store.deliveries)."""

    __tablename__ = "deliveries"

    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    first_seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)

    __table_args__ = (Index("ix_deliveries_first_seen_at", "first_seen_at"),)


class AlertGroup(Base):
    """One alert message: the problems sharing a storm key (see migration 0006 and bot.store.alerts)."""

    __tablename__ = "alert_groups"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    group_key: Mapped[str] = mapped_column(String(128), nullable=False)
    source: Mapped[str] = mapped_column(String(16), nullable=False)
    cluster: Mapped[str] = mapped_column(String(253), nullable=False)
    namespace: Mapped[str | None] = mapped_column(String(63))
    code: Mapped[str] = mapped_column(String(64), nullable=False)  # its leading problem's
    severity: Mapped[str] = mapped_column(String(16), nullable=False)  # the most severe of its problems
    title: Mapped[str] = mapped_column(RedactedText, nullable=False)  # its leading problem's
    count: Mapped[int] = mapped_column(Integer, nullable=False)  # problems firing (last count once resolved)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    resolved_reason: Mapped[str | None] = mapped_column(RedactedText)
    first_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    channel: Mapped[str | None] = mapped_column(String(32))
    ts: Mapped[str | None] = mapped_column(String(32))
    in_digest: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False, server_default=false())
    shown: Mapped[str | None] = mapped_column(String(64))
    claimed_by: Mapped[str | None] = mapped_column(String(253))
    claimed_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    acknowledged_by: Mapped[str | None] = mapped_column(String(64))
    acknowledged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    snoozed_by: Mapped[str | None] = mapped_column(String(64))
    snoozed_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    snoozed_until_resolved: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False,
                                                         server_default=false())
    # The cause its problems share (bot.alerts.causes), when they share one: what its headline names.
    cause_kind: Mapped[str | None] = mapped_column(String(16))
    cause_name: Mapped[str | None] = mapped_column(String(253))
    # What the cause has used up, as JSON (bot.alerts.causes.usage_of), from its members: the headline's numbers.
    cause_usage: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        CheckConstraint("status IN ('firing', 'resolved')", name="ck_alert_groups_status"),
        # Storm keys name objects within a cluster: the same key in two clusters is two storms.
        Index("uq_alert_groups_active_key", "cluster", "group_key", unique=True,
              postgresql_where=text("status = 'firing'"), sqlite_where=text("status = 'firing'")),
        Index("ix_alert_groups_key_resolved", "cluster", "group_key", "resolved_at"),
        Index("ix_alert_groups_message", "channel", "ts"),
    )


class Alert(Base):
    """One problem while it fires (and after, resolved): see migration 0006 and bot.store.alerts."""

    __tablename__ = "alerts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    group_id: Mapped[int] = mapped_column(ForeignKey("alert_groups.id", ondelete="CASCADE"), nullable=False)
    fingerprint: Mapped[str] = mapped_column(String(64), nullable=False)
    group_key: Mapped[str] = mapped_column(String(128), nullable=False)
    source: Mapped[str] = mapped_column(String(16), nullable=False)
    code: Mapped[str] = mapped_column(String(64), nullable=False)
    severity: Mapped[str] = mapped_column(String(16), nullable=False)
    cluster: Mapped[str] = mapped_column(String(253), nullable=False)
    namespace: Mapped[str | None] = mapped_column(String(63))
    target_kind: Mapped[str] = mapped_column(String(32), nullable=False)
    target_name: Mapped[str] = mapped_column(String(253), nullable=False)
    nodepool: Mapped[str | None] = mapped_column(String(253))
    title: Mapped[str] = mapped_column(RedactedText, nullable=False)
    evidence: Mapped[str] = mapped_column(RedactedJsonText, nullable=False)  # JSON list of {source, text}, redacted
    count: Mapped[int] = mapped_column(Integer, nullable=False)
    first_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    resolved_reason: Mapped[str | None] = mapped_column(RedactedText)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    incident_id: Mapped[int | None] = mapped_column(ForeignKey("incidents.id", ondelete="SET NULL"))
    incident_state: Mapped[str] = mapped_column(String(16), nullable=False, default="pending",
                                                server_default="pending")
    pods: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")  # Problem.pods
    cause_usage: Mapped[str | None] = mapped_column(Text)  # JSON, bot.alerts.causes.usage_of(problem)

    __table_args__ = (
        CheckConstraint("status IN ('firing', 'resolved')", name="ck_alerts_status"),
        CheckConstraint("incident_state IN ('pending', 'open', 'closed')", name="ck_alerts_incident_state"),
        Index("uq_alerts_active_fingerprint", "fingerprint", unique=True,
              postgresql_where=text("status = 'firing'"), sqlite_where=text("status = 'firing'")),
        Index("ix_alerts_group_id", "group_id"),
        Index("ix_alerts_cluster_source_status", "cluster", "source", "status"),
        Index("ix_alerts_incident_state", "incident_state", "status"),
    )


class WebhookPayload(Base):
    """One Alertmanager webhook body as it was received, until a consumer has handled it (migration 0008,
    bot.store.webhooks). ``dedupe_key`` makes a retry of the same notification change nothing."""

    __tablename__ = "webhook_payloads"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dedupe_key: Mapped[str] = mapped_column(String(64), nullable=False)
    body: Mapped[str | None] = mapped_column(Text)  # emptied once handled: it may quote what redaction removes
    alerts: Mapped[int] = mapped_column(Integer, nullable=False)
    # The body's size in bytes as received (migration 0010): the inbox's cap sums it over unhandled rows.
    body_bytes: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    claimed_by: Mapped[str | None] = mapped_column(String(253))
    claimed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    handled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    error: Mapped[str | None] = mapped_column(RedactedText)

    __table_args__ = (
        Index("uq_webhook_payloads_dedupe_key", "dedupe_key", unique=True),
        Index("ix_webhook_payloads_pending", "handled_at", "id"),
    )
