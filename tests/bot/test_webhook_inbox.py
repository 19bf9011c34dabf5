"""Alertmanager's webhook bodies stored before the answer and handled afterwards (SQLite and PostgreSQL):
a retry of the same notification changes nothing, two consumers never handle one body, a consumer that
died is replaced, a failing body is tried again and then given up, a handled body is emptied."""
from __future__ import annotations

import threading
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.alerts.alertmanager import AlertBatch, parse_webhook
from bot.alerts.inbox import Inbox
from bot.alerts.intake import AlertmanagerEndpoint
from bot.store.models import WebhookPayload
from bot.store.webhooks import CLAIM_FOR, MAX_ATTEMPTS, RETRY_AFTER, WebhookStore
from tests.bot.alertmanager_payloads import alert, encode, fixture, webhook
from tests.store.conftest import clock, engine  # noqa: F401 - fixtures: a migrated database per backend, a clock

TOKEN = "am-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


class Handled:
    def __init__(self, fail: int = 0) -> None:
        self.batches: list[AlertBatch] = []
        self.fail = fail
        self.lock = threading.Lock()

    def __call__(self, batch: AlertBatch) -> None:
        with self.lock:
            if self.fail:
                self.fail -= 1
                raise RuntimeError("Slack did not answer")
            self.batches.append(batch)


def rows(engine) -> list[WebhookPayload]:
    with Session(engine) as session:
        return session.scalars(select(WebhookPayload).order_by(WebhookPayload.id)).all()


def test_a_stored_batch_is_handled_once_and_a_retry_changes_nothing(engine, clock):
    handled = Handled()
    inbox = Inbox(WebhookStore(engine, clock=clock), handled, cluster="prod", owner="a")
    endpoint = AlertmanagerEndpoint(TOKEN, inbox.put, cluster="prod")
    body = fixture("dcgm_xid_firing.json")
    assert endpoint.handle("POST", AUTH, body) == (202, {"accepted": 2})
    assert handled.batches == []  # nothing is handled on the request path
    # Alertmanager did not get the answer and sends the same notification again, before and after handling.
    assert endpoint.handle("POST", AUTH, body) == (202, {"accepted": 2, "duplicate": True})
    assert inbox.drain() == 1
    assert endpoint.handle("POST", AUTH, body) == (202, {"accepted": 2, "duplicate": True})
    assert inbox.drain() == 0
    [batch] = handled.batches
    assert [a.problem.code for a in batch.alerts] == ["gpu.xid_error", "gpu.xid_error"]
    assert {a.problem.cluster for a in batch.alerts} == {"prod"}
    [row] = rows(engine)
    assert (row.body, row.attempts, row.error) == (None, 1, None) and row.handled_at is not None
    endpoint.close()


def test_the_same_group_in_another_state_is_a_new_notification(engine, clock):
    store = WebhookStore(engine, clock=clock)
    firing = parse_webhook(encode(webhook(alert({"node": "n1"}))))
    resolved = parse_webhook(encode(webhook(alert({"node": "n1"}, status="resolved", endsAt="2026-05-14T10:00:00Z"))))
    again = parse_webhook(encode(webhook(alert({"node": "n1"}, startsAt="2026-05-14T11:00:00Z"))))
    keys = {firing.dedupe_key, resolved.dedupe_key, again.dedupe_key}
    assert len(keys) == 3
    for batch in (firing, resolved, again, firing):
        store.put(batch.body, dedupe_key=batch.dedupe_key, alerts=len(batch.alerts))
    assert store.pending() == 3


def test_two_consumers_never_claim_one_body(engine, clock):
    store = WebhookStore(engine, clock=clock)
    for n in range(30):
        batch = parse_webhook(encode(webhook(alert({"node": f"n{n}"}, fingerprint=f"{n:016x}"))))
        assert store.put(batch.body, dedupe_key=batch.dedupe_key, alerts=1)
    claimed: dict[str, list[int]] = {"a": [], "b": [], "c": []}

    def consume(owner: str) -> None:
        while batch := store.claim(owner=owner, limit=3):
            claimed[owner] += [s.id for s in batch]
            for s in batch:
                store.handled(s.id, owner=owner)

    threads = [threading.Thread(target=consume, args=(o,)) for o in claimed]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    every = [i for ids in claimed.values() for i in ids]
    assert sorted(every) == [r.id for r in rows(engine)] and len(every) == len(set(every)) == 30
    assert store.pending() == 0


def test_a_claim_of_a_consumer_that_died_is_taken_over(engine, clock):
    store = WebhookStore(engine, clock=clock)
    batch = parse_webhook(fixture("dcgm_xid_firing.json"))
    store.put(batch.body, dedupe_key=batch.dedupe_key, alerts=2)
    [mine] = store.claim(owner="died")
    assert store.claim(owner="alive") == []
    clock.now += CLAIM_FOR + timedelta(seconds=1)
    [theirs] = store.claim(owner="alive")
    assert theirs.id == mine.id and theirs.attempts == 2
    store.handled(mine.id, owner="died")  # too late: the claim is not its own any more
    assert store.pending() == 1


def test_a_failing_batch_is_tried_again_then_given_up(engine, clock):
    handled = Handled(fail=MAX_ATTEMPTS + 1)
    inbox = Inbox(WebhookStore(engine, clock=clock), handled, cluster="prod", owner="a")
    assert inbox.put(parse_webhook(fixture("dcgm_xid_firing.json"))) is True
    # Tried again only after a backoff that grows with each try, until MAX_ATTEMPTS gives it up.
    for attempt in range(1, MAX_ATTEMPTS + 1):
        assert inbox.drain() == 0
        assert inbox.drain() == 0 and rows(engine)[0].attempts == attempt  # not again before its time
        clock.now += RETRY_AFTER * attempt + timedelta(seconds=1)
    [row] = rows(engine)
    assert row.attempts == MAX_ATTEMPTS and row.handled_at is not None and "Slack did not answer" in row.error
    assert handled.batches == [] and inbox.drain() == 0


def test_the_consumer_thread_handles_what_the_endpoint_stored(engine):
    handled = Handled()
    inbox = Inbox(WebhookStore(engine), handled, cluster="prod", poll=60).start()
    try:
        inbox.put(parse_webhook(fixture("dcgm_xid_firing.json")))
        for _ in range(200):  # woken at once by put, not after the 60 s poll
            if handled.batches:
                break
            threading.Event().wait(0.05)
        assert len(handled.batches) == 1
    finally:
        inbox.stop()
