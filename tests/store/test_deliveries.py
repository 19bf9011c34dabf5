"""The delivery table on SQLite and on a real PostgreSQL: a delivery is taken once, however many
replicas (each with its own engine) receive it at the same moment; old rows are pruned by the retention
job, by its setting, never while Slack may still retry."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, select

from bot.store import DeliveryStore, make_engine, migrate
from bot.store.models import Base, Delivery
from bot.store.retention import Retention, prune
from tests.store.conftest import Clock


def test_a_delivery_is_taken_once(engine):
    store = DeliveryStore(engine)
    assert store.first_time("a" * 64, kind="event") is True
    assert store.first_time("a" * 64, kind="event") is False
    assert store.first_time("a" * 64, kind="command") is False  # the key decides, whatever the kind
    assert store.first_time("b" * 64, kind="event") is True


def test_eight_replicas_receiving_the_same_delivery_take_it_once(db_url, engine):
    engines = [make_engine(db_url) for _ in range(8)]
    stores = [DeliveryStore(e, attempts=4) for e in engines]
    for key in ("retry-1", "retry-2", "retry-3"):
        start = threading.Barrier(len(stores))
        answers: list[bool] = []

        def take(store: DeliveryStore) -> None:
            start.wait()
            answers.append(store.first_time(key, kind="event"))

        threads = [threading.Thread(target=take, args=(s,)) for s in stores]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert sorted(answers) == [False] * 7 + [True], key
    for e in engines:
        e.dispose()


def test_the_retention_job_prunes_deliveries_by_the_setting_and_never_within_the_dedup_window(engine):
    clock = Clock(datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc))
    store = DeliveryStore(engine, clock=clock)
    store.first_time("old", kind="event")
    clock.now += timedelta(hours=23)
    store.first_time("recent", kind="event")
    clock.now += timedelta(hours=2)
    # Inserting never deletes: only the retention job does, with GPUBOT_RETENTION_DELIVERIES.
    for n in range(3):
        store.first_time(f"k{n}", kind="event")
    with engine.connect() as conn:
        assert "old" in conn.execute(select(Delivery.key)).scalars().all()
    # A retention shorter than Slack's retries would make a retry count as new: the job keeps a day.
    minute = Retention(incidents=0, alerts=0, deliveries=60)
    assert prune(engine, minute, clock=lambda: clock.now).deliveries == 1
    with engine.connect() as conn:
        assert sorted(conn.execute(select(Delivery.key)).scalars()) == ["k0", "k1", "k2", "recent"]
    assert store.first_time("recent", kind="event") is False  # within the window: still a duplicate
    assert store.first_time("old", kind="event") is True  # forgotten, so a very late duplicate counts as new
    assert prune(engine, Retention(incidents=0, alerts=0, deliveries=0), clock=lambda: clock.now + timedelta(days=400)) \
        .deliveries == 0  # 0 keeps them forever


def test_a_key_longer_than_the_column_is_refused(engine):
    with pytest.raises(ValueError, match="1 to 128"):
        DeliveryStore(engine).first_time("x" * 129, kind="event")


def test_migration_0005_adds_and_drops_the_table(db_url):
    engine = make_engine(db_url)
    try:
        assert migrate.upgrade(engine, "0004") == "0004"
        assert "deliveries" not in inspect(engine).get_table_names()
        assert migrate.upgrade(engine, "0005") == "0005"
        with engine.connect() as conn:  # the ORM model says what the migration made, column for column
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        assert [d for d in diff if "deliveries" in repr(d)] == []
        assert migrate.downgrade(engine, "0004") == "0004"
        assert "deliveries" not in inspect(engine).get_table_names()
        assert migrate.upgrade(engine) == migrate.head()
    finally:
        engine.dispose()
