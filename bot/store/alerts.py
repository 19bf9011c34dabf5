"""Alert state: what a sweep or Alertmanager reported, which Slack message tells it, who snoozed it.

One ``alerts`` row per problem (fingerprint) while it fires; problems sharing a storm key
(``Problem.group_key``) are one ``alert_groups`` row, which is one Slack message. Both tables carry a
unique index over their firing rows (as incidents do), so two replicas reporting the same problem at
once, even in a split brain, open it once: the loser of the insert gets a unique violation inside a
savepoint and takes the winner's row. Posting a group's message is claimed with one guarded UPDATE
(``claim_post``) whose row count says who posts; a claim expires after CLAIM_FOR, so a replica that
died between claim and post is replaced by the next sweep.

Snoozes and acknowledgements are columns of the group, so they survive restarts and every replica
sees them. Text is redacted on the way in (titles and evidence quote the cluster, which quotes logs).
Like the other stores it hands out frozen dataclasses, never ORM rows.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Iterable, Iterator, Sequence, TypeVar

from sqlalchemy import and_, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from bot.alerts import causes
from bot.errors import NotFoundError, UserError
from bot.store.models import Alert, AlertGroup
from bot.store.tx import ClockedStore, aware
from playbooks.model import SEVERITIES
from playbooks.problems import Problem
from playbooks.redact import redact

# A replica that claimed a message and did not post it (crashed, or Slack kept failing) is replaced
# after this long; long enough for the client's retries (bot/slack_client.py) to run out first.
CLAIM_FOR = timedelta(minutes=2)
# Evidence lines kept per problem: what a message shows, not an archive (the incident keeps its own).
EVIDENCE_KEPT = 8
# Rows per IN (...) list: well below SQLite's 32,766 bound parameters and PostgreSQL's 65,535.
CHUNK = 500
GROUP_KEY_MAX = 128
T = TypeVar("T")


@dataclass(frozen=True)
class AlertView:
    id: int
    group_id: int
    fingerprint: str
    group_key: str
    source: str
    code: str
    severity: str
    cluster: str
    namespace: str | None
    target_kind: str
    target_name: str
    nodepool: str | None
    title: str
    evidence: tuple[tuple[str, str], ...]  # (source, text)
    count: int  # problems with this fingerprint in the latest report
    first_seen: datetime
    last_seen: datetime
    status: str
    resolved_reason: str | None
    resolved_at: datetime | None
    incident_id: int | None
    incident_state: str
    pods: int = 0  # pods of the target waiting on the problem; 0: not counted
    # What its cause has used up (bot.alerts.causes.usage_of): {"resource_type", "used", "limit"}.
    cause_usage: dict[str, str] | None = None

    @property
    def target(self) -> str:
        return f"{self.target_kind}/{self.target_name}"


@dataclass(frozen=True)
class GroupView:
    id: int
    group_key: str
    source: str
    cluster: str
    namespace: str | None
    code: str
    severity: str
    title: str
    count: int
    status: str
    resolved_reason: str | None
    first_seen: datetime
    last_seen: datetime
    resolved_at: datetime | None
    channel: str | None
    ts: str | None
    in_digest: bool
    shown: str | None
    acknowledged_by: str | None
    acknowledged_at: datetime | None
    snoozed_by: str | None
    snoozed_until: datetime | None
    snoozed_until_resolved: bool
    cause_kind: str | None = None  # bot.alerts.causes: the cause its problems share, when they share one
    cause_name: str | None = None
    cause_usage: dict[str, str] | None = None  # what the cause has used up, from the latest member that said
    # Firing members; once resolved, those that resolved with it. Most severe first.
    members: tuple[AlertView, ...] = ()

    def snoozed(self, now: datetime) -> bool:
        if self.status != "firing":
            return False
        return self.snoozed_until_resolved or (self.snoozed_until is not None and now < self.snoozed_until)

    @property
    def scopes(self) -> tuple[tuple[str, str | None], ...]:
        """Every (cluster, namespace) the message speaks of: whoever acts on it must read them all."""
        found = [(self.cluster, self.namespace)] + [(m.cluster, m.namespace) for m in self.members]
        return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class Batch:
    """What one report changed: every group it touched, with its members as they are now."""

    groups: tuple[GroupView, ...]


@dataclass(frozen=True)
class IncidentsDue:
    to_open: tuple[AlertView, ...]  # firing alerts whose incident is not opened yet
    to_close: tuple[AlertView, ...]  # resolved alerts whose incident is still open


def _chunks(items: Sequence[T]) -> Iterator[Sequence[T]]:
    for i in range(0, len(items), CHUNK):
        yield items[i:i + CHUNK]


def _alert_view(row: Alert) -> AlertView:
    fields = {name: aware(getattr(row, name)) for name in AlertView.__dataclass_fields__
              if name not in ("evidence", "cause_usage")}
    evidence = tuple((e["source"], e["text"]) for e in json.loads(row.evidence))
    return AlertView(evidence=evidence, cause_usage=_usage(row.cause_usage), **fields)


def _group_view(row: AlertGroup, members: Iterable[Alert] = ()) -> GroupView:
    fields = {name: aware(getattr(row, name)) for name in GroupView.__dataclass_fields__
              if name not in ("members", "cause_usage")}
    ordered = sorted(members, key=_lead_order)
    return GroupView(members=tuple(_alert_view(m) for m in ordered), cause_usage=_usage(row.cause_usage), **fields)


def _usage(stored: str | None) -> dict[str, str] | None:
    return json.loads(stored) if stored else None


def _usage_json(problem: Problem) -> str | None:
    usage = causes.usage_of(problem)
    return json.dumps(usage, sort_keys=True) if usage else None


def _lead_order(row: Alert):
    # The problem a group's message leads with: most severe, then longest firing, then a stable order.
    return SEVERITIES.index(row.severity), aware(row.first_seen), row.fingerprint


def _seen(problems: Iterable[Problem]) -> dict[str, tuple[Problem, int]]:
    """Problems by fingerprint: the most severe of each, and how many were reported."""
    out: dict[str, tuple[Problem, int]] = {}
    for problem in problems:
        fp = problem.fingerprint
        if fp in out:
            kept, n = out[fp]
            better = SEVERITIES.index(problem.severity) < SEVERITIES.index(kept.severity)
            out[fp] = (problem if better else kept, n + 1)
        else:
            out[fp] = (problem, 1)
    return out


def group_key(problem: Problem) -> str:
    """The problem's storm key as stored (a long one hashed to fit the column)."""
    key = problem.group_key
    return key if len(key) <= GROUP_KEY_MAX else "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def _evidence(problem: Problem) -> str:
    return json.dumps([{"source": redact(e.source), "text": redact(e.text)} for e in problem.evidence[:EVIDENCE_KEPT]])


