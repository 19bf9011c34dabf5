"""Engines for the incident store: SQLite (a local file, the default) or PostgreSQL."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import URL, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, InterfaceError, OperationalError

from bot.errors import DatabaseUnreachable, UserError

_FORMS = "sqlite:///path/to/gpubot.db or postgresql://user:password@host:5432/gpubot"
# Schemes that name PostgreSQL: libpq and most secrets (Heroku, RDS consoles, Bitnami charts) write
# postgres://; SQLAlchemy's own name is postgresql. All of them are driven by psycopg 3, the one
# PostgreSQL driver gpubot installs.
_POSTGRES = {"postgres", "postgresql", "postgres+psycopg", "postgresql+psycopg"}
_SQLITE = {"sqlite", "sqlite+pysqlite"}
# What a refused connection says, shortened to the words an operator acts on (psycopg / libpq and
# sqlite3 messages; the host and port are already in our line).
_REASONS = (
    ("connection refused", "connection refused"),
    ("timeout expired", "timed out"),
    ("could not translate host name", "unknown host"),
    ("name or service not known", "unknown host"),
    ("password authentication failed", "password authentication failed"),
    ("no password supplied", "no password supplied"),
    ("no pg_hba.conf entry", "the server's pg_hba.conf refuses this client"),
    ("unable to open database file", "cannot open the file"),
    ("server closed the connection", "the server closed the connection"),
)


def database_url(url: str) -> URL:
    """``url`` as SQLAlchemy should use it: every PostgreSQL spelling becomes postgresql+psycopg; any
    other scheme is refused in one line."""
    try:
        parsed = make_url(url.strip())
    except ArgumentError:
        raise UserError(f"GPUBOT_DATABASE_URL is not a database URL: use {_FORMS}") from None
    scheme = parsed.drivername.lower()
    if scheme in _POSTGRES:
        return parsed.set(drivername="postgresql+psycopg")
    if scheme in _SQLITE:
        return parsed
    raise UserError(f"GPUBOT_DATABASE_URL has scheme {scheme!r}, which gpubot does not use: gpubot stores "
                    f"incidents in SQLite or PostgreSQL ({_FORMS})")


def where(url: URL) -> str:
    """Where the database is, for messages: scheme, host, port and database, never the user or password."""
    if url.get_backend_name() == "sqlite":
        return f"sqlite:///{url.database or ''}"
    return f"postgresql://{url.host or 'localhost'}:{url.port or 5432}/{url.database or ''}"


@contextlib.contextmanager
def reaching(engine: Engine) -> Iterator[None]:
    """Turn a failure to connect into one line naming the database and the setting (exit 3)."""
    try:
        yield
    except (OperationalError, InterfaceError) as exc:
        raise DatabaseUnreachable(where(engine.url), unreachable_reason(exc)) from None


def unreachable_reason(exc: DBAPIError) -> str:
    text = str(exc.orig if exc.orig is not None else exc)
    lowered = text.lower()
    for marker, reason in _REASONS:
        if marker in lowered:
            return reason
    if "FATAL:" in text:  # libpq: 'connection to server at "h", port 5432 failed: FATAL:  database "x" does not exist'
        text = text.rsplit("FATAL:", 1)[1]
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    return " ".join(first.split())[:160]


def make_engine(url: str) -> Engine:
    parsed = database_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed, connect_args={"timeout": 10})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    return create_engine(parsed, pool_pre_ping=True, pool_size=5, max_overflow=5,
                         connect_args={"connect_timeout": 5})


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    # pysqlite would run our SELECT ... before opening a transaction, so two writers could read the
    # same row and both update it (lost updates). Take over transaction control instead ...
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    # WAL lets the bot read while another process writes; foreign keys cascade deletes of incidents.
    cursor.execute("PRAGMA journal_mode=WAL")
    # In WAL mode NORMAL keeps the file consistent and drops only the fsync of each commit (a power cut
    # may lose the last commits, never corrupt): acks record each Slack delivery on this path.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def _sqlite_begin(connection) -> None:
    # ... and begin every transaction IMMEDIATE: writers queue on the file lock (busy_timeout) and
    # each sees the previous one's commit.
    connection.exec_driver_sql("BEGIN IMMEDIATE")
