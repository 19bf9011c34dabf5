"""Several replicas' init containers run `gpubot db upgrade` at the same moment against one fresh
PostgreSQL database: every one exits 0 and the schema is migrated once."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import text

from bot.store import make_engine, migrate

ROOT = Path(__file__).resolve().parents[2]
REPLICAS = 3


def _upgrade(url: str) -> subprocess.Popen:
    env = {**os.environ, "GPUBOT_DATABASE_URL": url, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "bot.cli", "db", "upgrade"], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_concurrent_upgrades_on_postgresql_all_succeed(pg_url):
    _all_upgrade_once(pg_url)


def test_concurrent_upgrades_on_sqlite_all_succeed(tmp_path):
    _all_upgrade_once(f"sqlite:///{tmp_path}/gpubot.db")


def _all_upgrade_once(url: str) -> None:
    procs = [_upgrade(url) for _ in range(REPLICAS)]
    results = [(proc.wait(timeout=120), *proc.communicate()) for proc in procs]
    for code, out, err in results:
        assert code == 0, err
        assert f"schema at {migrate.head()}" in out
        assert "Traceback" not in err
    engine = make_engine(url)
    try:
        assert migrate.current(engine) == migrate.head()
        with engine.connect() as connection:
            # One row in alembic_version: the revision was stamped once, not once per replica.
            assert connection.execute(text("SELECT count(*) FROM alembic_version")).scalar_one() == 1
    finally:
        engine.dispose()


def test_the_migration_lock_is_released_after_an_upgrade(pg_url):
    """A second upgrade (a later rollout) does not wait on a lock the first left behind."""
    engine = make_engine(pg_url)
    try:
        assert migrate.upgrade(engine) == migrate.head()
        with engine.connect() as connection:
            held = connection.execute(text(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = "
                "(SELECT oid FROM pg_database WHERE datname = current_database())")).scalar_one()
        assert held == 0
        assert migrate.upgrade(engine) == migrate.head()
    finally:
        engine.dispose()
