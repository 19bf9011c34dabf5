"""The ``db_url`` fixture (tests/store_fixtures.py) gives each test an empty database of its own on
SQLite and on PostgreSQL, and the PostgreSQL variant is never silently skipped under CI."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, inspect, make_url, select, text

from tests import pg

REPO = Path(__file__).resolve().parent.parent

# Databases handed out so far in this run, per backend: each test must get one never seen before.
_SEEN: dict[str, list[str]] = {"sqlite": [], "postgresql": []}


def _backend(db_url: str) -> str:
    return make_url(db_url).get_backend_name()


def test_roundtrip_with_sqlalchemy(db_url):
    engine = create_engine(db_url)
    try:
        metadata = MetaData()
        incidents = Table(
            "fixture_incidents", metadata,
            Column("id", Integer, primary_key=True),
            Column("title", String(200), nullable=False),
        )
        metadata.create_all(engine)
        with engine.begin() as conn:
            conn.execute(incidents.insert(), [{"title": "pending pod"}, {"title": "nccl timeout"}])
        with engine.connect() as conn:
            titles = conn.execute(select(incidents.c.title).order_by(incidents.c.id)).scalars().all()
            assert titles == ["pending pod", "nccl timeout"]
            if _backend(db_url) == "postgresql":
                version = int(conn.execute(text("SHOW server_version_num")).scalar_one())
                assert version >= 150000, f"PostgreSQL 15 or later expected, server is {version}"
                assert conn.execute(text("SELECT current_database()")).scalar_one().startswith("test_")
    finally:
        engine.dispose()


def _claim_fresh_database(db_url: str) -> None:
    """Assert the database is empty and new to this run, then leave a table in it."""
    backend = _backend(db_url)
    engine = create_engine(db_url)
    try:
        assert inspect(engine).get_table_names() == [], "the database handed out is not empty"
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE fixture_marker (id INTEGER PRIMARY KEY)"))
            if backend == "postgresql":
                identity = conn.execute(text("SELECT current_database()")).scalar_one()
            else:
                identity = make_url(db_url).database
    finally:
        engine.dispose()
    assert identity not in _SEEN[backend], f"{identity} was already handed to another test"
    if backend == "postgresql":
        # Databases of earlier tests were dropped when those tests ended.
        admin_url = pg.postgres_url()
        assert admin_url is not None
        for earlier in _SEEN[backend]:
            assert not pg.database_exists(admin_url, earlier), f"{earlier} was not dropped"
    _SEEN[backend].append(identity)


def test_each_test_gets_its_own_database_a(db_url):
    _claim_fresh_database(db_url)


def test_each_test_gets_its_own_database_b(db_url):
    _claim_fresh_database(db_url)


def _run_fixture_in_child(env_overrides: dict[str, str | None]) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    for key, value in env_overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         "tests/test_postgres_fixture.py::test_roundtrip_with_sqlalchemy[postgresql]"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )


def test_without_server_fails_under_ci():
    result = _run_fixture_in_child({pg.ENV_VAR: None, "CI": "true"})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 error" in result.stdout  # pytest.fail in a fixture: an error at set-up
    assert pg.HINT in result.stdout


def test_without_server_skips_outside_ci():
    result = _run_fixture_in_child({pg.ENV_VAR: None, "CI": None})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 skipped" in result.stdout
    assert pg.HINT in result.stdout
