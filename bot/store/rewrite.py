"""Rewrite stored text in place, for migrations that redact what earlier versions stored.

Tables are named with SQLAlchemy Core, not the ORM models (which follow the latest schema). Rows are
read in batches by id, so a large table never sits in memory, and only rows whose text changes are
written; running it again changes nothing.
"""
from __future__ import annotations

from typing import Any, Callable

import sqlalchemy as sa

BATCH = 500


def rewrite_columns(bind: sa.Connection, name: str, columns: dict[str, Callable[[str], str]], *,
                    batch: int = BATCH) -> None:
    """Apply each column's function to every non-empty value of table ``name``."""
    ident = sa.column("id", sa.Integer)
    table = sa.table(name, ident, *(sa.column(c, sa.Text) for c in columns))
    # Every listed column is written back for a changed row (unchanged ones with their own value).
    update = sa.update(table).where(ident == sa.bindparam("row_id")).values(
        {c: sa.bindparam(f"new_{c}") for c in columns})
    last = 0
    while True:
        rows = bind.execute(sa.select(table).where(ident > last).order_by(ident).limit(batch)).mappings().all()
        if not rows:
            return
        changed = [params for params in (_rewritten(row, columns) for row in rows) if params]
        if changed:
            bind.execute(update, changed)
        last = rows[-1]["id"]


def _rewritten(row: sa.RowMapping, columns: dict[str, Callable[[str], str]]) -> dict[str, Any] | None:
    """The UPDATE parameters for ``row``, or None when every function leaves its text as it was."""
    new = {c: fn(row[c]) if row[c] else row[c] for c, fn in columns.items()}
    if all(new[c] == row[c] for c in columns):
        return None
    return {"row_id": row["id"], **{f"new_{c}": text for c, text in new.items()}}
