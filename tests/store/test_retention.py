"""Retention on SQLite and PostgreSQL: what is over and older than its setting goes, what is still open
or firing (or an Alertmanager body not handled yet) stays whatever its age, 0 keeps forever, and a dry run
counts without deleting."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import func, insert, select

from bot.store.models import Alert, AlertGroup, Delivery, DiagnosisRun, Incident, TimelineEntry, WebhookPayload
from bot.store.retention import DAY, Pruned, Retention, prune

NOW = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
POLICY = Retention(incidents=90 * DAY, alerts=30 * DAY, deliveries=14 * DAY)


def _ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


def _incident(connection, name: str, *, status: str, updated_days_ago: float) -> int:
    at = _ago(updated_days_ago)
    incident_id = connection.execute(insert(Incident).values(
        fingerprint=name, cluster="prod", namespace="ml", target_kind="pod", target_name=name, code="gpu.xid",
        status=status, severity="critical", title=f"{name} failed", occurrences=1, opened_at=at - timedelta(days=1),
        updated_at=at, resolved_at=at if status == "resolved" else None)).inserted_primary_key[0]
    connection.execute(insert(TimelineEntry).values(incident_id=incident_id, at=at, kind="diagnosis", actor="sweep",
                                                    detail=""))
    connection.execute(insert(DiagnosisRun).values(incident_id=incident_id, at=at, actor="sweep", source="sweep",
                                                   summary="xid 79"))
    return incident_id


def _group(connection, key: str, *, status: str, days_ago: float) -> int:
    at = _ago(days_ago)
    return connection.execute(insert(AlertGroup).values(
        group_key=key, source="sweep", cluster="prod", code="gpu.xid", severity="critical", title=key, count=1,
        status=status, first_seen=at - timedelta(days=1), last_seen=at,
        resolved_at=at if status == "resolved" else None)).inserted_primary_key[0]


def _alert(connection, group_id: int, name: str, *, status: str, days_ago: float, incident_id: int | None = None):
    at = _ago(days_ago)
    connection.execute(insert(Alert).values(
        group_id=group_id, fingerprint=name, group_key=f"g-{group_id}", source="sweep", code="gpu.xid",
        severity="critical", cluster="prod", target_kind="node", target_name=name, title=name, evidence=json.dumps([]),
        count=1, first_seen=at - timedelta(days=1), last_seen=at, status=status, incident_id=incident_id,
        resolved_at=at if status == "resolved" else None))


def _delivery(connection, key: str, *, days_ago: float) -> None:
    connection.execute(insert(Delivery).values(key=key, kind="event", first_seen_at=_ago(days_ago)))


def _webhook(connection, key: str, *, handled_days_ago: float | None, received_days_ago: float | None = None) -> None:
    handled = None if handled_days_ago is None else _ago(handled_days_ago)
    received = _ago(received_days_ago if received_days_ago is not None else handled_days_ago or 0)
    connection.execute(insert(WebhookPayload).values(dedupe_key=key, body=None if handled else "{}", alerts=1,
                                                     received_at=received, attempts=1, handled_at=handled))


def _names(connection, column) -> set[str]:
    return set(connection.execute(select(column)).scalars())


@pytest.fixture
def seeded(engine):
    with engine.begin() as c:
        old_resolved = _incident(c, "old-resolved", status="resolved", updated_days_ago=120)
        _incident(c, "recent-resolved", status="resolved", updated_days_ago=10)
        _incident(c, "old-open", status="open", updated_days_ago=200)  # still open: kept
        _incident(c, "old-acknowledged", status="acknowledged", updated_days_ago=200)
        # A message whose alerts are all resolved long ago: the alerts and the message go.
        done = _group(c, "done", status="resolved", days_ago=60)
        _alert(c, done, "done-1", status="resolved", days_ago=60, incident_id=old_resolved)
        _alert(c, done, "done-2", status="resolved", days_ago=45)
        # A message still firing: its long-resolved alert goes, the firing one (older still) and the message stay.
        live = _group(c, "live", status="firing", days_ago=100)
        _alert(c, live, "live-old-resolved", status="resolved", days_ago=50)
        _alert(c, live, "live-firing", status="firing", days_ago=100)
        # Resolved long ago but one alert resolved recently: the message stays with that alert.
        mixed = _group(c, "mixed", status="resolved", days_ago=40)
        _alert(c, mixed, "mixed-old", status="resolved", days_ago=40)
        _alert(c, mixed, "mixed-recent", status="resolved", days_ago=3)
        for days in (30, 20, 1):
            _delivery(c, f"d-{days}", days_ago=days)
        # Alertmanager's bodies: handled long ago (go), handled recently (stay), never handled (stay, however old).
        _webhook(c, "w-handled-old", handled_days_ago=30)
        _webhook(c, "w-handled-recent", handled_days_ago=1)
        _webhook(c, "w-pending-old", handled_days_ago=None, received_days_ago=30)
    return engine


def test_a_dry_run_counts_and_deletes_nothing(seeded):
    expected = Pruned(incidents=1, alerts=4, alert_groups=1, deliveries=2, webhooks=1)
    assert prune(seeded, POLICY, dry_run=True, clock=lambda: NOW) == expected
    with seeded.connect() as c:
        assert len(_names(c, Incident.fingerprint)) == 4 and len(_names(c, Alert.fingerprint)) == 6
    assert prune(seeded, POLICY, clock=lambda: NOW) == expected  # the dry run said what the real one does


def test_what_is_over_and_old_goes_and_what_is_open_or_firing_stays(seeded):
    prune(seeded, POLICY, clock=lambda: NOW)
    with seeded.connect() as c:
        assert _names(c, Incident.fingerprint) == {"recent-resolved", "old-open", "old-acknowledged"}
        assert _names(c, Alert.fingerprint) == {"live-firing", "mixed-recent"}
        assert _names(c, AlertGroup.group_key) == {"live", "mixed"}
        assert _names(c, Delivery.key) == {"d-1"}
        assert _names(c, WebhookPayload.dedupe_key) == {"w-handled-recent", "w-pending-old"}
        # The deleted incident's timeline and runs went with it (ON DELETE CASCADE, SQLite included).
        assert c.execute(select(func.count()).select_from(TimelineEntry)).scalar_one() == 3
        assert c.execute(select(func.count()).select_from(DiagnosisRun)).scalar_one() == 3
    assert prune(seeded, POLICY, clock=lambda: NOW) == Pruned(0, 0, 0, 0)  # idempotent: replicas may race


def test_zero_keeps_that_kind_forever(seeded):
    forever = Retention(incidents=0, alerts=0, deliveries=0)
    assert prune(seeded, forever, clock=lambda: NOW) == Pruned(0, 0, 0, 0)
    kept = prune(seeded, Retention(incidents=0, alerts=0, deliveries=14 * DAY), clock=lambda: NOW)
    assert (kept.deliveries, kept.webhooks) == (2, 1)


def test_retention_comes_from_the_settings():
    from bot.settings import load_settings

    settings = load_settings({"GPUBOT_RETENTION_INCIDENTS": "30d", "GPUBOT_RETENTION_ALERTS": "0",
                              "GPUBOT_RETENTION_DELIVERIES": "36h"})
    policy = Retention.from_settings(settings)
    assert policy == Retention(incidents=30 * DAY, alerts=0, deliveries=36 * 3600)
    assert policy.describe() == ("resolved incidents kept for 30d, resolved alerts forever, Slack and Alertmanager "
                                 "deliveries for 36h")


def test_gpubot_db_prune_prints_the_counts(cli, monkeypatch, db_url):
    from bot.store import make_engine, migrate
    from bot.store.db import where

    engine = make_engine(db_url)
    migrate.upgrade(engine)
    with engine.begin() as c:
        _incident(c, "ancient", status="resolved", updated_days_ago=3650)
        _delivery(c, "ancient", days_ago=3650)
        _webhook(c, "ancient", handled_days_ago=3650)
    monkeypatch.setenv("GPUBOT_DATABASE_URL", db_url)
    dry = cli("db", "prune", "--dry-run")
    assert dry.code == 0, dry.err
    assert dry.out == (f"{where(engine.url)}: would prune 1 incidents, 0 alerts (0 alert messages), 1 Slack "
                       f"deliveries, 1 Alertmanager webhooks (resolved incidents kept for 90d, resolved alerts for "
                       f"90d, Slack and Alertmanager deliveries for 14d)\n")
    wet = cli("db", "prune")
    assert wet.code == 0 and wet.out.startswith(f"{where(engine.url)}: pruned 1 incidents, 0 alerts")
    assert cli("db", "prune").out.startswith(f"{where(engine.url)}: pruned 0 incidents, 0 alerts")
    engine.dispose()


def test_serve_schedules_the_prune_daily_and_only_the_leader_runs_it(seed_sim, tmp_path, monkeypatch):
    """`gpubot serve`'s Alerts: the job is there, daily; with no election this replica prunes; a
    replica that takes part in an election and does not lead leaves it to the leader."""
    from bot.alerts.runtime import PRUNE_JOB, Alerts
    from bot.leader import LeaderElector
    from bot.payloads import Signer
    from bot.service import DiagnosisService
    from bot.settings import load_settings
    from bot.slack_client import make_web_client
    from bot.store import make_engine, migrate
    from tests.conftest import SIM_ENV

    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    url = f"sqlite:///{tmp_path}/gpubot.db"
    engine = make_engine(url)
    migrate.upgrade(engine)
    with engine.begin() as c:
        _incident(c, "ancient", status="resolved", updated_days_ago=3650)
    settings = load_settings({"KUBECONFIG": str(seed_sim.kubeconfig), "GPUBOT_DATABASE_URL": url,
                              "SLACK_BOT_TOKEN": "xoxb-unused", **SIM_ENV})
    alerts = Alerts(settings, DiagnosisService(settings), engine,
                    make_web_client(token="xoxb-unused", base_url="http://127.0.0.1:9/api/"),
                    Signer(b"k" * 32, ttl=3600), cluster="sim")
    try:
        job = alerts.scheduler.get_job(PRUNE_JOB)
        assert job.trigger.interval.total_seconds() == DAY and job.next_run_time is not None
        alerts.elector = LeaderElector.from_settings(settings, on_started_leading=lambda: None,
                                                     on_stopped_leading=lambda: None)
        assert alerts.prune_once() is None  # elected, not leading: nothing pruned here
        alerts.elector = None
        assert alerts.prune_once() == Pruned(incidents=1, alerts=0, alert_groups=0, deliveries=0)
    finally:
        alerts.service.close()
        engine.dispose()
