"""The incident store on SQLite and on a real PostgreSQL (started by `make test`)."""
from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError

from bot.errors import NotFoundError, UserError
from bot.store import IncidentStore, SchemaBehind, StoreUnavailable, check_current, fingerprint, make_engine
from bot.store import migrate
from playbooks.model import Diagnosis, Evidence, Finding, Remediation, Target


def diagnosis(code="karpenter.disruption", severity="critical", name="llama-3-8b-fsdp", cluster="prod") -> Diagnosis:
    finding = Finding(code, severity, "high", f"{code} on {name}", "detail", [Evidence("event x", "Disrupting Node: Underutilized")],
                      remediations=[Remediation("nodepool-consolidation", "nodepool/gpu",
                                                {"nodepool": "gpu", "consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m"})])
    return Diagnosis(Target("pytorchjob", name, "ml"), f"summary of {code}", [finding], cluster=cluster)


@pytest.fixture
def store(engine, clock):
    return IncidentStore(engine, clock=clock)


def test_migrations_upgrade_and_downgrade(db_url):
    engine = make_engine(db_url)
    with pytest.raises(SchemaBehind) as behind:
        check_current(engine)
    assert "run `gpubot db upgrade`" in str(behind.value)
    assert migrate.upgrade(engine) == migrate.head()
    check_current(engine)
    assert migrate.downgrade(engine, "base") is None
    with engine.connect() as conn:
        tables = set(conn.dialect.get_table_names(conn))
    assert "incidents" not in tables and "timeline" not in tables
    assert migrate.upgrade(engine, "0001") == "0001"
    with pytest.raises(SchemaBehind):
        check_current(engine)  # 0002 (bot_threads) still to come
    assert migrate.upgrade(engine) == migrate.head()
    assert migrate.downgrade(engine, "0001") == "0001"
    with engine.connect() as conn:
        tables = set(conn.dialect.get_table_names(conn))
    assert "bot_threads" not in tables and "incidents" in tables
    with pytest.raises(UserError):
        migrate.upgrade(engine, "9999")
    engine.dispose()


def test_same_problem_is_one_incident(store, clock):
    first = store.record_diagnosis(diagnosis(), actor="U0ALICE", source="slack")
    assert first.created and first.history.seen_this_week == 1
    clock.now += timedelta(hours=1)
    second = store.record_diagnosis(diagnosis(), actor="U0BOB", source="cli")
    assert not second.created and second.incident.id == first.incident.id
    assert second.incident.occurrences == 2 and second.history.seen_this_week == 2
    other = store.record_diagnosis(diagnosis(code="training.cuda_oom", severity="error"), actor="U0ALICE", source="slack")
    assert other.incident.id != first.incident.id


def test_nothing_above_info_records_nothing(store):
    quiet = Diagnosis(Target("pod", "x", "ml"), "fine", [Finding("image.slow_pull", "info", "high", "t", "d")], cluster="prod")
    assert store.record_diagnosis(quiet, actor="U0ALICE", source="cli") is None
    assert store.list(status="all") == []


def test_acknowledge_resolve_and_history(store, clock):
    rec = store.record_diagnosis(diagnosis(), actor="U0ALICE", source="slack")
    store.set_thread(rec.incident.id, channel="C0TRAIN", ts="1767225600.000100")
    acked = store.acknowledge(rec.incident.id, actor="U0ONCALL")
    assert acked.status == "acknowledged" and acked.acknowledged_by == "U0ONCALL"
    clock.now += timedelta(hours=2)
    store.add_timeline(rec.incident.id, kind="remediation_applied", actor="U0ONCALL", detail="annotated do-not-disrupt")
    resolved = store.resolve(rec.incident.id, actor="U0ONCALL")
    assert resolved.status == "resolved" and resolved.resolved_at == clock.now
    with pytest.raises(UserError):
        store.resolve(rec.incident.id, actor="U0ONCALL")
    clock.now += timedelta(days=1)
    again = store.record_diagnosis(diagnosis(), actor="U0ALICE", source="slack")
    assert again.created and again.incident.id != rec.incident.id  # a resolved incident is not reopened
    assert again.history.seen_this_week == 2
    assert again.history.last_resolved.id == rec.incident.id
    assert again.history.last_fix == "annotated do-not-disrupt"
    detail = store.get(rec.incident.id)
    assert [e.kind for e in detail.timeline] == ["diagnosis", "remediation_proposed", "acknowledged",
                                                 "remediation_applied", "resolved"]
    assert detail.incident.slack_ts == "1767225600.000100"
    assert detail.findings[0].evidence == [{"source": "event x", "text": "Disrupting Node: Underutilized"}]
    with pytest.raises(NotFoundError):
        store.get(999)


