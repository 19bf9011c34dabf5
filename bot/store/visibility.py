"""Which incidents (and proposals) one person may read, as a SQL condition, so a listing filters
before it limits.

The policy's own test is :meth:`bot.policy.model.Access.may_read` (case-sensitive, ``*`` the only
wildcard); the condition here selects exactly the rows it would, on SQLite and on PostgreSQL alike.
"""
from __future__ import annotations

from typing import Protocol

from sqlalchemy import ColumnElement, and_, false, or_, true

from bot.policy.model import ANY, Access, Grant, like_pattern
from bot.store.models import Incident


class Scoped(Protocol):
    """A table (or row) placed by ``cluster`` and ``namespace`` (None: cluster-scoped)."""

    cluster: str
    namespace: str | None


def readable(access: Access | None) -> bool:
    """True when ``access`` reads everything (the CLI, a bot without a policy file)."""
    return access is None or access.unrestricted


def may_read_row(access: Access | None, row: Scoped) -> bool:
    return readable(access) or access.may_read(row.cluster, row.namespace)


def visible(access: Access | None, *, dialect: str, table: type[Scoped] = Incident) -> ColumnElement[bool]:
    """The WHERE condition for rows of ``table`` that ``access`` may read; ``dialect`` is the engine's
    dialect name."""
    if readable(access):
        return true()
    return or_(false(), *(_grant(grant, dialect, table) for grant in access.grants))


def _grant(grant: Grant, dialect: str, table: type[Scoped]) -> ColumnElement[bool]:
    # A cluster-scoped row (node, NodePool: namespace NULL) follows the cluster grant alone.
    namespaces = or_(table.namespace.is_(None), _any(table.namespace, grant.namespaces, dialect))
    return and_(_any(table.cluster, grant.clusters, dialect), namespaces)


def _any(column, patterns: tuple[str, ...], dialect: str) -> ColumnElement[bool]:
    if ANY in patterns:
        return true()
    return or_(false(), *(_one(column, pattern, dialect) for pattern in patterns))


def _one(column, pattern: str, dialect: str) -> ColumnElement[bool]:
    if ANY not in pattern:
        return column == pattern  # "=" compares case-sensitively on both databases
    if dialect == "sqlite":
        # SQLite's LIKE ignores ASCII case ("Prod" would match "prod-*"); GLOB does not.
        return column.op("GLOB")(glob_pattern(pattern))
    return column.like(like_pattern(pattern), escape="\\")


def glob_pattern(pattern: str) -> str:
    """The SQLite GLOB form of a policy pattern: ``*`` stays the wildcard, ``?`` and ``[`` become literal."""
    return "".join({"?": "[?]", "[": "[[]"}.get(char, char) for char in pattern)
