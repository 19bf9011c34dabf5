"""The alert store on SQLite and on a real PostgreSQL: one alert per problem and one message per group,
however many replicas report it at once; snoozes that outlive the process; firing -> resolved."""
from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import func, select, text

from bot.errors import NotFoundError, UserError
from bot.store import AlertStore, make_engine, migrate
from bot.store.alerts import CLAIM_FOR
from bot.store.models import Alert, AlertGroup, Base
from playbooks.model import Evidence, Target
from playbooks.problems import Problem

TABLES = {"alerts", "alert_groups"}
HF = "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"
GONE = "no longer seen by the sweep at 09:00 UTC"


def xid(node: str = "ip-10-0-1-7", n: int = 0, **kw) -> Problem:
    fields = dict(code="gpu.xid_error", severity="error", target=Target("node", f"{node}-{n}"),
                  title=f"Xid 79 on {node}-{n}", cluster="prod", group=f"node/{node}", nodepool="gpu-h100",
                  evidence=(Evidence("event", f"NVRM: Xid 79, GPU has fallen off the bus ({n})"),))
    fields.update(kw)
    return Problem(**fields)


def pending(pod: str, **kw) -> Problem:
    fields = dict(code="scheduling.insufficient_gpu", severity="warning", target=Target("pod", pod, "llm"),
                  title=f"pod {pod} Pending for 12m", cluster="prod", group="pytorchjob/llm/x")
    fields.update(kw)
    return Problem(**fields)


@pytest.fixture
def store(engine, clock):
    return AlertStore(engine, clock=clock)


def rows(engine, model) -> list:
    from sqlalchemy.orm import Session

    with Session(engine) as session:
        return session.scalars(select(model).order_by(model.id)).all()


# -- schema ---------------------------------------------------------------------------------------------


def test_migration_0006_adds_and_drops_the_alert_tables(db_url):
    engine = make_engine(db_url)
    try:
        assert migrate.upgrade(engine, "0005") == "0005"
        assert migrate.upgrade(engine, "0006") == "0006"
        assert migrate.upgrade(engine) == migrate.head()  # 0008 and 0009 add the cause columns the models carry
        with engine.connect() as conn:  # the ORM models say what the migration made, column for column
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        assert [d for d in diff if TABLES & _named(d)] == []
        AlertStore(engine).sweep([xid()], cluster="prod", reason=GONE)
        assert migrate.downgrade(engine, "0005") == "0005"
        with engine.connect() as conn:
            names = set(conn.dialect.get_table_names(conn))
        assert not TABLES & names and "incidents" in names
    finally:
        engine.dispose()


def _named(diff) -> set[str]:
    found = set()
    for item in diff if isinstance(diff, list) else [diff]:
        for part in item if isinstance(item, tuple) else (item,):
            name = getattr(part, "name", None) or getattr(getattr(part, "table", None), "name", None)
            if name:
                found.add(name)
    return found


def test_the_database_refuses_a_second_firing_alert_for_one_problem(engine, store):
    store.sweep([xid()], cluster="prod", reason=GONE)
    [alert] = rows(engine, Alert)
    with pytest.raises(Exception) as caught:
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO alerts (group_id, fingerprint, group_key, source, code, severity, cluster, "
                              "target_kind, target_name, title, evidence, count, first_seen, last_seen, status, "
                              "incident_state) SELECT group_id, fingerprint, group_key, source, code, severity, "
                              "cluster, target_kind, target_name, title, evidence, count, first_seen, last_seen, "
                              "status, incident_state FROM alerts WHERE id = :id"), {"id": alert.id})
    assert "unique" in str(caught.value).lower()


# -- reports ----------------------------------------------------------------------------------------------


def test_problems_of_one_storm_are_one_group_with_counts(engine, store):
    batch = store.sweep([xid(n=i) for i in range(7)] + [pending("x-0"), pending("x-1")], cluster="prod", reason=GONE)
    by_key = {g.group_key: g for g in batch.groups}
    assert set(by_key) == {"node/ip-10-0-1-7", "pytorchjob/llm/x"}
    node = by_key["node/ip-10-0-1-7"]
    assert (node.count, node.severity, node.status, len(node.members)) == (7, "error", "firing", 7)
    assert node.ts is None and node.shown is None
    assert by_key["pytorchjob/llm/x"].namespace == "llm"
    assert len(rows(engine, Alert)) == 9 and len(rows(engine, AlertGroup)) == 2


