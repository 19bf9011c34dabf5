"""Slack deliveries already taken, so a retry or a duplicate is acknowledged once and not acted on again.

The database decides, not a replica's memory: Slack may deliver a retry to another replica, and two
replicas may receive the same delivery at the same moment. The key is the table's primary key, so of
two concurrent inserts exactly one commits and the other gets a unique violation (on SQLite and
PostgreSQL alike).

Old rows are deleted by the daily retention job (bot.store.retention, GPUBOT_RETENTION_DELIVERIES), not
here: deduplication needs a row only while Slack may still retry (minutes), which the job's floor
(retention.DEDUP_WINDOW, a day) always leaves, and a delete on the delivery path would both ignore the
setting and cost the event a write it does not need."""
from __future__ import annotations

from datetime import datetime
from typing import Callable

from sqlalchemy import Connection, Engine, insert
from sqlalchemy.exc import IntegrityError

from bot.store.models import Delivery
from bot.store.tx import Transactions, utcnow

_INSERT = insert(Delivery.__table__)  # compiled once, cached by SQLAlchemy


class DeliveryStore:
    def __init__(self, engine: Engine, *, clock: Callable[[], datetime] = utcnow, attempts: int = 1) -> None:
        # One attempt by default: the caller answers Slack within 3 s, and when the database is away
        # it processes the delivery anyway rather than wait for retries.
        self._tx = Transactions(engine, attempts=attempts)
        self._clock = clock

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
        return True
