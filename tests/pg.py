"""PostgreSQL for the tests (not a test module).

``make test`` runs pytest through ``scripts/with-postgres.sh``, which starts a throwaway server and
sets ``GPUBOT_TEST_POSTGRES_URL`` (a SQLAlchemy URL such as
``postgresql+psycopg://postgres@127.0.0.1:5432/gpubot_test``). Developers may point it at a server of
their own instead. The helpers here create and drop one database per test on that server.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import os
import secrets
from typing import Any

ENV_VAR = "GPUBOT_TEST_POSTGRES_URL"
HINT = "run the suite with `make test`, which starts PostgreSQL"


def postgres_url() -> str | None:
    """The SQLAlchemy URL of the test server's admin database, or None when no server was given."""
    url = os.environ.get(ENV_VAR, "").strip()
    return url or None


def in_ci() -> bool:
    """True when the CI environment variable is set (to anything but an explicit false)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _connect_kwargs(sqlalchemy_url: str) -> dict[str, Any]:
    from sqlalchemy.engine import make_url

    url = make_url(sqlalchemy_url)
    if url.get_backend_name() != "postgresql":
        raise ValueError(f"{ENV_VAR} must be a postgresql URL, got {url.render_as_string()}")
    kwargs: dict[str, Any] = url.translate_connect_args(username="user", database="dbname")
    kwargs.update({key: value for key, value in url.query.items() if isinstance(value, str)})
    return kwargs


def admin_connect(admin_url: str):
    """An autocommit psycopg connection to the admin database (CREATE/DROP DATABASE need one)."""
    import psycopg

    return psycopg.connect(**_connect_kwargs(admin_url), autocommit=True, connect_timeout=10)


def with_database(sqlalchemy_url: str, name: str) -> str:
    """``sqlalchemy_url`` with its database replaced by ``name`` (password kept)."""
    from sqlalchemy.engine import make_url

    return make_url(sqlalchemy_url).set(database=name).render_as_string(hide_password=False)


def create_database(admin_url: str) -> str:
    """Create a fresh, empty database ``test_<random>``; return its name."""
    from psycopg import sql

    name = f"test_{secrets.token_hex(6)}"
    with admin_connect(admin_url) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return name


def drop_database(admin_url: str, name: str) -> None:
    """Drop database ``name``, first ending any session still connected to it (a test's pool)."""
    from psycopg import sql

    with admin_connect(admin_url) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )
        force = sql.SQL(" WITH (FORCE)") if conn.info.server_version >= 130000 else sql.SQL("")
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}{}").format(sql.Identifier(name), force))


def database_exists(admin_url: str, name: str) -> bool:
    with admin_connect(admin_url) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None


@contextlib.contextmanager
def fresh_database() -> Iterator[str]:
    """A new, empty database on the test server, dropped afterwards. Without a server the test
    fails under CI (the store tests must run there) and is skipped for a developer's plain pytest."""
    import pytest

    admin_url = postgres_url()
    if admin_url is None:
        message = f"{ENV_VAR} is not set: {HINT}"
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    name = create_database(admin_url)
    try:
        yield with_database(admin_url, name)
    finally:
        drop_database(admin_url, name)