def test_the_same_problem_twice_in_one_report_is_counted_once_per_report(store):
    [group] = store.sweep([xid(), xid(), xid(severity="critical")], cluster="prod", reason=GONE).groups
    assert (group.count, group.severity, len(group.members)) == (3, "critical", 1)
    [again] = store.sweep([xid()], cluster="prod", reason=GONE).groups
    assert (again.count, again.severity, again.id) == (1, "error", group.id)


def test_a_sweep_clears_what_it_no_longer_sees_of_its_own_cluster_only(engine, store, clock):
    store.sweep([xid(n=0), xid(n=1)], cluster="prod", reason=GONE)
    store.sweep([xid(cluster="staging")], cluster="staging", reason=GONE)
    store.alertmanager([xid(n=5)], [], reason="Alertmanager sent resolved")
    clock.now += timedelta(minutes=1)
    [group] = store.sweep([xid(n=0)], cluster="prod", reason=GONE).groups
    # n=0 from the sweep and n=5 from Alertmanager: one storm; staging's is another.
    assert (group.count, group.status, group.cluster) == (2, "firing", "prod")
    by_target = {(a.cluster, a.target_name): a for a in rows(engine, Alert)}
    assert by_target[("prod", "ip-10-0-1-7-1")].status == "resolved"
    assert by_target[("prod", "ip-10-0-1-7-1")].resolved_reason == GONE
    # Another cluster's sweep, and Alertmanager's alerts, are not this sweep's to clear.
    assert by_target[("staging", "ip-10-0-1-7-0")].status == "firing"
    assert by_target[("prod", "ip-10-0-1-7-5")].status == "firing"
    [left] = store.sweep([], cluster="prod", reason=GONE).groups
    assert (left.status, left.count, [m.target_name for m in left.members]) == ("firing", 1, ["ip-10-0-1-7-5"])
    clock.now += timedelta(minutes=1)
    [gone] = store.alertmanager([], [xid(n=5)], reason="Alertmanager sent resolved").groups
    assert (gone.status, gone.resolved_reason, gone.count) == ("resolved", "Alertmanager sent resolved", 1)
    assert [m.target_name for m in gone.members] == ["ip-10-0-1-7-5"]


def test_alertmanager_resolves_explicitly_and_a_problem_back_is_a_new_alert(engine, store, clock):
    [first] = store.alertmanager([xid()], [], reason="Alertmanager sent resolved").groups
    assert first.source == "alertmanager"
    assert store.alertmanager([], [], reason="Alertmanager sent resolved").groups == ()
    [resolved] = store.alertmanager([], [xid()], reason="Alertmanager sent resolved").groups
    assert (resolved.id, resolved.status, resolved.resolved_reason) == (first.id, "resolved", "Alertmanager sent resolved")
    # Firing and resolved in one notification: it fires.
    clock.now += timedelta(minutes=5)
    [back] = store.alertmanager([xid()], [xid()], reason="Alertmanager sent resolved").groups
    assert back.id != first.id and back.status == "firing"
    assert [a.status for a in rows(engine, Alert)] == ["resolved", "firing"]


def test_evidence_and_titles_are_redacted_on_the_way_in(engine, store):
    leaky = xid(title=f"Xid 79 (HF_TOKEN={HF})", evidence=(Evidence("log", f"token {HF} in env"),))
    [group] = store.sweep([leaky], cluster="prod", reason=GONE).groups
    stored = rows(engine, Alert)[0]
    assert HF not in stored.title + stored.evidence + group.title
    assert "[REDACTED]" in stored.evidence


# -- posting, across replicas ------------------------------------------------------------------------------


def test_two_replicas_claim_one_message_and_only_one_wins(db_url, clock):
    engines = [make_engine(db_url) for _ in range(2)]
    try:
        migrate.upgrade(engines[0])
        replicas = [AlertStore(e, clock=clock) for e in engines]
        problems = [xid(n=i) for i in range(20)]
        start = threading.Barrier(2)
        claims: list[bool] = []
        errors: list[BaseException] = []

        def replica(store: AlertStore, name: str) -> None:
            try:
                start.wait()
                [group] = store.sweep(problems, cluster="prod", reason=GONE).groups
                start.wait()
                claims.append(store.claim_post(group.id, owner=name, channel="C0ALERTS"))
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=replica, args=(s, f"replica-{i}")) for i, s in enumerate(replicas)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert errors == []
        assert sorted(claims) == [False, True]
        assert len(rows(engines[0], Alert)) == 20 and len(rows(engines[0], AlertGroup)) == 1
    finally:
        for e in engines:
            e.dispose()


