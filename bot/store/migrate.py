"""Schema changes only through Alembic: upgrade, downgrade, and the start-up check."""
from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Engine

from bot.errors import GpubotError, UserError

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


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
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> str | None:
    _run(command.upgrade, engine, revision)
    return current(engine)


def downgrade(engine: Engine, revision: str) -> str | None:
    _run(command.downgrade, engine, revision)
    return current(engine)


def _run(fn, engine: Engine, revision: str) -> None:
    cfg = _config(engine)
    try:
        with engine.begin() as connection:
            cfg.attributes["connection"] = connection
            fn(cfg, revision)
    except CommandError as exc:
        raise UserError(f"cannot migrate to {revision!r}: {exc}") from None


def check_current(engine: Engine) -> None:
    """Refuse to run on a schema that is behind (or unknown): say which command fixes it."""
    have, want = current(engine), head()
    if have != want:
        where = engine.url.render_as_string(hide_password=True)
        raise SchemaBehind(
            f"the incident database {where} is at schema {have or 'none (empty)'}, gpubot needs {want}: "
            f"run `gpubot db upgrade`"
        )