def test_list_and_counts(store, clock):
    store.record_diagnosis(diagnosis(), actor="U", source="slack")
    store.record_diagnosis(diagnosis(code="training.cuda_oom", severity="error", name="b"), actor="U", source="slack")
    clock.now += timedelta(days=10)
    store.record_diagnosis(diagnosis(code="image.slow_pull", severity="warning", name="c"), actor="U", source="slack")
    assert [i.code for i in store.list(status="open")] == ["karpenter.disruption", "training.cuda_oom", "image.slow_pull"]
    assert [i.code for i in store.list(status="open", since=timedelta(days=7))] == ["image.slow_pull"]
    assert store.counts_by_code() == {"image.slow_pull": 1}
    assert store.counts_by_code(since=timedelta(days=30)) == {"karpenter.disruption": 1, "training.cuda_oom": 1, "image.slow_pull": 1}


def test_the_database_refuses_a_second_active_incident(engine):
    row = ("fp1", "prod", "ml", "pod", "x", "c", "open", "error", "t", 1)
    insert = text("INSERT INTO incidents (fingerprint, cluster, namespace, target_kind, target_name, code, status, "
                  "severity, title, occurrences, opened_at, updated_at) VALUES (:f, :c, :n, :k, :m, :code, :s, :sev, "
                  ":t, :o, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)")
    params = dict(zip(("f", "c", "n", "k", "m", "code", "s", "sev", "t", "o"), row))
    with engine.begin() as conn:
        conn.execute(insert, params)
    with pytest.raises(IntegrityError), engine.begin() as conn:
        conn.execute(insert, params)  # straight SQL: the unique partial index, not Python, refuses it
    with engine.begin() as conn:
        conn.execute(insert, {**params, "s": "resolved"})  # resolved ones may repeat


def test_concurrent_writers_never_duplicate(engine, db_url):
    """Two replicas (here: 8 threads, each its own connection) recording the same problem at once."""
    stores = [IncidentStore(engine) for _ in range(8)]
    barrier = threading.Barrier(len(stores))
    errors: list[BaseException] = []

    def replica(store: IncidentStore) -> None:
        try:
            barrier.wait()
            for _ in range(5):
                store.record_diagnosis(diagnosis(name="race"), actor="U", source="slack")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=replica, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    incidents = stores[0].list(status="all")
    assert len(incidents) == 1
    assert incidents[0].occurrences == 40
    fp = fingerprint(cluster="prod", kind="pytorchjob", namespace="ml", name="race", code="karpenter.disruption")
    assert incidents[0].fingerprint == fp


def test_transient_failures_are_retried_and_an_outage_is_reported(pg_url):
    """PostgreSQL behind a proxy that cuts and refuses connections (SQLite is a local file)."""
    from tests.fakes.tcp_proxy import FlakyProxy

    url = make_url(pg_url)
    proxy = FlakyProxy(url.host, url.port)
    try:
        engine = make_engine(url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False))
        migrate.upgrade(engine)
        store = IncidentStore(engine, backoff=0.01)
        store.record_diagnosis(diagnosis(name="flaky"), actor="U", source="slack")
        proxy.cut_open_connections()  # the database restarts under us
        proxy.drop_next = 2  # and refuses the first reconnects
        rec = store.record_diagnosis(diagnosis(name="flaky"), actor="U", source="slack")
        assert rec.incident.occurrences == 2  # no write lost
        proxy.down = True
        proxy.cut_open_connections()
        with pytest.raises(StoreUnavailable) as err:
            store.record_diagnosis(diagnosis(name="flaky"), actor="U", source="slack")
        assert "did not answer" in str(err.value)
        engine.dispose()
    finally:
        proxy.stop()


def test_threads_are_shared_between_replicas_and_forgotten_after_thirty_days(engine, clock):
    one, two = IncidentStore(engine, clock=clock), IncidentStore(engine, clock=clock)
    assert not two.knows_thread("C0TRAIN", "1767225600.000100")
    one.remember_thread("C0TRAIN", "1767225600.000100")
    one.remember_thread("C0TRAIN", "1767225600.000100")  # a retried event: still one row
    assert two.knows_thread("C0TRAIN", "1767225600.000100")
    assert not two.knows_thread("C0OTHER", "1767225600.000100")
    clock.now += timedelta(days=29)
    assert two.knows_thread("C0TRAIN", "1767225600.000100")
    clock.now += timedelta(days=2)
    assert not two.knows_thread("C0TRAIN", "1767225600.000100")
    one.remember_thread("C0TRAIN", "1767229000.000100")  # writing prunes what is past keeping
    with engine.connect() as conn:
        assert conn.execute(text("SELECT thread_ts FROM bot_threads")).scalars().all() == ["1767229000.000100"]
