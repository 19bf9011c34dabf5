"""Alertmanager's webhook bodies, kept in the database between the 202 and their handling.

The webhook answers as soon as the body is stored (``put``: one INSERT), so nothing that takes time (a
sweep, a diagnosis, Slack's rate limits) can make Alertmanager time out and send it again. A consumer on
any replica then ``claim``s stored bodies: on PostgreSQL with ``SELECT ... FOR UPDATE SKIP LOCKED``, so
replicas never wait on each other's rows; on SQLite every write transaction is ``BEGIN IMMEDIATE``
(bot.store.db), so the guarded UPDATE of ``claimed_at`` alone decides. A claim older than CLAIM_FOR
(a replica died while handling) is taken over. ``dedupe_key`` is unique: the same notification sent
again (Alertmanager's retry after a lost answer) is recognised and changes nothing.

What waits is bounded: ``put`` refuses a new body (``InboxFull``) once the unhandled ones number
``max_rows`` or the new one would take their bytes past ``max_bytes``, so a holder of the webhook token
can make the inbox wait, not grow. An empty inbox takes one body whatever its size: a byte cap below
the webhook's largest body must not refuse that body for ever. The count and the insert are one transaction, and on PostgreSQL an
advisory lock makes replicas take turns at it (SQLite's ``BEGIN IMMEDIATE`` already does), so no two
puts both find the last free place.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, delete, func, or_, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from bot.store.models import WebhookPayload
from bot.store.tx import ClockedStore, aware

CLAIM_FOR = timedelta(minutes=5)
# Handling a body that keeps failing is given up after this many tries (the error stays on the row),
# each tried again RETRY_AFTER x its tries later (Slack or the database back by then, or not).
MAX_ATTEMPTS = 5
RETRY_AFTER = timedelta(seconds=30)
# Defaults of GPUBOT_ALERTMANAGER_INBOX_ROWS / _BYTES (bot.settings): room for every group of a large
# outage while Slack is away, far from what a full database disk would be.
MAX_ROWS = 500
MAX_BYTES = 32 * 1024 * 1024
# pg_advisory_xact_lock's key for "counting and filling the inbox"; any constant no other lock uses.
_FILL_LOCK = 0x67707562_6f740001


class InboxFull(Exception):
    """The unhandled bodies are at the cap: nothing was stored, the sender should try again later."""

    def __init__(self, *, rows: int, size: int, max_rows: int, max_bytes: int) -> None:
        super().__init__(f"{rows} Alertmanager bodies ({size:,} bytes) wait to be handled; the inbox holds "
                         f"at most {max_rows} or {max_bytes:,} bytes")
        self.rows = rows
        self.size = size


@dataclass(frozen=True)
class Stored:
    id: int
    body: bytes
    attempts: int
    received_at: datetime


class WebhookStore(ClockedStore):
    def __init__(self, engine, *, max_rows: int = MAX_ROWS, max_bytes: int = MAX_BYTES, **kwargs) -> None:
        super().__init__(engine, **kwargs)
        self.max_rows = max_rows
        self.max_bytes = max_bytes

    def put(self, body: bytes, *, dedupe_key: str, alerts: int) -> bool:
        """Store ``body``; False when a body with ``dedupe_key`` was stored before (nothing is written).

        Raises InboxFull when the unhandled bodies have no room for it: a body stored before is still
        answered False, so a resend of what got in is never refused."""
        def work(session: Session) -> bool:
            if session.scalar(select(WebhookPayload.id).where(WebhookPayload.dedupe_key == dedupe_key)) is not None:
                return False
            self._make_room(session, len(body))
            try:
                with session.begin_nested():
                    session.add(WebhookPayload(dedupe_key=dedupe_key, body=body.decode("utf-8"), alerts=alerts,
                                               body_bytes=len(body), received_at=self._now(), attempts=0))
            except IntegrityError:
                return False  # the same retry stored by another replica a moment ago
            return True
        return self._tx(work)

    def _make_room(self, session: Session, size: int) -> None:
        if session.get_bind().dialect.name == "postgresql":
            session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _FILL_LOCK})
        rows, stored = session.execute(
            select(func.count(), func.coalesce(func.sum(WebhookPayload.body_bytes), 0))
            .where(WebhookPayload.handled_at.is_(None))).one()
        if rows >= self.max_rows or (rows and stored + size > self.max_bytes):
            raise InboxFull(rows=rows, size=stored, max_rows=self.max_rows, max_bytes=self.max_bytes)

    def claim(self, *, owner: str, limit: int = 10) -> list[Stored]:
        """Up to ``limit`` stored bodies nobody is handling, oldest first, now claimed by ``owner``."""
        def work(session: Session) -> list[Stored]:
            now = self._now()
            free = and_(WebhookPayload.handled_at.is_(None), or_(WebhookPayload.claimed_at.is_(None),
                                                                 WebhookPayload.claimed_at < now - CLAIM_FOR))
            ids = session.scalars(select(WebhookPayload.id).where(free).order_by(WebhookPayload.id).limit(limit)
                                  .with_for_update(skip_locked=True)).all()
            if not ids:
                return []
            session.execute(update(WebhookPayload).where(WebhookPayload.id.in_(ids), free)
                            .values(claimed_by=owner, claimed_at=now, attempts=WebhookPayload.attempts + 1)
                            .execution_options(synchronize_session=False))
            rows = session.scalars(select(WebhookPayload).where(WebhookPayload.id.in_(ids),
                                                                WebhookPayload.claimed_by == owner,
                                                                WebhookPayload.claimed_at == now)
                                   .order_by(WebhookPayload.id)).all()
            return [Stored(id=r.id, body=(r.body or "").encode("utf-8"), attempts=r.attempts,
                           received_at=aware(r.received_at)) for r in rows]
        return self._tx(work)

    def handled(self, payload_id: int, *, owner: str) -> None:
        """Done: the body is emptied (the alerts it held are in the alert store, redacted)."""
        self._finish(payload_id, owner=owner, error=None)

    def failed(self, payload_id: int, *, owner: str, error: str, attempts: int) -> None:
        """Handling failed: the body is tried again after RETRY_AFTER x ``attempts`` (by any replica), or,
        after MAX_ATTEMPTS, given up with ``error`` kept."""
        if attempts >= MAX_ATTEMPTS:
            self._finish(payload_id, owner=owner, error=error)
            return

        def work(session: Session) -> None:
            session.execute(update(WebhookPayload).where(WebhookPayload.id == payload_id,
                                                         WebhookPayload.claimed_by == owner)
                            # free once claimed_at is CLAIM_FOR old: the backoff from now on
                            .values(claimed_by=None, claimed_at=self._now() - CLAIM_FOR + RETRY_AFTER * attempts,
                                    error=error[:1000])
                            .execution_options(synchronize_session=False))
        self._tx(work)

    def _finish(self, payload_id: int, *, owner: str, error: str | None) -> None:
        def work(session: Session) -> None:
            session.execute(update(WebhookPayload).where(WebhookPayload.id == payload_id,
                                                         WebhookPayload.claimed_by == owner)
                            .values(handled_at=self._now(), body=None, error=error and error[:1000])
                            .execution_options(synchronize_session=False))
        self._tx(work)

    def pending(self) -> int:
        """Bodies stored and not handled yet."""
        return self._tx(lambda session: len(session.scalars(
            select(WebhookPayload.id).where(WebhookPayload.handled_at.is_(None))).all()))

    def forget(self, *, before: datetime) -> int:
        """Delete handled rows (their dedupe keys) older than ``before``: a retry comes within minutes.
        The daily retention job (bot.store.retention) does this with GPUBOT_RETENTION_DELIVERIES."""
        def work(session: Session) -> int:
            return session.execute(delete(WebhookPayload).where(forgettable(before))).rowcount or 0
        return self._tx(work)


def forgettable(before: datetime) -> ColumnElement[bool]:
    """Rows handled (or given up) before ``before``; a body not handled yet is kept however old."""
    return and_(WebhookPayload.handled_at.is_not(None), WebhookPayload.handled_at < before)
