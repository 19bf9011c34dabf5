"""How long the store keeps what is over: resolved incidents, resolved alerts, and deliveries (Slack's
events and actions, Alertmanager's handled webhook bodies).

Only what is finished ages out. An incident still open or acknowledged, and an alert still firing, are
kept however old they are (a GPU node broken for four months is still news); an alert message (group)
goes once the last of its alerts has. Deleting an incident takes its diagnosis runs, findings and
timeline with it (ON DELETE CASCADE); alerts and proposals that named it keep their rows, unlinked
(ON DELETE SET NULL). A retention of 0 keeps that kind forever.

Delivery rows are what makes a retry a no-op (bot.store.deliveries, bot.store.webhooks' dedupe keys):
whatever the setting, none younger than DEDUP_WINDOW is deleted, so a retry still finds its row.

Every replica may run this at once (the leader does it daily, an operator runs `gpubot db prune`):
deleting by age is idempotent, so no lock is needed.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from sqlalchemy import Connection, ColumnElement, Engine, and_, delete, exists, func, not_, select

from bot.store.models import Alert, AlertGroup, Delivery, Incident, WebhookPayload
from bot.store.tx import Transactions, utcnow
from bot.store.webhooks import forgettable

log = logging.getLogger(__name__)
DAY = 86400.0
# The settings' defaults (GPUBOT_RETENTION_*), for a Settings object that predates the fields.
DEFAULTS = {"retention_incidents": 90 * DAY, "retention_alerts": 90 * DAY, "retention_deliveries": 14 * DAY}
# Slack retries an event three times within about five minutes (api.slack.com/apis/events-api "Retries");
# Alertmanager retries a webhook it got no answer from within the notification's group_interval (5m by
# default, notify/notify.go RetryStage). A day leaves a wide margin over both.
DEDUP_WINDOW = DAY


@dataclass(frozen=True)
class Pruned:
    incidents: int
    alerts: int
    alert_groups: int
    deliveries: int
    webhooks: int = 0  # Alertmanager webhook bodies handled (or given up) and kept only for their dedupe key


@dataclass(frozen=True)
class Retention:
    """Seconds to keep each kind after it is over (0: forever)."""

    incidents: float
    alerts: float
    deliveries: float

    @classmethod
    def from_settings(cls, settings: Any) -> "Retention":
        return cls(*(float(getattr(settings, name, default)) for name, default in DEFAULTS.items()))

    def describe(self) -> str:
        return (f"resolved incidents kept {keeps(self.incidents)}, resolved alerts {keeps(self.alerts)}, "
                f"Slack and Alertmanager deliveries {keeps(self.deliveries)}")


def prune(engine: Engine, retention: Retention, *, dry_run: bool = False,
          clock: Callable[[], datetime] = utcnow) -> Pruned:
    """Delete (or with ``dry_run`` only count) what ``retention`` no longer keeps, in one transaction."""
    now = clock().astimezone(timezone.utc)

    def cutoff(seconds: float) -> datetime | None:
        return now - timedelta(seconds=seconds) if seconds > 0 else None

    incidents_before, alerts_before = cutoff(retention.incidents), cutoff(retention.alerts)
    # A delivery row younger than the dedup window is what turns a retry into a no-op: kept whatever the setting.
    deliveries_before = cutoff(max(retention.deliveries, DEDUP_WINDOW)) if retention.deliveries > 0 else None

    def work(connection: Connection) -> Pruned:
        def apply(model: Any, where: ColumnElement[bool] | None) -> int:
            if where is None:
                return 0
            if dry_run:
                return connection.execute(select(func.count()).select_from(model).where(where)).scalar_one()
            return connection.execute(delete(model).where(where)).rowcount

        alerts = apply(Alert, _alert_over(alerts_before))
        # After the alerts: a group goes once none of its alerts is left (in a dry run: would be left).
        groups = apply(AlertGroup, _group_over(alerts_before, counting=dry_run))
        return Pruned(incidents=apply(Incident, _incident_over(incidents_before)), alerts=alerts,
                      alert_groups=groups, deliveries=apply(Delivery, _delivery_over(deliveries_before)),
                      webhooks=apply(WebhookPayload, None if deliveries_before is None else forgettable(deliveries_before)))

    return Transactions(engine).core(work)


def _incident_over(before: datetime | None) -> ColumnElement[bool] | None:
    if before is None:
        return None
    return and_(Incident.status == "resolved", func.coalesce(Incident.resolved_at, Incident.updated_at) < before)


def _alert_over(before: datetime | None) -> ColumnElement[bool] | None:
    if before is None:
        return None
    return and_(Alert.status == "resolved", func.coalesce(Alert.resolved_at, Alert.last_seen) < before)


def _group_over(before: datetime | None, *, counting: bool) -> ColumnElement[bool] | None:
    if before is None:
        return None
    remaining = Alert.group_id == AlertGroup.id
    if counting:  # the alerts are still there: those that would stay are the ones that count
        remaining = and_(remaining, not_(_alert_over(before)))
    return and_(AlertGroup.status == "resolved",
                func.coalesce(AlertGroup.resolved_at, AlertGroup.last_seen) < before,
                ~exists(select(Alert.id).where(remaining)))


def _delivery_over(before: datetime | None) -> ColumnElement[bool] | None:
    return None if before is None else Delivery.first_seen_at < before


def keeps(seconds: float) -> str:
    """``90 * DAY`` -> 'for 90d'; 0 -> 'forever'."""
    if seconds <= 0:
        return "forever"
    for unit, size in (("d", DAY), ("h", 3600.0), ("m", 60.0)):
        if seconds >= size and seconds % size == 0:
            return f"for {int(seconds // size)}{unit}"
    return f"for {seconds:g}s"


def prune_logged(engine: Engine, settings: Any) -> Pruned | None:
    """The daily run inside `gpubot serve`: housekeeping, so a database that does not answer is logged
    and tried again next time, never raised into the scheduler."""
    from sqlalchemy.exc import SQLAlchemyError

    from bot.store.tx import StoreUnavailable

    policy = Retention.from_settings(settings)
    try:
        pruned = prune(engine, policy)
    except (StoreUnavailable, SQLAlchemyError) as exc:
        log.warning("gpubot: retention: nothing pruned this time: %s", exc)
        return None
    log.info("gpubot: retention: pruned %d incidents, %d alerts (%d alert messages), %d Slack deliveries, "
             "%d Alertmanager webhooks (%s)", pruned.incidents, pruned.alerts, pruned.alert_groups,
             pruned.deliveries, pruned.webhooks, policy.describe())
    return pruned
