"""Schema changes only through Alembic: upgrade, downgrade, and the start-up check."""
from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection, Engine, text

from bot.errors import GpubotError, UserError
from bot.store.db import reaching, where

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"
# The advisory lock every `gpubot db upgrade` takes on PostgreSQL: a fixed 64-bit key (the first eight
# bytes of sha256("gpubot-migrations"), taken as a signed bigint) so no other application's lock collides.
MIGRATION_LOCK_KEY = 0xAFE1_2F20_C281_03FA


class SchemaBehind(GpubotError):
    exit_code = 3


def _config(engine: Engine) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return cfg


def head() -> str:
    return ScriptDirectory(str(MIGRATIONS)).get_current_head()


def current(engine: Engine) -> str | None:
    with reaching(engine), engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> str | None:
    _run(command.upgrade, engine, revision)
    return current(engine)


def downgrade(engine: Engine, revision: str) -> str | None:
    _run(command.downgrade, engine, revision)
    return current(engine)


def _run(fn, engine: Engine, revision: str) -> None:
    cfg = _config(engine)
    with reaching(engine):  # only connecting: an error inside a migration is its own, not "unreachable"
        connection = engine.connect()
    try:
        with connection, connection.begin():
            lock_migrations(connection)
            cfg.attributes["connection"] = connection
            fn(cfg, revision)
    except CommandError as exc:
        raise UserError(f"cannot migrate to {revision!r}: {exc}") from None


def lock_migrations(connection: Connection) -> None:
    """Serialise migrations across processes: two replicas' init containers upgrading one fresh
    PostgreSQL database at once would both create alembic_version and one would fail on a unique
    violation. The transaction-level lock waits for the other upgrade to commit, then Alembic reads the
    revision it left and has nothing more to do; it is released at commit or rollback, so a killed
    migration never leaves it held (https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS).

    SQLite needs none: every transaction begins IMMEDIATE (bot/store/db.py), which takes the file's
    write lock, so a second upgrade waits on busy_timeout and then finds the schema at head."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _signed64(MIGRATION_LOCK_KEY)})


def _signed64(key: int) -> int:
    return key - (1 << 64) if key >= 1 << 63 else key


def check_current(engine: Engine) -> None:
    """Refuse to run on a schema that is behind (or unknown): say which command fixes it."""
    have, want = current(engine), head()
    if have != want:
        raise SchemaBehind(
            f"the incident database {where(engine.url)} is at schema {have or 'none (empty)'}, gpubot needs {want}: "
            f"run `gpubot db upgrade`"
        )
