"""Slack deliveries already taken, so a retry or a duplicate is acknowledged once and not acted on again.

The database decides, not a replica's memory: Slack may deliver a retry to another replica, and two
replicas may receive the same delivery at the same moment. The key is the table's primary key, so of
two concurrent inserts exactly one commits and the other gets a unique violation (on SQLite and
PostgreSQL alike)."""
from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta
from typing import Callable

from sqlalchemy import Connection, Engine, delete, insert
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session

from bot.store.models import Delivery
from bot.store.tx import StoreUnavailable, Transactions, utcnow

log = logging.getLogger(__name__)
# Slack retries an event three times within about five minutes; a day leaves a wide margin.
KEEP = timedelta(days=1)
# Old rows are deleted by every PRUNE_EVERY-th insert, so no replica needs a schedule of its own.
PRUNE_EVERY = 500
_INSERT = insert(Delivery.__table__)  # compiled once, cached by SQLAlchemy


class DeliveryStore:
    def __init__(self, engine: Engine, *, clock: Callable[[], datetime] = utcnow, attempts: int = 1,
                 prune_every: int = PRUNE_EVERY) -> None:
        # One attempt by default: the caller answers Slack within 3 s, and when the database is away
        # it processes the delivery anyway rather than wait for retries.
        self._tx = Transactions(engine, attempts=attempts)
        self._clock = clock
        self._prune_every = prune_every
        self._inserts = 0
        self._lock = threading.Lock()

    def first_time(self, key: str, *, kind: str) -> bool:
        """True if no replica has taken the delivery ``key`` before (and records it), False if one has.

        Raises StoreUnavailable or SQLAlchemyError when the database cannot say."""
        if not 0 < len(key) <= 128:
            raise ValueError(f"a delivery key is 1 to 128 characters, got {len(key)}")

        def work(connection: Connection) -> None:
            connection.execute(_INSERT, {"key": key, "kind": kind, "first_seen_at": self._clock()})

        try:
            self._tx.core(work)
        except IntegrityError:
            return False
        if self._due_for_pruning():
            self._prune_quietly()
        return True

    def prune(self, older_than: timedelta = KEEP) -> int:
        """Delete the deliveries first seen more than ``older_than`` ago; returns how many."""
        cutoff = self._clock() - older_than

        def work(session: Session) -> int:
            return session.execute(delete(Delivery).where(Delivery.first_seen_at < cutoff)).rowcount

        return self._tx(work)

    def _due_for_pruning(self) -> bool:
        with self._lock:
            self._inserts += 1
            return self._inserts % self._prune_every == 0

    def _prune_quietly(self) -> None:
        # Pruning is housekeeping: a failure here must not turn a delivery already recorded into an error.
        try:
            removed = self.prune()
        except (StoreUnavailable, SQLAlchemyError) as exc:
            log.warning("old Slack deliveries not pruned this time: %s", exc)
        else:
            log.debug("pruned %d Slack deliveries older than %s", removed, KEEP)
