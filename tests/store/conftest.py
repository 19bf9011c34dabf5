"""Fixtures the store tests share: a migrated database on each backend and a clock they move."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from bot.store import make_engine, migrate


class Clock:
    """Now, as far as a store under test knows: set ``now`` to move time."""

    def __init__(self, now: datetime = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def engine(db_url):
    """A database at the latest schema, on SQLite and on PostgreSQL (``db_url``)."""
    engine = make_engine(db_url)
    migrate.upgrade(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def clock():
    return Clock()
