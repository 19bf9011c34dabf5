"""Engines for the incident store: SQLite (a local file, the default) or PostgreSQL."""
from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from bot.errors import UserError


def make_engine(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise UserError("GPUBOT_DATABASE_URL is not a database URL: use sqlite:///path/to/gpubot.db or "
                        "postgresql+psycopg://user@host/db") from None
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed, connect_args={"timeout": 10})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    if parsed.get_backend_name() == "postgresql":
        return create_engine(parsed, pool_pre_ping=True, pool_size=5, max_overflow=5,
                             connect_args={"connect_timeout": 5})
    raise UserError(f"unsupported database {parsed.get_backend_name()!r}: gpubot stores incidents in SQLite or PostgreSQL")


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
