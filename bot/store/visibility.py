"""Which incidents one person may read, as a SQL condition, so a listing filters before it limits.

The policy's own test is :meth:`bot.policy.model.Access.may_read` (case-sensitive, ``*`` the only
wildcard); the condition here selects exactly the rows it would, on SQLite and on PostgreSQL alike.
"""
from __future__ import annotations

from sqlalchemy import ColumnElement, and_, false, or_, true

from bot.policy.model import ANY, Access, Grant, like_pattern
from bot.store.models import Incident


def readable(access: Access | None) -> bool:
    """True when ``access`` reads everything (the CLI, a bot without a policy file)."""
    return access is None or access.unrestricted


def may_read_incident(access: Access | None, incident: Incident) -> bool:
    return readable(access) or access.may_read(incident.cluster, incident.namespace)


def visible(access: Access | None, *, dialect: str) -> ColumnElement[bool]:
    """The WHERE condition for incidents ``access`` may read; ``dialect`` is the engine's dialect name."""
    if readable(access):
        return true()
    return or_(false(), *(_grant(grant, dialect) for grant in access.grants))


def _grant(grant: Grant, dialect: str) -> ColumnElement[bool]:
    # A cluster-scoped incident (node, NodePool: namespace NULL) follows the cluster grant alone.
    namespaces = or_(Incident.namespace.is_(None), _any(Incident.namespace, grant.namespaces, dialect))
    return and_(_any(Incident.cluster, grant.clusters, dialect), namespaces)


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
