"""Remediation proposals: what was asked for, who approved it, what was applied and how to undo it.

Every state change is one guarded UPDATE (``... WHERE id = :id AND state IN (:from ...)``) whose row
count says whether this caller won, so two clicks, or two replicas receiving the same click, cannot
both move a proposal on and a patch is applied once. The loser gets ProposalConflict, which says who
did what. Each transition also takes the proposal's row lock first (PostgreSQL ``FOR UPDATE``; SQLite
transactions are serial already), so approvals counted for the two-person rule are never counted
from a stale snapshot.

Each step is written to the timeline of the proposal's incident, when it has one, redacted.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from bot.errors import NotFoundError, UserError
from bot.metrics import count_remediation
from bot.policy.model import Access
from bot.store.models import PROPOSAL_STATES, Incident, Proposal, ProposalApproval, ProposalMessage, TimelineEntry
from bot.store.tx import ClockedStore, aware
from bot.store.visibility import may_read_row, visible
from playbooks.redact import redact

STATES = PROPOSAL_STATES
# Where an approval or a rejection may still move a proposal from: waiting, or a failed apply to retry.
OPEN = ("pending", "failed")
# A timeline detail holds the API's answer; a huge one would only bury the rest.
DETAIL_LIMIT = 2000


@dataclass(frozen=True)
class ProposalView:
    id: int
    kind: str
    target: str
    cluster: str
    namespace: str | None
    params: dict
    reason: str
    finding_code: str | None
    requested_by: str
    requested_at: datetime
    expires_at: datetime
    state: str
    approvals: tuple[str, ...]  # distinct approvers, first first
    decided_by: str | None  # who rejected it, or whose approval set the apply going
    applied_at: datetime | None
    undone_by: str | None
    undone_at: datetime | None
    plan: dict  # as proposed
    results: list[dict]  # one entry per API call, applies and undos alike, in order
    undo: list[dict]  # the changes that undo what the apply actually changed
    incident_id: int | None
    messages: tuple[tuple[str, str], ...]  # (channel, ts) of the Slack messages showing it
    version: int  # bumped by every transition


class ProposalConflict(UserError):
    """The transition was not possible; ``proposal`` is the proposal as it is now."""

    def __init__(self, message: str, *, proposal: ProposalView) -> None:
        super().__init__(message)
        self.proposal = proposal


class ProposalStore(ClockedStore):

    # -- proposing ---------------------------------------------------------------------------------

    def create(self, *, kind: str, target: str, cluster: str, namespace: str | None, params: dict[str, Any],
               reason: str, requested_by: str, expires_at: datetime, plan: dict[str, Any],
               incident_id: int | None = None, finding_code: str | None = None) -> ProposalView:
        reason = redact(reason or "")  # typed by a person: tokens get pasted

        def work(session: Session) -> ProposalView:
            if incident_id is not None and session.get(Incident, incident_id) is None:
                raise NotFoundError(f"there is no incident #{incident_id}.")
            now = self._now()
            row = Proposal(kind=kind, target=target, cluster=cluster, namespace=namespace, params=json.dumps(params),
                           reason=reason, finding_code=finding_code, requested_by=requested_by, requested_at=now,
                           expires_at=expires_at.astimezone(timezone.utc), state="pending", plan=json.dumps(plan),
                           results="[]", undo="[]", version=1, incident_id=incident_id)
            session.add(row)
            session.flush()
            expiry = _when(aware(row.expires_at), now)
            reason_part = f" Reason: {reason}." if reason else ""
            self._note(session, row, "remediation_proposed", requested_by,
                       f"{_headline(row)}: {_summary(row)}.{reason_part} Expires {expiry}.")
            return self._view(session, row)
        proposed = self._tx(work)
        count_remediation("pending")
        return proposed

    # -- deciding ----------------------------------------------------------------------------------

    def approve(self, proposal_id: int, *, approver: str, needed: int) -> tuple[ProposalView, bool]:
        """Record ``approver``'s approval; True when it completes the approvals ``needed`` and this
        caller claimed the proposal (now ``approved``): this caller, and no other, applies it."""
        if needed < 1:
            raise ValueError("a proposal needs at least one approval")

        def work(session: Session) -> tuple[ProposalView, bool, bool]:
            now = self._now()
            row = self._load(session, proposal_id, lock=True)
            if row.state in OPEN and now > aware(row.expires_at):
                return self._expire(session, row, now), False, True
            if row.state not in OPEN:
                return self._view(session, row), False, True
            added = self._add_approval(session, proposal_id, approver, now)
            count = session.scalar(select(func.count()).select_from(ProposalApproval)
                                   .where(ProposalApproval.proposal_id == proposal_id)) or 0
            if count < needed:
                if added:
                    self._note(session, row, "remediation_approved", approver,
                               f"{_headline(row)}: approval {count} of {needed}, waiting for another approver")
                return self._view(session, row), False, False
            if not self._move(session, row, frm=OPEN, to="approved", decided_by=approver):
                return self._view(session, self._load(session, proposal_id)), False, True
            row = self._load(session, proposal_id)
            self._note(session, row, "remediation_approved", approver,
                       f"{_headline(row)}: approved ({count} of {needed}), applying: {_summary(row)}")
            return self._view(session, row), True, False

        view, claimed, conflict = self._tx(work)
        if conflict:
            raise ProposalConflict(why(view, self._now()), proposal=view)
        return view, claimed

    def reject(self, proposal_id: int, *, actor: str) -> ProposalView:
        def work(session: Session) -> tuple[ProposalView, bool]:
            now = self._now()
            row = self._load(session, proposal_id, lock=True)
            if row.state in OPEN and now > aware(row.expires_at):
                return self._expire(session, row, now), False
            if not self._move(session, row, frm=OPEN, to="rejected", decided_by=actor):
                return self._view(session, row), False
            row = self._load(session, proposal_id)
            self._note(session, row, "remediation_rejected", actor, f"{_headline(row)}: rejected")
            return self._view(session, row), True
        return self._settle(work)

    def expire_due(self) -> list[int]:
        """Move every proposal still open (pending, or failed and not retried) past its expiry to
        ``expired``; the ids moved, so their messages can say so."""
        def work(session: Session) -> list[int]:
            now = self._now()
            due = session.scalars(select(Proposal).where(Proposal.state.in_(OPEN), Proposal.expires_at < now)
                                  .order_by(Proposal.id).with_for_update()).all()
            return [row.id for row in due if self._expire(session, row, now).state == "expired"]
        return self._tx(work)

    def _expire(self, session: Session, row: Proposal, now: datetime) -> ProposalView:
        if self._move(session, row, frm=OPEN, to="expired", also=(Proposal.expires_at < now,)):
            row = self._load(session, row.id)
            self._note(session, row, "remediation_expired", "gpubot",
                       f"{_headline(row)}: expired at {_when(aware(row.expires_at), now)} without being applied")
        return self._view(session, self._load(session, row.id))

    # -- applying and undoing ------------------------------------------------------------------------

    def finish(self, proposal_id: int, *, ok: bool, results: list[dict], undo: list[dict]) -> ProposalView:
        """The apply of a claimed (``approved``) proposal ended: ``applied``, or ``failed`` (retryable)."""
        def work(session: Session) -> tuple[ProposalView, bool]:
            now = self._now()
            row = self._load(session, proposal_id, lock=True)
            to = "applied" if ok else "failed"
            if not self._move(session, row, frm=("approved",), to=to, applied_at=now if ok else None,
                              results=json.dumps(results), undo=json.dumps(undo)):
                return self._view(session, row), False
            row = self._load(session, proposal_id)
            if ok:
                detail = f"{_headline(row)}: {_summary(row)}; {_results(results)}"
            else:
                detail = f"{_headline(row)}: apply failed, approve again to retry; {_results(results)}"
            self._note(session, row, f"remediation_{to}", row.decided_by or "gpubot", detail)
            return self._view(session, row), True
        return self._settle(work)

    def claim_undo(self, proposal_id: int, *, actor: str) -> ProposalView:
        """Claim the undo of an ``applied`` proposal (now ``undone``): this caller, and no other, runs
        ``view.undo``, then reports with :meth:`finish_undo`."""
        def work(session: Session) -> tuple[ProposalView, bool]:
            row = self._load(session, proposal_id, lock=True)
            if not self._move(session, row, frm=("applied",), to="undone", undone_by=actor, undone_at=self._now()):
                return self._view(session, row), False
            row = self._load(session, proposal_id)
            self._note(session, row, "remediation_undone", actor,
                       f"{_headline(row)}: undoing {_count(len(json.loads(row.undo)), 'change')}")
            return self._view(session, row), True
        return self._settle(work)

    def finish_undo(self, proposal_id: int, *, ok: bool, results: list[dict]) -> ProposalView:
        """The undo claimed by :meth:`claim_undo` ended: results recorded; a failed undo leaves the
        proposal ``applied`` again, so Undo can be tried once more."""
        def work(session: Session) -> tuple[ProposalView, bool]:
            row = self._load(session, proposal_id, lock=True)
            actor = row.undone_by or "gpubot"
            recorded = json.dumps(json.loads(row.results) + list(results))
            if ok:
                moved = self._move(session, row, frm=("undone",), to="undone", results=recorded)
            else:
                moved = self._move(session, row, frm=("undone",), to="applied", results=recorded,
                                   undone_by=None, undone_at=None)
            if not moved:
                return self._view(session, row), False
            row = self._load(session, proposal_id)
            if ok:
                self._note(session, row, "remediation_undone", actor, f"{_headline(row)}: undone; {_results(results)}")
            else:
                self._note(session, row, "remediation_failed", actor,
                           f"{_headline(row)}: undo failed, the change stays applied; {_results(results)}")
            return self._view(session, row), True
        return self._settle(work)

    def undo_failed(self, proposal_id: int, *, results: list[dict]) -> ProposalView:
        return self.finish_undo(proposal_id, ok=False, results=results)

    # -- Slack messages ----------------------------------------------------------------------------

    def add_message(self, proposal_id: int, *, channel: str, ts: str) -> None:
        def work(session: Session) -> None:
            self._load(session, proposal_id)
            if session.get(ProposalMessage, (proposal_id, channel, ts)) is not None:
                return
            try:
                with session.begin_nested():
                    session.add(ProposalMessage(proposal_id=proposal_id, channel=channel, ts=ts))
            except IntegrityError:
                pass  # another replica noted the same message at the same moment
        self._tx(work)

    # -- reading -----------------------------------------------------------------------------------

    def get(self, proposal_id: int, *, access: Access | None = None) -> ProposalView:
        def work(session: Session) -> ProposalView:
            row = self._load(session, proposal_id)
            if not may_read_row(access, row):
                raise NotFoundError(f"there is no proposal #{proposal_id}.")
            return self._view(session, row)
        return self._tx(work)

    def list(self, *, states: tuple[str, ...] | list[str] | None = None, limit: int = 50,
             access: Access | None = None) -> list[ProposalView]:
        """The newest ``limit`` proposals ``access`` may read (filtered first, so others' cannot crowd them out)."""
        unknown = sorted(set(states or ()) - set(STATES))
        if unknown:
            raise UserError(f"unknown proposal state {unknown[0]!r}: use one of {', '.join(STATES)}")

        def work(session: Session) -> list[ProposalView]:
            query = select(Proposal).where(visible(access, dialect=self.engine.dialect.name, table=Proposal))
            if states is not None:
                query = query.where(Proposal.state.in_(list(states)))
            rows = session.scalars(query.order_by(Proposal.id.desc()).limit(limit)).all()
            return [self._view(session, row) for row in rows]
        return self._tx(work)

    # -- helpers -------------------------------------------------------------------------------------

    def _settle(self, work: Callable[[Session], tuple[ProposalView, bool]]) -> ProposalView:
        # The conflict is raised after the transaction, so what it did on the way (an expiry) is kept.
        view, moved = self._tx(work)
        if not moved:
            raise ProposalConflict(why(view, self._now()), proposal=view)
        return view

    def _load(self, session: Session, proposal_id: int, *, lock: bool = False) -> Proposal:
        query = select(Proposal).where(Proposal.id == proposal_id).execution_options(populate_existing=True)
        if lock:
            query = query.with_for_update()
        row = session.scalars(query).first()
        if row is None:
            raise NotFoundError(f"there is no proposal #{proposal_id}.")
        return row

    def _move(self, session: Session, row: Proposal, *, frm: tuple[str, ...], to: str, also: tuple = (),
              **values: Any) -> bool:
        """The guarded transition: True when this caller moved the proposal from ``frm`` to ``to``."""
        result = session.execute(
            update(Proposal).where(Proposal.id == row.id, Proposal.state.in_(frm), *also)
            .values(state=to, version=Proposal.version + 1, **values)
            .execution_options(synchronize_session=False))
        if result.rowcount == 1:
            count_remediation(to)  # counted once the move is made (a retried transaction may count it again)
        return result.rowcount == 1

    def _add_approval(self, session: Session, proposal_id: int, approver: str, now: datetime) -> bool:
        if session.get(ProposalApproval, (proposal_id, approver)) is not None:
            return False
        try:
            with session.begin_nested():
                session.add(ProposalApproval(proposal_id=proposal_id, approver=approver, at=now))
        except IntegrityError:
            return False  # the same person's other click, on another replica
        return True

    def _note(self, session: Session, row: Proposal, kind: str, actor: str, detail: str) -> None:
        if row.incident_id is None:
            return
        detail = redact(detail)
        if len(detail) > DETAIL_LIMIT:
            detail = detail[:DETAIL_LIMIT - 1] + "…"
        session.add(TimelineEntry(incident_id=row.incident_id, at=self._now(), kind=kind, actor=actor, detail=detail))

    def _view(self, session: Session, row: Proposal) -> ProposalView:
        approvals = session.scalars(select(ProposalApproval.approver).where(ProposalApproval.proposal_id == row.id)
                                    .order_by(ProposalApproval.at, ProposalApproval.approver)).all()
        messages = session.execute(select(ProposalMessage.channel, ProposalMessage.ts)
                                   .where(ProposalMessage.proposal_id == row.id)
                                   .order_by(ProposalMessage.ts, ProposalMessage.channel)).all()
        return ProposalView(
            id=row.id, kind=row.kind, target=row.target, cluster=row.cluster, namespace=row.namespace,
            params=json.loads(row.params), reason=row.reason, finding_code=row.finding_code,
            requested_by=row.requested_by, requested_at=aware(row.requested_at), expires_at=aware(row.expires_at),
            state=row.state, approvals=tuple(approvals), decided_by=row.decided_by, applied_at=aware(row.applied_at),
            undone_by=row.undone_by, undone_at=aware(row.undone_at), plan=json.loads(row.plan),
            results=json.loads(row.results), undo=json.loads(row.undo), incident_id=row.incident_id,
            messages=tuple((channel, ts) for channel, ts in messages), version=row.version,
        )


def why(view: ProposalView, now: datetime) -> str:
    """One line: why ``view`` cannot move the way someone just asked."""
    name = f"proposal #{view.id}"
    if view.state == "approved":
        return f"{name} is being applied by {_who(view.decided_by)}"
    if view.state == "applied":
        return f"{name} was already applied by {_who(view.decided_by)} at {_when(view.applied_at, now)}"
    if view.state == "rejected":
        return f"{name} was rejected by {_who(view.decided_by)}"
    if view.state == "expired":
        return f"{name} expired at {_when(view.expires_at, now)}: propose it again"
    if view.state == "undone":
        return f"{name} was already undone by {_who(view.undone_by)} at {_when(view.undone_at, now)}"
    if view.state == "failed":
        return f"{name} was not applied: its apply failed; approve it again to retry"
    return f"{name} was not applied: it is waiting for approval"


def _who(actor: str | None) -> str:
    """A Slack user as a mention; an identity from the command line (``k8s:alice@example.com``: Slack
    ids never hold a colon) as it is."""
    if not actor:
        return "someone"
    return actor if ":" in actor else f"<@{actor}>"


def _when(at: datetime | None, now: datetime) -> str:
    if at is None:
        return "an unknown time"
    at = at.astimezone(timezone.utc)
    return at.strftime("%H:%M UTC" if at.date() == now.astimezone(timezone.utc).date() else "%Y-%m-%d %H:%M UTC")


def _headline(row: Proposal) -> str:
    where = f" -n {row.namespace}" if row.namespace else ""
    return f"#{row.id} {row.kind} on {row.target}{where}"


def _summary(row: Proposal) -> str:
    return str(json.loads(row.plan).get("summary") or "no summary")


def _results(results: list[dict]) -> str:
    return "API: " + json.dumps(results, separators=(",", ":"), default=str) if results else "no API call"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
