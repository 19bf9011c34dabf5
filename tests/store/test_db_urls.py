"""GPUBOT_DATABASE_URL in every spelling a secret holds it: postgres://, postgresql:// and
postgresql+psycopg:// all reach the same PostgreSQL; any other scheme is one line and exit 2."""
from __future__ import annotations

import pytest
from sqlalchemy.engine import make_url

from bot.errors import UserError
from bot.store import make_engine, migrate
from bot.store.db import database_url, where

SPELLINGS = ["postgres", "postgresql", "postgres+psycopg", "postgresql+psycopg"]


@pytest.mark.parametrize("scheme", SPELLINGS)
def test_every_postgresql_spelling_becomes_psycopg(scheme):
    url = database_url(f"{scheme}://gpubot:pw@db.internal:6432/gpubot?sslmode=require")
    assert url.drivername == "postgresql+psycopg"
    assert (url.host, url.port, url.database, url.password) == ("db.internal", 6432, "gpubot", "pw")
    assert url.query == {"sslmode": "require"}


@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
def test_a_plain_scheme_reaches_the_real_server_and_migrates(pg_url, scheme):
    plain = make_url(pg_url).set(drivername=scheme).render_as_string(hide_password=False)
    engine = make_engine(plain)
    try:
        assert engine.url.drivername == "postgresql+psycopg"
        assert migrate.upgrade(engine) == migrate.head()
    finally:
        engine.dispose()


def test_sqlite_is_kept_as_it_is(tmp_path):
    assert database_url(f"sqlite:///{tmp_path}/gpubot.db").drivername == "sqlite"


@pytest.mark.parametrize("url", ["mysql://root@db/gpubot", "postgresql+psycopg2://u@db/gpubot",
                                 "mongodb://db/gpubot", "not a url"])
def test_an_unknown_scheme_is_one_line_naming_the_setting(url):
    with pytest.raises(UserError) as raised:
        database_url(url)
    message = str(raised.value)
    assert "GPUBOT_DATABASE_URL" in message and "\n" not in message
    assert "postgresql://" in message  # says what to write instead


def test_the_cli_refuses_an_unknown_scheme_with_exit_2(cli, monkeypatch):
    monkeypatch.setenv("GPUBOT_DATABASE_URL", "mysql://root:hunter2@db/gpubot")
    result = cli("db", "current")
    assert result.code == 2
    assert result.err.startswith("gpubot: GPUBOT_DATABASE_URL has scheme 'mysql'")
    assert len(result.err.strip().splitlines()) == 1 and "hunter2" not in result.err


def test_where_never_names_the_user_or_password():
    shown = where(database_url("postgres://admin:s3cret@db.internal/gpubot"))
    assert shown == "postgresql://db.internal:5432/gpubot"
