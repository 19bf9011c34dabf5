"""Migrations 0003 and 0007 redact what earlier versions stored (SQLite and PostgreSQL)."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import event, inspect, text

from bot.store import make_engine
from bot.store import migrate

HF = "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"
SLACK = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp"
DB_PASSWORD = "S3cretPass"
AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0cmFpbmVyIn0.c2lnbmF0dXJlLXZhbHVl"
JSON_PASSWORD = "Tr0ub4dor&3"
SECRETS = [HF, SLACK, DB_PASSWORD, AWS_KEY_ID, JWT, JSON_PASSWORD]

# (as stored by an earlier version, as it must read afterwards)
LINES = [
    (f"loading model with token {HF}", "loading model with token [REDACTED]"),
    (f"slack notifier SLACK_BOT_TOKEN={SLACK}", "slack notifier SLACK_BOT_TOKEN=[REDACTED]"),
    (f"MLFLOW_TRACKING_URI=postgres://trainer:{DB_PASSWORD}@db.internal:5432/runs",
     "MLFLOW_TRACKING_URI=postgres://trainer:[REDACTED]@db.internal:5432/runs"),
    (f"aws configure set aws_access_key_id {AWS_KEY_ID}", "aws configure set aws_access_key_id [REDACTED]"),
    (f"session {JWT} expired", "session [REDACTED] expired"),
    (f'config {{"user": "ml", "password": "{JSON_PASSWORD}"}}', 'config {"user": "ml", "password": "[REDACTED]"}'),
]
CLEAN = "Disrupting Node: Underutilized"


@pytest.fixture
def engine(db_url):
    engine = make_engine(db_url)
    assert migrate.upgrade(engine, "0002") == "0002"
    yield engine
    engine.dispose()


def insert_incident(conn, *, title: str, resolution: str | None, fingerprint: str = "fp") -> int:
    return conn.execute(text(
        "INSERT INTO incidents (fingerprint, cluster, namespace, target_kind, target_name, code, status, severity, "
        "title, occurrences, opened_at, updated_at, resolution) VALUES (:fp, 'prod', 'ml', 'pod', 'x', 'c', "
        "'resolved', 'error', :title, 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, :resolution) RETURNING id"),
        {"fp": fingerprint, "title": title, "resolution": resolution}).scalar_one()


def insert_run(conn, incident_id: int, summary: str) -> int:
    return conn.execute(text(
        "INSERT INTO diagnosis_runs (incident_id, at, actor, source, summary) "
        "VALUES (:i, CURRENT_TIMESTAMP, 'U0ALICE', 'slack', :s) RETURNING id"), {"i": incident_id, "s": summary}).scalar_one()


def insert_findings(conn, run_id: int, rows: list[tuple[str, str]]) -> None:
    conn.execute(text(
        "INSERT INTO findings (run_id, position, code, severity, confidence, title, evidence) "
        "VALUES (:r, :p, 'c', 'error', 'high', :t, :e)"),
        [{"r": run_id, "p": p, "t": title, "e": evidence} for p, (title, evidence) in enumerate(rows)])


def insert_timeline(conn, incident_id: int, detail: str) -> None:
    conn.execute(text("INSERT INTO timeline (incident_id, at, kind, actor, detail) "
                      "VALUES (:i, CURRENT_TIMESTAMP, 'resolved', 'U0ONCALL', :d)"), {"i": incident_id, "d": detail})


def evidence(*texts: str) -> str:
    return json.dumps([{"source": f"logs of pod ml/x via postgres://u:{DB_PASSWORD}@db/x", "text": t} for t in texts])


def dump(engine) -> dict[str, list[tuple]]:
    """Every row of every table, as the database holds it."""
    with engine.connect() as conn:
        return {table: sorted(tuple(str(v) for v in row) for row in conn.execute(text(f"SELECT * FROM {table}")))
                for table in inspect(conn).get_table_names()}


def count_updated_rows(engine) -> list[int]:
    """A list that fills, as statements run, with the rows each UPDATE of our tables was sent."""
    counts: list[int] = []

    def note(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("UPDATE") and "alembic_version" not in statement:
            counts.append(len(parameters) if executemany else 1)

    event.listen(engine, "before_cursor_execute", note)
    return counts


def test_every_stored_text_is_redacted_and_the_rest_kept(engine):
    secret_lines = [line for line, _ in LINES]
    with engine.begin() as conn:
        ids = [insert_incident(conn, title=line, resolution=LINES[-1 - n][0], fingerprint=f"fp{n}")
               for n, line in enumerate(secret_lines)]
        quiet = insert_incident(conn, title=CLEAN, resolution=None, fingerprint="quiet")
        run = insert_run(conn, ids[0], f"summary: {LINES[1][0]}")
        insert_run(conn, quiet, CLEAN)
        insert_findings(conn, run, [(line, evidence(line, CLEAN)) for line in secret_lines]
                        + [(CLEAN, f"not json: {LINES[2][0]}"), (CLEAN, json.dumps([{"source": "event x", "text": CLEAN}]))])
        for n, line in enumerate(secret_lines):
            insert_timeline(conn, ids[n], line)
    before = dump(engine)
    assert any(secret in str(before) for secret in SECRETS)

    updated = count_updated_rows(engine)
    assert migrate.upgrade(engine, "0003") == "0003"

    after = dump(engine)
    for secret in SECRETS:
        assert secret not in str(after), secret
    redacted = [want for _, want in LINES]
    with engine.connect() as conn:
        titles = conn.execute(text("SELECT title, resolution FROM incidents ORDER BY id")).all()
        assert [tuple(r) for r in titles] == [(want, LINES[-1 - n][1]) for n, want in enumerate(redacted)] + [(CLEAN, None)]
        assert conn.execute(text("SELECT summary FROM diagnosis_runs ORDER BY id")).scalars().all() == [
            f"summary: {LINES[1][1]}", CLEAN]
        assert conn.execute(text("SELECT detail FROM timeline ORDER BY id")).scalars().all() == redacted
        findings = conn.execute(text("SELECT title, evidence FROM findings ORDER BY id")).all()
    assert [f.title for f in findings] == redacted + [CLEAN, CLEAN]
    for want, finding in zip(redacted, findings):
        assert json.loads(finding.evidence) == [
            {"source": "logs of pod ml/x via postgres://u:[REDACTED]@db/x", "text": want},
            {"source": "logs of pod ml/x via postgres://u:[REDACTED]@db/x", "text": CLEAN},
        ]
    assert findings[-2].evidence == f"not json: {LINES[2][1]}"
    # Rows with nothing secret were left alone: 6 incidents, 1 run, 7 findings, 6 timeline entries changed.
    assert sum(updated) == 6 + 1 + 7 + 6
    assert before["bot_threads"] == after["bot_threads"]


def test_running_it_again_changes_nothing(engine):
    with engine.begin() as conn:
        incident = insert_incident(conn, title=LINES[0][0], resolution=LINES[3][0])
        insert_findings(conn, insert_run(conn, incident, LINES[4][0]),
                        [(LINES[1][0], evidence(*(line for line, _ in LINES))), (CLEAN, "{not json")])
        insert_timeline(conn, incident, LINES[5][0])
    migrate.upgrade(engine, "0003")
    once = dump(engine)
    assert migrate.downgrade(engine, "0002") == "0002"  # nothing to undo: the values stay redacted
    assert dump(engine) == {**once, "alembic_version": [("0002",)]}
    updated = count_updated_rows(engine)
    assert migrate.upgrade(engine, "0003") == "0003"
    assert dump(engine) == once
    assert updated == []


def test_a_large_table_is_processed_in_full(engine):
    total, clean_every = 1200, 4
    with engine.begin() as conn:
        incident = insert_incident(conn, title=CLEAN, resolution=None)
        run = insert_run(conn, incident, CLEAN)
        insert_findings(conn, run, [
            (CLEAN, json.dumps([{"source": "event x", "text": CLEAN}])) if n % clean_every == 0
            else (f"finding {n}", json.dumps([{"source": "env", "text": f"row {n} HF_TOKEN={HF}"}]))
            for n in range(total)])
    updated = count_updated_rows(engine)
    migrate.upgrade(engine, "0003")
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT position, evidence FROM findings ORDER BY id")).all()
    assert len(rows) == total
    assert all(HF not in r.evidence for r in rows)
    assert json.loads(rows[-1].evidence) == [{"source": "env", "text": f"row {total - 1} HF_TOKEN=[REDACTED]"}]
    assert sum(updated) == total - total // clean_every
    assert len(updated) > 1 and max(updated) <= 500  # a batch at a time, never the whole table


# -- migration 0007: the detector, over every text column of every table --------------------------------

SLOTS = 16  # text columns filled by one call of _insert_0006_rows


def _insert_0006_rows(conn, texts: list[str], n: int) -> None:
    """One row in each table that holds text, every text column filled (``texts`` in turn, SLOTS of
    them), as a version before the detector stored them (plain SQL: the ORM models redact on the way in)."""
    json_list = lambda t: json.dumps([{"source": "logs of pod ml/x", "text": t}])  # noqa: E731
    it = iter(texts * SLOTS)
    incident = insert_incident(conn, title=next(it), resolution=next(it), fingerprint=f"fp7-{n}")
    run = insert_run(conn, incident, next(it))
    insert_findings(conn, run, [(next(it), json_list(next(it)))])
    insert_timeline(conn, incident, next(it))
    conn.execute(text(
        "INSERT INTO proposals (incident_id, kind, target, cluster, params, reason, requested_by, requested_at, "
        "expires_at, state, plan, results, undo, version) VALUES (:i, 'cordon-gpu-node', 'node/x', 'prod', :params, "
        ":reason, 'U0ALICE', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'failed', :plan, :results, :undo, 1)"),
        {"i": incident, "params": json.dumps({"note": next(it)}), "reason": next(it),
         "plan": json.dumps({"summary": next(it)}), "results": json.dumps([{"error": next(it)}]),
         "undo": json.dumps([{"detail": next(it)}])})
    group = conn.execute(text(
        "INSERT INTO alert_groups (group_key, source, cluster, code, severity, title, count, status, resolved_reason, "
        "first_seen, last_seen) VALUES (:k, 'sweep', 'prod', 'c', 'error', :t, 1, 'resolved', :r, CURRENT_TIMESTAMP, "
        "CURRENT_TIMESTAMP) RETURNING id"), {"k": f"g{n}", "t": next(it), "r": next(it)}).scalar_one()
    conn.execute(text(
        "INSERT INTO alerts (group_id, fingerprint, group_key, source, code, severity, cluster, target_kind, "
        "target_name, title, evidence, count, first_seen, last_seen, status, resolved_reason) VALUES (:g, 'f', :k, "
        "'sweep', 'c', 'error', 'prod', 'node', 'x', :t, :e, 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'resolved', :r)"),
        {"g": group, "k": f"g{n}", "t": next(it), "e": json_list(next(it)), "r": next(it)})


def test_0007_redacts_every_text_column_with_the_detector(db_url):
    from tests.playbooks.secret_forms import forms
    from tests.playbooks.test_redaction_corpus import leaked

    corpus = [f for f in forms() if f.one_line]
    engine = make_engine(db_url)
    try:
        assert migrate.upgrade(engine, "0006") == "0006"
        texts = [f.text for f in corpus]
        with engine.begin() as conn:
            for n in range(0, len(texts), SLOTS):
                _insert_0006_rows(conn, texts[n:n + SLOTS], n)
        before = json.dumps(dump(engine))
        assert [f.name for f in corpus if not all(s in before for s in f.secrets)] == []

        assert migrate.upgrade(engine, "0007") == "0007"
        once = dump(engine)
        after = json.dumps(once)
        for form in corpus:
            for secret in form.secrets:
                assert not leaked(secret, after), (form.name, secret)
        with engine.connect() as conn:
            for column in ("params", "plan", "results", "undo"):
                for stored in conn.execute(text(f"SELECT {column} FROM proposals")).scalars():
                    json.loads(stored)  # still JSON
            assert all("[REDACTED]" in r for r in conn.execute(text("SELECT resolution FROM incidents")).scalars())

        updated = count_updated_rows(engine)
        assert migrate.downgrade(engine, "0006") == "0006"
        assert migrate.upgrade(engine, "0007") == "0007"
        assert updated == [] and dump(engine) == once  # running it again changes nothing
    finally:
        engine.dispose()
