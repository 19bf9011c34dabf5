"""Alembic environment: the URL comes from the caller (bot/store/migrate.py) or GPUBOT_DATABASE_URL,
the metadata from bot/store/models.py."""
from __future__ import annotations

from alembic import context
from sqlalchemy import engine_from_config, pool

from bot.settings import load_settings
from bot.store.db import database_url
from bot.store.migrate import lock_migrations
from bot.store.models import Base

config = context.config
# postgres:// and the other spellings become postgresql+psycopg here too (`alembic` run by hand).
url = database_url(config.get_main_option("sqlalchemy.url")
                   or load_settings().database_url).render_as_string(hide_password=False)
target_metadata = Base.metadata


def run_offline() -> None:
    context.configure(url=url, target_metadata=target_metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connectable = config.attributes.get("connection")
    if connectable is None:
        engine = engine_from_config({"sqlalchemy.url": url}, prefix="sqlalchemy.", poolclass=pool.NullPool)
        with engine.connect() as connection:
            _run(connection, lock=True)
    else:
        _run(connectable, lock=False)  # bot/store/migrate.py already holds the lock on it


def _run(connection, *, lock: bool) -> None:
    # render_as_batch: SQLite alters tables by copying them; Alembic's batch mode does that for us.
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        if lock:
            lock_migrations(connection)
        context.run_migrations()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
