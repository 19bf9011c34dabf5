"""The incident store: every diagnosis worth keeping, grouped into incidents by fingerprint.

Like the proposal store, it hands out plain frozen dataclasses, never ORM objects, so handlers and
renderers cannot lazily query by accident. Writes retry transient database errors with backoff
(bot/store/tx.py); when the database stays down, callers get StoreUnavailable and answer without it.

Reads and actions take the asker's ``access``: an incident they may not read is, to them, one that
does not exist (same error, same words), so a refusal never tells whether it is there. Text is
redacted on the way in, including what people type.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Callable

from sqlalchemy import Engine, delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from bot.errors import NotFoundError, UserError
from bot.policy.model import Access
from bot.store.models import BotThread, DiagnosisRun, FindingRecord, Incident, TimelineEntry
from bot.store.tx import Transactions, aware, utcnow
from bot.store.visibility import may_read_row, visible
from playbooks.model import SEVERITIES, Diagnosis, Finding
from playbooks.problems import fingerprint
from playbooks.redact import redact, redact_diagnosis

WEEK = timedelta(days=7)
# How long a thread the bot answered in stays one where a pasted log gets explained.
THREAD_MEMORY = timedelta(days=30)


@dataclass(frozen=True)
class IncidentView:
    id: int
    fingerprint: str
    cluster: str
    namespace: str | None
    target_kind: str
    target_name: str
    code: str
    status: str
    severity: str
    title: str
    occurrences: int
    opened_at: datetime
    updated_at: datetime
    resolved_at: datetime | None
    slack_channel: str | None
    slack_ts: str | None
    acknowledged_by: str | None
    resolved_by: str | None
    resolution: str | None

    @property
    def target(self) -> str:
        return f"{self.target_kind}/{self.target_name}"


@dataclass(frozen=True)
class TimelineView:
    at: datetime
    kind: str
    actor: str
    detail: str


@dataclass(frozen=True)
class FindingView:
    code: str
    severity: str
    confidence: str
    title: str
    evidence: list[dict]


@dataclass(frozen=True)
class IncidentDetail:
    incident: IncidentView
    timeline: list[TimelineView]
    findings: list[FindingView]  # of the latest diagnosis run


@dataclass(frozen=True)
class History:
    seen_this_week: int  # diagnosis runs of this fingerprint in the last 7 days, this one included
    last_resolved: IncidentView | None
    last_fix: str | None  # how it was last resolved: the resolution note or the remediation applied


@dataclass(frozen=True)
class Recorded:
    incident: IncidentView
    created: bool
    history: History


def _view(row: Incident) -> IncidentView:
    return IncidentView(**{name: aware(getattr(row, name)) for name in IncidentView.__dataclass_fields__})


class IncidentStore:
    def __init__(self, engine: Engine, *, clock: Callable[[], datetime] = utcnow, attempts: int = 4,
                 backoff: float = 0.05) -> None:
        self.engine = engine
        self._tx = Transactions(engine, attempts=attempts, backoff=backoff)
        self._clock = clock

    # -- recording diagnoses ----------------------------------------------------------------------

    def record_diagnosis(self, diagnosis: Diagnosis, *, actor: str, source: str) -> Recorded | None:
        """Open or update the incident of this diagnosis; None when it found nothing above info."""
        # The engine redacts already; the store does too, because whatever lands here is kept for years.
        diagnosis = redact_diagnosis(diagnosis)
        first = next((f for f in diagnosis.findings if f.severity != "info"), None)
        if first is None:
            return None
        t = diagnosis.target
        fp = fingerprint(cluster=diagnosis.cluster or "", kind=t.kind, namespace=t.namespace, name=t.name, code=first.code)
        return self._tx(lambda s: self._record(s, diagnosis, first, fp, actor=actor, source=source))

    def _record(self, session: Session, diagnosis: Diagnosis, first: Finding, fp: str, *, actor: str,
                source: str) -> Recorded:
        now = self._clock()
        incident = self._active(session, fp)
        created = False
        if incident is None:
            incident, created = self._open(session, diagnosis, first, fp, now)
        else:
            incident.occurrences += 1
            incident.updated_at = now
            if SEVERITIES.index(first.severity) < SEVERITIES.index(incident.severity):
                incident.severity = first.severity
            incident.title = first.title
        run = DiagnosisRun(incident=incident, at=now, actor=actor, source=source, summary=diagnosis.summary)
        for i, finding in enumerate(diagnosis.findings):
            run.findings.append(FindingRecord(
                position=i, code=finding.code, severity=finding.severity, confidence=finding.confidence,
                title=finding.title, evidence=json.dumps([{"source": e.source, "text": e.text} for e in finding.evidence[:8]]),
            ))
        session.add(run)
        session.add(TimelineEntry(incident=incident, at=now, kind="diagnosis", actor=actor,
                                  detail=f"{source}: {diagnosis.summary}"))
        for remediation in first.remediations:
            if created:
                session.add(TimelineEntry(incident=incident, at=now, kind="remediation_proposed", actor="gpubot",
                                          detail=f"{remediation.kind} on {remediation.target}"))
        session.flush()
        return Recorded(incident=_view(incident), created=created, history=self._history(session, fp, now))

    def _active(self, session: Session, fp: str) -> Incident | None:
        return session.scalars(select(Incident).where(Incident.fingerprint == fp, Incident.status != "resolved")
                               .with_for_update()).first()

    def _open(self, session: Session, diagnosis: Diagnosis, first: Finding, fp: str, now: datetime) -> tuple[Incident, bool]:
        t = diagnosis.target
        incident = Incident(
            fingerprint=fp, cluster=diagnosis.cluster or "", namespace=t.namespace, target_kind=t.kind,
            target_name=t.name, code=first.code, status="open", severity=first.severity, title=first.title,
            occurrences=1, opened_at=now, updated_at=now,
        )
        try:
            with session.begin_nested():  # a savepoint: losing the race must not lose the transaction
                session.add(incident)
                session.flush()
        except IntegrityError:
            # Another replica opened it between our lookup and our insert: the unique index refused
            # the duplicate. Use theirs.
            existing = self._active(session, fp)
            if existing is None:
                raise
            existing.occurrences += 1
            existing.updated_at = now
            return existing, False
        return incident, True

    def _history(self, session: Session, fp: str, now: datetime) -> History:
        seen = session.scalar(select(func.count(DiagnosisRun.id)).join(Incident)
                              .where(Incident.fingerprint == fp, DiagnosisRun.at >= now - WEEK)) or 0
        last = session.scalars(select(Incident).where(Incident.fingerprint == fp, Incident.status == "resolved")
                               .order_by(Incident.resolved_at.desc())).first()
        fix = None
        if last is not None:
            fix = last.resolution
            if not fix:
                applied = session.scalars(select(TimelineEntry).where(TimelineEntry.incident_id == last.id,
                                                                       TimelineEntry.kind == "remediation_applied")
                                          .order_by(TimelineEntry.id.desc())).first()
                fix = applied.detail if applied else None
        return History(seen_this_week=seen, last_resolved=_view(last) if last else None, last_fix=fix)

    # -- people acting on incidents ---------------------------------------------------------------

    def set_thread(self, incident_id: int, *, channel: str, ts: str) -> None:
        def work(session: Session) -> None:
            incident = self._get(session, incident_id)
            if incident.slack_ts is None:
                incident.slack_channel, incident.slack_ts = channel, ts
        self._tx(work)

    def acknowledge(self, incident_id: int, *, actor: str, access: Access | None = None) -> IncidentView:
        def work(session: Session) -> IncidentView:
            incident = self._get(session, incident_id, access)
            if incident.status == "resolved":
                raise UserError(f"incident #{incident_id} is already resolved")
            if incident.status != "acknowledged":
                incident.status, incident.acknowledged_by = "acknowledged", actor
                incident.updated_at = self._clock()
                session.add(TimelineEntry(incident=incident, at=incident.updated_at, kind="acknowledged", actor=actor, detail=""))
            return _view(incident)
        return self._tx(work)

    def resolve(self, incident_id: int, *, actor: str, resolution: str | None = None,
                access: Access | None = None) -> IncidentView:
        # People paste the command that fixed it, token and all.
        resolution = redact(resolution) if resolution else resolution

        def work(session: Session) -> IncidentView:
            incident = self._get(session, incident_id, access)
            if incident.status == "resolved":
                raise UserError(f"incident #{incident_id} is already resolved")
            now = self._clock()
            incident.status, incident.resolved_by, incident.resolved_at = "resolved", actor, now
            incident.updated_at, incident.resolution = now, resolution
            session.add(TimelineEntry(incident=incident, at=now, kind="resolved", actor=actor, detail=resolution or ""))
            return _view(incident)
        return self._tx(work)

    def add_timeline(self, incident_id: int, *, kind: str, actor: str, detail: str = "") -> None:
        def work(session: Session) -> None:
            incident = self._get(session, incident_id)
            session.add(TimelineEntry(incident=incident, at=self._clock(), kind=kind, actor=actor, detail=redact(detail)))
        self._tx(work)

    def _get(self, session: Session, incident_id: int, access: Access | None = None) -> Incident:
        incident = session.get(Incident, incident_id)
        if incident is None or not may_read_row(access, incident):
            raise NotFoundError(f"there is no incident #{incident_id}.")
        return incident

    # -- reading -----------------------------------------------------------------------------------

    def get(self, incident_id: int, *, access: Access | None = None) -> IncidentDetail:
        def work(session: Session) -> IncidentDetail:
            incident = self._get(session, incident_id, access)
            timeline = [TimelineView(aware(e.at), e.kind, e.actor, e.detail) for e in incident.timeline]
            run = session.scalars(select(DiagnosisRun).where(DiagnosisRun.incident_id == incident_id)
                                  .order_by(DiagnosisRun.id.desc())).first()
            findings = [FindingView(f.code, f.severity, f.confidence, f.title, json.loads(f.evidence))
                        for f in (run.findings if run else [])]
            return IncidentDetail(_view(incident), timeline, findings)
        return self._tx(work)

    def list(self, *, status: str = "open", since: timedelta | None = None, limit: int = 50,
             access: Access | None = None) -> list[IncidentView]:
        """The newest ``limit`` incidents ``access`` may read (filtered first, so others' cannot crowd them out)."""
        if status not in ("open", "all"):
            raise UserError(f"list open or all incidents, not {status!r}")

        def work(session: Session) -> list[IncidentView]:
            query = select(Incident).where(visible(access, dialect=self.engine.dialect.name))
            if status == "open":
                query = query.where(Incident.status != "resolved")
            if since is not None:
                query = query.where(Incident.updated_at >= self._clock() - since)
            rows = session.scalars(query.order_by(Incident.updated_at.desc()).limit(limit)).all()
            views = [_view(r) for r in rows]
            return sorted(views, key=lambda v: (v.status == "resolved", SEVERITIES.index(v.severity), -v.updated_at.timestamp()))
        return self._tx(work)

    def counts_by_code(self, *, since: timedelta = WEEK, access: Access | None = None) -> dict[str, int]:
        """How often each problem ``access`` may read was diagnosed in the window (runs per incident code)."""
        def work(session: Session) -> dict[str, int]:
            rows = session.execute(select(Incident.code, func.count(DiagnosisRun.id)).join(DiagnosisRun)
                                   .where(DiagnosisRun.at >= self._clock() - since,
                                          visible(access, dialect=self.engine.dialect.name))
                                   .group_by(Incident.code).order_by(func.count(DiagnosisRun.id).desc())).all()
            return {code: count for code, count in rows}
        return self._tx(work)

    # -- Slack threads the bot answered in (shared by replicas) ----------------------------------

    def remember_thread(self, channel: str, thread_ts: str) -> None:
        """Note a thread the bot answered in, forgetting those older than THREAD_MEMORY on the way."""
        def work(session: Session) -> None:
            now = self._clock()
            if session.get(BotThread, (channel, thread_ts)) is None:
                session.add(BotThread(channel=channel, thread_ts=thread_ts, created_at=now))
            session.execute(delete(BotThread).where(BotThread.created_at < now - THREAD_MEMORY))
        try:
            self._tx(work)
        except IntegrityError:
            pass  # another replica noted the same thread at the same moment

    def knows_thread(self, channel: str, thread_ts: str) -> bool:
        def work(session: Session) -> bool:
            row = session.get(BotThread, (channel, thread_ts))
            return row is not None and aware(row.created_at) >= self._clock() - THREAD_MEMORY
        return self._tx(work)