class AlertStore(ClockedStore):

    # -- reports ------------------------------------------------------------------------------------

    def sweep(self, problems: Sequence[Problem], *, cluster: str, reason: str, complete: bool = True) -> Batch:
        """A sweep of ``cluster`` found ``problems``, and only those: its alerts of that cluster not
        among them have cleared (``reason``). Alertmanager's alerts never clear by absence, and nothing
        does after an incomplete sweep (a read refused or capped cannot tell "gone" from "not looked at")."""
        seen = _seen(problems)

        def work(session: Session) -> Batch:
            now = self._now()
            touched = self._fire(session, seen, now, source="sweep")
            firing = [] if not complete else session.scalars(
                select(Alert).where(Alert.cluster == cluster, Alert.source == "sweep", Alert.status == "firing")).all()
            touched |= self._resolve(session, [a for a in firing if a.fingerprint not in seen], reason, now)
            return self._settle(session, touched, now, reason)
        return self._tx(work)

    def alertmanager(self, firing: Sequence[Problem], resolved: Sequence[Problem], *, reason: str) -> Batch:
        """Alertmanager says ``firing`` fire and ``resolved`` resolved (``reason``); a problem in both
        lists fires (a group's notification may carry an alert twice)."""
        seen = _seen(firing)
        gone = sorted({p.fingerprint for p in resolved} - set(seen))

        def work(session: Session) -> Batch:
            now = self._now()
            touched = self._fire(session, seen, now, source="alertmanager")
            rows = [row for chunk in _chunks(gone) for row in session.scalars(
                select(Alert).where(Alert.fingerprint.in_(chunk), Alert.status == "firing")).all()]
            touched |= self._resolve(session, rows, reason, now)
            return self._settle(session, touched, now, reason)
        return self._tx(work)

    def _fire(self, session: Session, seen: dict[str, tuple[Problem, int]], now: datetime, *,
              source: str) -> set[int]:
        # The report decides the source, whatever the problems say: only the sweep's clear by absence.
        fps = sorted(seen)
        existing = {row.fingerprint: row for chunk in _chunks(fps) for row in session.scalars(
            select(Alert).where(Alert.fingerprint.in_(chunk), Alert.status == "firing")).all()}
        keys = sorted({group_key(seen[fp][0]) for fp in fps if fp not in existing})
        groups = {(row.cluster, row.group_key): row for chunk in _chunks(keys) for row in session.scalars(
            select(AlertGroup).where(AlertGroup.group_key.in_(chunk), AlertGroup.status == "firing")).all()}
        touched: set[int] = set()
        for fp in fps:
            problem, count = seen[fp]
            row = existing.get(fp)
            if row is None:
                key = (problem.cluster, group_key(problem))
                group = groups.get(key)
                if group is None:
                    group = groups[key] = self._open_group(session, problem, now, source)
                row = self._open_alert(session, problem, count, group, now, source)
            if row is not None:
                self._refresh_alert(row, problem, count, now, source)
                touched.add(row.group_id)
        return touched

    def _open_group(self, session: Session, problem: Problem, now: datetime, source: str) -> AlertGroup:
        key = group_key(problem)
        group = AlertGroup(group_key=key, source=source, cluster=problem.cluster,
                           namespace=problem.namespace, code=problem.code, severity=problem.severity,
                           title=redact(problem.title), count=0, status="firing", first_seen=now, last_seen=now,
                           in_digest=False, snoozed_until_resolved=False)
        cause = causes.parse(problem.group)
        if cause is not None:
            group.cause_kind, group.cause_name = cause.kind, cause.name
        # A snooze for a time outlives the message: the same storm back within the hour stays quiet.
        earlier = session.scalars(select(AlertGroup).where(AlertGroup.cluster == problem.cluster,
                                                           AlertGroup.group_key == key, AlertGroup.status == "resolved",
                                                           AlertGroup.snoozed_until > now)
                                  .order_by(AlertGroup.snoozed_until.desc())).first()
        if earlier is not None:
            group.snoozed_until, group.snoozed_by = earlier.snoozed_until, earlier.snoozed_by
        try:
            with session.begin_nested():  # a savepoint: losing the race must not lose the transaction
                session.add(group)
                session.flush()
        except IntegrityError:
            # Another replica opened this group between our lookup and our insert: use theirs.
            theirs = session.scalars(select(AlertGroup).where(AlertGroup.cluster == problem.cluster,
                                                              AlertGroup.group_key == key,
                                                              AlertGroup.status == "firing")).first()
            if theirs is None:
                raise
            return theirs
        return group

    def _open_alert(self, session: Session, problem: Problem, count: int, group: AlertGroup,
                    now: datetime, source: str) -> Alert | None:
        t = problem.target
        row = Alert(group_id=group.id, fingerprint=problem.fingerprint, group_key=group.group_key,
                    source=source, code=problem.code, severity=problem.severity, cluster=problem.cluster,
                    namespace=problem.namespace, target_kind=t.kind, target_name=t.name, nodepool=problem.nodepool,
                    title=redact(problem.title), evidence=_evidence(problem), count=count, first_seen=now,
                    last_seen=now, status="firing", incident_state="pending", pods=problem.pods)
        try:
            with session.begin_nested():
                session.add(row)
                session.flush()
        except IntegrityError:
            # Another replica opened this alert first: it is theirs, refreshed below like any other.
            return session.scalars(select(Alert).where(Alert.fingerprint == problem.fingerprint,
                                                       Alert.status == "firing")).first()
        return row

    @staticmethod
    def _refresh_alert(row: Alert, problem: Problem, count: int, now: datetime, source: str) -> None:
        row.last_seen, row.count, row.severity, row.pods = now, count, problem.severity, problem.pods
        row.title, row.evidence = redact(problem.title), _evidence(problem)
        row.nodepool = problem.nodepool or row.nodepool
        row.cause_usage = _usage_json(problem) or row.cause_usage
        if source == "alertmanager":
            # Alertmanager says when it resolves; from now on the sweep's not seeing it does not.
            row.source = "alertmanager"

    @staticmethod
    def _resolve(session: Session, rows: Sequence[Alert], reason: str, now: datetime) -> set[int]:
        reason = redact(reason)
        for row in rows:
            row.status, row.resolved_reason, row.resolved_at = "resolved", reason, now
        session.flush()
        return {row.group_id for row in rows}

    def _settle(self, session: Session, group_ids: set[int], now: datetime, reason: str) -> Batch:
        """Bring each touched group in line with its members; the groups as they are now."""
        ids = sorted(group_ids)
        groups = [g for chunk in _chunks(ids) for g in session.scalars(
            select(AlertGroup).where(AlertGroup.id.in_(chunk)).order_by(AlertGroup.id)).all()]
        members: dict[int, list[Alert]] = {}
        for chunk in _chunks(ids):
            for row in session.scalars(select(Alert).where(Alert.group_id.in_(chunk), or_(
                    Alert.status == "firing", Alert.resolved_at == now))):
                members.setdefault(row.group_id, []).append(row)
        views = []
        for group in groups:
            rows = members.get(group.id, [])
            firing = [r for r in rows if r.status == "firing"]
            if firing:
                lead = min(firing, key=_lead_order)
                group.count = sum(r.count for r in firing)
                group.severity, group.code, group.title = lead.severity, lead.code, lead.title
                group.namespace, group.last_seen = lead.namespace, now
                group.source = "alertmanager" if any(r.source == "alertmanager" for r in firing) else "sweep"
                # The newest numbers any member gave (they all read the same NodePool's status).
                told = max((r for r in firing if r.cause_usage), key=lambda r: (aware(r.last_seen), r.id), default=None)
                group.cause_usage = told.cause_usage if told is not None else group.cause_usage
            elif group.status == "firing":
                group.status, group.resolved_at = "resolved", now
                group.resolved_reason = redact(reason)  # its last problems cleared in this report
                group.claimed_by = group.claimed_until = None
            views.append(_group_view(group, firing or rows))
        session.flush()
        return Batch(groups=tuple(views))

    # -- posting --------------------------------------------------------------------------------------

    def claim_post(self, group_id: int, *, owner: str, channel: str) -> bool:
        """True when this caller, and no other, is to post group ``group_id``'s message in ``channel``:
        it fires, has no message yet, and nobody holds a live claim on it."""
        def work(session: Session) -> bool:
            now = self._now()
            result = session.execute(
                update(AlertGroup)
                .where(AlertGroup.id == group_id, AlertGroup.status == "firing", AlertGroup.ts.is_(None),
                       or_(AlertGroup.claimed_until.is_(None), AlertGroup.claimed_until < now))
                .values(claimed_by=owner, claimed_until=now + CLAIM_FOR, channel=channel))
            return result.rowcount == 1
        return self._tx(work)

    def posted(self, shown: dict[int, str], *, channel: str, ts: str, owner: str, in_digest: bool = False) -> None:
        """The message for the groups claimed by ``owner`` is out: remember where, and what it shows."""
        def work(session: Session) -> None:
            for group_id, key in shown.items():
                session.execute(update(AlertGroup).where(AlertGroup.id == group_id, AlertGroup.claimed_by == owner)
                                .values(channel=channel, ts=ts, shown=key, in_digest=in_digest,
                                        claimed_by=None, claimed_until=None))
        self._tx(work)

    def release(self, group_ids: Sequence[int], *, owner: str) -> None:
        """Posting failed: give the claims back so the next report tries again."""
        def work(session: Session) -> None:
            for chunk in _chunks(sorted(group_ids)):
                session.execute(update(AlertGroup).where(AlertGroup.id.in_(chunk), AlertGroup.claimed_by == owner)
                                .values(claimed_by=None, claimed_until=None))
        self._tx(work)

    def mark_shown(self, shown: dict[int, str]) -> None:
        """What each group's message shows now (so an unchanged group is not updated again)."""
        def work(session: Session) -> None:
            for group_id, key in shown.items():
                session.execute(update(AlertGroup).where(AlertGroup.id == group_id).values(shown=key))
        self._tx(work)

    def in_message(self, channel: str, ts: str) -> list[GroupView]:
        """The groups a (digest) message tells, with their firing members."""
        def work(session: Session) -> list[GroupView]:
            groups = session.scalars(select(AlertGroup).where(AlertGroup.channel == channel, AlertGroup.ts == ts)
                                     .order_by(AlertGroup.id)).all()
            return [_group_view(g) for g in groups]
        return self._tx(work)

    # -- incidents -----------------------------------------------------------------------------------

    def incidents_due(self, *, limit: int = 1000) -> IncidentsDue:
        def work(session: Session) -> IncidentsDue:
            to_open = session.scalars(select(Alert).where(Alert.status == "firing", Alert.incident_state == "pending")
                                      .order_by(Alert.id).limit(limit)).all()
            to_close = session.scalars(select(Alert).where(Alert.status == "resolved", Alert.incident_state != "closed")
                                       .order_by(Alert.id).limit(limit)).all()
            return IncidentsDue(tuple(_alert_view(r) for r in to_open), tuple(_alert_view(r) for r in to_close))
        return self._tx(work)

    def incidents_opened(self, opened: dict[int, int | None]) -> None:
        """alert id -> its incident (None: none was needed, e.g. an info-level problem)."""
        def work(session: Session) -> None:
            for alert_id, incident_id in opened.items():
                session.execute(update(Alert).where(Alert.id == alert_id, Alert.incident_state == "pending")
                                .values(incident_id=incident_id, incident_state="open" if incident_id else "closed"))
        self._tx(work)

    def incidents_closed(self, alert_ids: Sequence[int]) -> None:
        def work(session: Session) -> None:
            for chunk in _chunks(sorted(alert_ids)):
                session.execute(update(Alert).where(Alert.id.in_(chunk)).values(incident_state="closed"))
        self._tx(work)

    # -- people acting on a message --------------------------------------------------------------

    def get(self, group_id: int) -> GroupView:
        def work(session: Session) -> GroupView:
            return self._view(session, self._load(session, group_id))
        return self._tx(work)

    def snooze(self, group_id: int, *, actor: str, until: datetime | None = None,
               until_resolved: bool = False) -> GroupView:
        """Quiet the group's message until ``until``, or until it resolves; a later snooze replaces it."""
        if (until is None) == (not until_resolved):
            raise ValueError("snooze until a time or until resolved, not both or neither")

        def work(session: Session) -> GroupView:
            group = self._load(session, group_id)
            if until_resolved and group.status == "resolved":
                raise UserError("this alert is already resolved")
            group.snoozed_by = actor
            group.snoozed_until = until.astimezone(timezone.utc) if until is not None else None
            group.snoozed_until_resolved = until_resolved
            return self._view(session, group)
        return self._tx(work)

    def acknowledge(self, group_id: int, *, actor: str) -> GroupView:
        def work(session: Session) -> GroupView:
            group = self._load(session, group_id)
            if group.status == "resolved":
                raise UserError("this alert is already resolved")
            if group.acknowledged_by is None:
                group.acknowledged_by, group.acknowledged_at = actor, self._now()
            return self._view(session, group)
        return self._tx(work)

    @staticmethod
    def _load(session: Session, group_id: int) -> AlertGroup:
        group = session.get(AlertGroup, group_id, with_for_update=True)
        if group is None:
            raise NotFoundError(f"there is no alert #{group_id}.")
        return group

    @staticmethod
    def _view(session: Session, group: AlertGroup) -> GroupView:
        condition = Alert.status == "firing" if group.status == "firing" else and_(
            Alert.status == "resolved", Alert.resolved_at == group.resolved_at)
        members = session.scalars(select(Alert).where(Alert.group_id == group.id, condition)).all()
        return _group_view(group, members)