def test_a_claim_is_posted_released_or_expires(store, clock):
    [group] = store.sweep([xid()], cluster="prod", reason=GONE).groups
    assert store.claim_post(group.id, owner="a", channel="C0ALERTS")
    assert not store.claim_post(group.id, owner="b", channel="C0ALERTS")
    store.release([group.id], owner="a")
    assert store.claim_post(group.id, owner="b", channel="C0ALERTS")
    # b died before posting: its claim runs out, and a takes over.
    clock.now += CLAIM_FOR + timedelta(seconds=1)
    assert store.claim_post(group.id, owner="a", channel="C0ALERTS")
    store.posted({group.id: "k1"}, channel="C0ALERTS", ts="1.000100", owner="a")
    posted = store.get(group.id)
    assert (posted.channel, posted.ts, posted.shown) == ("C0ALERTS", "1.000100", "k1")
    assert not store.claim_post(group.id, owner="b", channel="C0ALERTS")  # it has its message
    # Only the claim holder records the post.
    store.posted({group.id: "k2"}, channel="C0OTHER", ts="2.000200", owner="b")
    assert store.get(group.id).ts == "1.000100"


# -- people -------------------------------------------------------------------------------------------------


def test_a_snooze_survives_a_new_store_on_the_same_database(db_url, clock):
    engine = make_engine(db_url)
    migrate.upgrade(engine)
    [group] = AlertStore(engine, clock=clock).sweep([xid()], cluster="prod", reason=GONE).groups
    AlertStore(engine, clock=clock).snooze(group.id, actor="U0ONCALL", until=clock.now + timedelta(hours=1))
    engine.dispose()
    restarted = make_engine(db_url)
    try:
        view = AlertStore(restarted, clock=clock).get(group.id)
        assert view.snoozed(clock.now) and view.snoozed_by == "U0ONCALL"
        assert view.snoozed_until == clock.now + timedelta(hours=1)
        assert not view.snoozed(clock.now + timedelta(hours=1, seconds=1))
    finally:
        restarted.dispose()


def test_a_timed_snooze_outlives_the_message_and_until_resolved_does_not(store, clock):
    [group] = store.sweep([xid()], cluster="prod", reason=GONE).groups
    store.snooze(group.id, actor="U0ONCALL", until=clock.now + timedelta(hours=1))
    store.sweep([], cluster="prod", reason=GONE)
    clock.now += timedelta(minutes=10)
    [back] = store.sweep([xid()], cluster="prod", reason=GONE).groups
    assert back.id != group.id and back.snoozed(clock.now) and back.snoozed_by == "U0ONCALL"
    store.snooze(back.id, actor="U0ONCALL", until_resolved=True)
    assert store.get(back.id).snoozed(clock.now + timedelta(days=30))
    store.sweep([], cluster="prod", reason=GONE)
    clock.now += timedelta(hours=2)
    [third] = store.sweep([xid()], cluster="prod", reason=GONE).groups
    assert not third.snoozed(clock.now)
    with pytest.raises(UserError, match="already resolved"):
        store.snooze(back.id, actor="U0ONCALL", until_resolved=True)


def test_acknowledge_keeps_the_first_and_refuses_a_resolved_alert(store):
    [group] = store.sweep([xid()], cluster="prod", reason=GONE).groups
    assert store.acknowledge(group.id, actor="U0ONE").acknowledged_by == "U0ONE"
    assert store.acknowledge(group.id, actor="U0TWO").acknowledged_by == "U0ONE"
    store.sweep([], cluster="prod", reason=GONE)
    with pytest.raises(UserError, match="already resolved"):
        store.acknowledge(group.id, actor="U0ONE")
    with pytest.raises(NotFoundError):
        store.get(group.id + 1000)


def test_scopes_name_every_namespace_an_alert_speaks_of(store):
    [group] = store.sweep([pending("x-0"), pending("x-1", target=Target("pod", "x-1", "llm-other"))],
                          cluster="prod", reason=GONE).groups
    assert set(group.scopes) == {("prod", "llm"), ("prod", "llm-other")}


def test_incidents_due_until_recorded(engine, store):
    store.sweep([xid(n=0), xid(n=1)], cluster="prod", reason=GONE)
    due = store.incidents_due()
    assert len(due.to_open) == 2 and due.to_close == ()
    store.incidents_opened({due.to_open[0].id: None, due.to_open[1].id: None})
    assert store.incidents_due().to_open == ()
    store.sweep([], cluster="prod", reason=GONE)
    assert store.incidents_due().to_close == ()  # none was opened: nothing to close
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Alert).where(Alert.incident_state == "closed")).scalar() == 2
