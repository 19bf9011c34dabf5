"""The Alertmanager inbox is bounded (SQLite and PostgreSQL, over the real HTTP edge): a flood from the
token's holder is answered 429 with Retry-After once the unhandled bodies reach their cap in rows or in
bytes, the database never holds more, and a sender that resends after Retry-After, as Alertmanager does
with a group it could not deliver, still gets every distinct alert handled exactly once. The token's
rate is checked before the body is read, and a request without the token never spends it."""
from __future__ import annotations

import http.client
import json
import threading
import time
from collections import Counter

import pytest
from sqlalchemy import text

from bot.alerts.alertmanager import AlertBatch
from bot.alerts.inbox import Inbox
from bot.alerts.intake import AlertmanagerEndpoint
from bot.http_server import SlackHttpServer
from bot.metrics import REGISTRY
from bot.store.webhooks import InboxFull, WebhookStore
from tests.bot.alertmanager_payloads import alert, encode, webhook
from tests.store.conftest import clock, engine  # noqa: F401 - fixtures: a migrated database per backend, a clock

TOKEN = "am-token-0123456789abcdef"
BODIES = 12
ALERTS_PER_BODY = 20
PADDING = 60_000  # bytes of annotation per body, so that the byte cap bites before the row cap


class SlowHandling:
    """Stands in for the notifier at the inbox's far end: slower than the flood, so the inbox fills."""

    def __init__(self) -> None:
        self.fingerprints: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, batch: AlertBatch) -> None:
        time.sleep(0.05)
        with self.lock:
            self.fingerprints.update(a.am_fingerprint for a in batch.alerts)


def body(n: int) -> bytes:
    alerts = [alert({"node": f"gpu-{n}-{i}"}, fingerprint=f"{n:08x}{i:08x}",
                    annotations={"description": "padding " * (PADDING // 8)} if i == 0 else None)
              for i in range(ALERTS_PER_BODY)]
    return encode(webhook(*alerts, groupKey=f"{{}}:{{group=\"{n}\"}}"))


def post(port: int, payload: bytes, *, token: str | None = TOKEN) -> tuple[int, dict, str | None]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        connection.request("POST", "/alertmanager", body=payload, headers=headers)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read()), answer.getheader("Retry-After")
    finally:
        connection.close()


def deferred(reason: str) -> float:
    return REGISTRY.get_sample_value("gpubot_alertmanager_deferred_total", {"reason": reason}) or 0.0


class Backlog:
    """Samples what the database holds unhandled while the flood runs: the largest rows and bytes seen."""

    def __init__(self, engine) -> None:
        self.engine = engine
        self.rows = self.size = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "Backlog":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        while not self._stop.is_set():
            with self.engine.connect() as connection:  # the bodies themselves, not the column the cap sums
                rows, size = connection.execute(text(
                    "SELECT count(*), coalesce(sum(length(body)), 0) FROM webhook_payloads "
                    "WHERE handled_at IS NULL")).one()
            self.rows, self.size = max(self.rows, rows), max(self.size, size)
            self._stop.wait(0.005)


@pytest.fixture
def serve(engine):
    started = []

    def start(*, max_rows: int, max_bytes: int, rate: int):
        handled = SlowHandling()
        inbox = Inbox(WebhookStore(engine, max_rows=max_rows, max_bytes=max_bytes), handled, cluster="prod",
                      poll=1).start()
        endpoint = AlertmanagerEndpoint(TOKEN, inbox.put, cluster="prod", rate=rate, answer_within=10)
        server = SlackHttpServer(None, host="127.0.0.1", port=0, routes={"/alertmanager": endpoint.handle}).start()
        started.append((server, endpoint, inbox))
        return server.port, handled

    yield start
    for server, endpoint, inbox in started:
        server.stop()
        endpoint.close()
        inbox.stop()


@pytest.mark.parametrize("cap", ["rows", "bytes"])
def test_a_flood_waits_at_the_cap_and_every_alert_is_still_handled_once(serve, engine, cap):
    size = len(body(0))
    max_rows, max_bytes = (3, 64 * size) if cap == "rows" else (BODIES, 3 * size + size // 2)
    port, handled = serve(max_rows=max_rows, max_bytes=max_bytes, rate=6000)
    refusals: list[tuple[int, str | None]] = []
    lock = threading.Lock()
    before = deferred("inbox_full")

    def alertmanager(n: int) -> None:
        """Sends one group until it is taken, waiting Retry-After between tries."""
        for _ in range(120):
            status, answer, retry_after = post(port, body(n))
            if status == 202:
                assert answer == {"accepted": ALERTS_PER_BODY}
                return
            with lock:
                refusals.append((status, retry_after))
            time.sleep(int(retry_after))
        raise AssertionError(f"group {n} never accepted")

    with Backlog(engine) as backlog:
        senders = [threading.Thread(target=alertmanager, args=(n,)) for n in range(BODIES)]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join(180)
        for _ in range(600):  # until the consumer has handled the last of them
            if sum(handled.fingerprints.values()) >= BODIES * ALERTS_PER_BODY:
                break
            time.sleep(0.05)

    assert refusals, "the flood was never refused"
    assert {status for status, _ in refusals} == {429} and all(r and int(r) >= 1 for _, r in refusals)
    assert deferred("inbox_full") - before == len(refusals)
    assert backlog.rows <= max_rows and backlog.size <= max_bytes, (backlog.rows, backlog.size)
    expected = {f"{n:08x}{i:08x}" for n in range(BODIES) for i in range(ALERTS_PER_BODY)}
    assert set(handled.fingerprints) == expected and set(handled.fingerprints.values()) == {1}


def test_the_tokens_rate_is_spent_only_with_the_token(serve):
    port, handled = serve(max_rows=100, max_bytes=64 * 1024 * 1024, rate=2)
    before = deferred("rate_limited")
    for _ in range(5):
        assert post(port, body(0), token="not-the-token")[0] == 401
    assert post(port, body(1))[0] == 202
    assert post(port, body(2))[0] == 202
    status, answer, retry_after = post(port, body(3))
    # One request a 30 s at 2 a minute: told to come back then, and the body was never stored.
    assert (status, retry_after) == (429, "30") and "GPUBOT_ALERTMANAGER_RATE" in answer["error"]
    assert deferred("rate_limited") - before == 1


def test_a_resend_of_a_stored_body_is_not_refused_when_the_inbox_is_full(engine, clock):
    store = WebhookStore(engine, clock=clock, max_rows=2)
    assert store.put(b"{}", dedupe_key="a", alerts=1) and store.put(b"{}", dedupe_key="b", alerts=1)
    assert store.put(b"{}", dedupe_key="a", alerts=1) is False  # Alertmanager's retry: still a duplicate
    with pytest.raises(InboxFull):
        store.put(b"{}", dedupe_key="c", alerts=1)
    [claimed, _] = store.claim(owner="me")
    store.handled(claimed.id, owner="me")
    assert store.put(b"{}", dedupe_key="c", alerts=1)  # handled bodies make room


def test_an_empty_inbox_takes_one_body_over_the_byte_cap(engine, clock):
    # A byte cap below the webhook's largest body would otherwise refuse that body for ever.
    store = WebhookStore(engine, clock=clock, max_bytes=10)
    assert store.put(b"x" * 100, dedupe_key="a", alerts=1)
    with pytest.raises(InboxFull):
        store.put(b"{}", dedupe_key="b", alerts=1)
