"""Transactions for the stores: one unit of work per transaction, transient database errors retried
with backoff, and StoreUnavailable when the database stays down, so callers answer without it."""
from __future__ import annotations

import logging
import time
from datetime import datetime, timezone
from typing import Any, Callable, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from bot.errors import GpubotError
from bot.metrics import count_database_error

log = logging.getLogger(__name__)
T = TypeVar("T")
_TRANSIENT = ("database is locked", "could not connect", "connection refused", "server closed the connection",
              "terminating connection", "connection reset", "timeout expired", "could not serialize", "deadlock detected")


# What people are told (in Slack, on App Home, by the CLI): never the database's host, port or driver
# text, which name the infrastructure to any member; those go to gpubot's log, where operators look.
STORE_UNAVAILABLE = ("the incident store is unavailable (its database did not answer): try again in a few "
                     "minutes; gpubot's operators find the cause in its log")


class StoreUnavailable(GpubotError):
    exit_code = 3

    def __init__(self, message: str = STORE_UNAVAILABLE) -> None:
        super().__init__(message)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def aware(value):
    # SQLite returns naive datetimes for timezone-aware columns: they were written in UTC.
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value


class Transactions:
    """``tx(work)`` runs ``work(session)`` in one transaction and returns what it returns.

    The whole unit is retried on a transient error, so ``work`` must not act outside the database."""

    def __init__(self, engine: Engine, *, attempts: int = 4, backoff: float = 0.05) -> None:
        self._engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self._attempts = attempts
        self._backoff = backoff

    def __call__(self, work: Callable[[Session], T]) -> T:
        return self._retried(self._sessions.begin, work)

    def core(self, work: Callable[[Connection], T]) -> T:
        """``work(connection)`` in one transaction without an ORM session: a single statement on a hot
        path (a Slack ack) costs a third of the time this way."""
        return self._retried(self._engine.begin, work)

    def _retried(self, begin: Callable[[], Any], work: Callable[[Any], T]) -> T:
        for attempt in range(self._attempts):
            try:
                with begin() as unit:
                    return work(unit)
            except (OperationalError, DBAPIError) as exc:
                if isinstance(exc, IntegrityError):
                    raise
                if not transient(exc):
                    if isinstance(exc, OperationalError):  # refused login, unknown host, missing database
                        log.error("the incident database cannot be used: %s", short(exc))
                        count_database_error("unavailable")
                        raise StoreUnavailable() from None
                    raise
                if attempt + 1 == self._attempts:
                    log.error("the incident database did not answer after %d attempts: %s", self._attempts, short(exc))
                    count_database_error("unavailable")
                    raise StoreUnavailable() from None
                log.warning("transient database error, retrying: %s", short(exc))
                count_database_error("transient")
                time.sleep(self._backoff * (2**attempt))
        raise AssertionError("unreachable")


def transient(exc: DBAPIError) -> bool:
    if exc.connection_invalidated:
        return True
    text = str(exc.orig if exc.orig is not None else exc).lower()
    return any(marker in text for marker in _TRANSIENT)


def short(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc)
    return " ".join(text.split())[:200]


class ClockedStore:
    """A store's transactions and its clock, always read in UTC: SQLite compares stored timestamps as
    text, so every one must be written in the same zone."""

    def __init__(self, engine: Engine, *, clock: Callable[[], datetime] = utcnow, attempts: int = 4,
                 backoff: float = 0.05) -> None:
        self.engine = engine
        self._tx = Transactions(engine, attempts=attempts, backoff=backoff)
        self._clock = clock

    def _now(self) -> datetime:
        return self._clock().astimezone(timezone.utc)
