"""``POST /alertmanager``: Alertmanager's webhook, authenticated with a bearer token, handed on as one
``AlertBatch``.

The sink only stores the batch (bot.alerts.inbox); handling it (diagnoses, Slack) happens afterwards, so
the answer never waits on a sweep, a diagnosis or Slack. Storing itself is bounded too: a sink that
has not returned within ANSWER_WITHIN seconds (a database holding its lock) is answered 503, which
Alertmanager retries; should the store still complete, the retry is recognised as the same
notification and changes nothing.

What the token's holder may make gpubot do is bounded twice. A rate (``rate`` requests a minute, in
bursts of as many) is checked right after the token and before the body is read, so a flood costs
neither parsing nor redaction; and the sink refuses a batch once the unhandled ones fill the inbox
(``Deferred``, bot.store.webhooks' caps). Both are answered 429 with ``Retry-After``, counted in
``gpubot_alertmanager_deferred_total``. Requests without the token never spend the rate: a stranger
cannot use up Alertmanager's share.

Transport-free: the HTTP server calls ``handle`` with what it read and writes back the status and the
JSON it returns (an answer's ``retry_after`` becomes the ``Retry-After`` header, bot.edge.routes). Alertmanager retries a webhook on 5xx within the notification and not
on 4xx (notify/webhook/webhook.go ``Retrier``: "5xx response codes are assumed to be recoverable"), so a
body gpubot can never read is answered 4xx and a failure of ours 5xx. A 429 is not lost either: a
notification that failed is not written to Alertmanager's notification log, so the group's next flush
(``group_interval``) sends its firing alerts again; Alertmanager does not read ``Retry-After``, other
senders may. 429 rather than 503 because an immediate retry with backoff is what a flood must not
get. No answer carries a traceback.
"""
from __future__ import annotations

import hmac
import logging
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Callable, Mapping

from bot.alerts.alertmanager import MAX_BODY, AlertBatch, MalformedAlert, PayloadTooLarge, parse_webhook
from bot.metrics import count_deferred

log = logging.getLogger(__name__)
Answer = tuple[int, dict]
# Alertmanager's webhook timeout is 10 s by default (http_config); answering in well under one second
# leaves it no reason to send the same notification twice.
ANSWER_WITHIN = 0.5
SINK_THREADS = 4
# Default of GPUBOT_ALERTMANAGER_RATE: Alertmanager posts once per group per group_interval (5 m in
# deploy/prometheus/alertmanager-receiver.yaml), so even a hundred groups firing at once fit in one burst.
RATE_PER_MINUTE = 120


class Deferred(Exception):
    """The sink cannot take the batch now (its inbox is full): answered 429, try again in ``retry_after`` s."""

    def __init__(self, reason: str, *, retry_after: float) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class RequestRate:
    """A token bucket: ``per_minute`` requests at once, then one every 60/``per_minute`` seconds.

    Twenty lines of our own rather than a rate-limit package: one bucket, in memory, per replica."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute < 1:
            raise ValueError(f"a rate of at least 1 request a minute, got {per_minute}")
        self._capacity = float(per_minute)
        self._per_second = per_minute / 60.0
        self._clock = clock
        self._tokens = self._capacity
        self._at = clock()
        self._lock = threading.Lock()

    def take(self) -> float:
        """0 when a request may go now (and it is counted), else the seconds until one may."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self._capacity, self._tokens + (now - self._at) * self._per_second)
            self._at = now
            if self._tokens >= 1:
                self._tokens -= 1
                return 0.0
            return (1 - self._tokens) / self._per_second


class AlertmanagerEndpoint:
    def __init__(self, token: str | None, sink: Callable[[AlertBatch], "bool | None"], *, cluster: str = "",
                 answer_within: float = ANSWER_WITHIN, rate: int = RATE_PER_MINUTE) -> None:
        """``sink``: stores the batch; returns False when it had the same notification already, raises
        Deferred when it has no room for it now. ``rate``: requests a minute the token may send."""
        self._token = token.encode() if token else None
        self._sink = sink
        self._cluster = cluster
        self._answer_within = answer_within
        self._rate = RequestRate(rate)
        self._threads = ThreadPoolExecutor(SINK_THREADS, thread_name_prefix="gpubot-am-sink")

    def handle(self, method: str, headers: Mapping[str, str], body: bytes) -> Answer:
        if method.upper() != "POST":
            return 405, {"error": "use POST: Alertmanager's webhook receiver posts its alerts"}
        if self._token is None:
            return 503, {"error": "the Alertmanager intake is off: set GPUBOT_ALERTMANAGER_TOKEN to enable it"}
        if not self._authorized(headers):
            return 401, {"error": "missing or wrong bearer token: set http_config.authorization on the receiver"}
        wait = self._rate.take()
        if wait:
            return self._deferred("rate_limited", wait, "more webhook requests than GPUBOT_ALERTMANAGER_RATE allows")
        if len(body) > MAX_BODY:  # before parsing: never decode what will be refused anyway
            return 413, {"error": f"body over {MAX_BODY:,} bytes: set max_alerts on the gpubot webhook receiver"}
        try:
            batch = parse_webhook(body, cluster=self._cluster)
        except PayloadTooLarge as exc:
            return 413, {"error": str(exc)}
        except MalformedAlert as exc:
            return 400, {"error": str(exc)}
        stored = self._threads.submit(self._sink, batch)
        try:
            fresh = stored.result(timeout=self._answer_within)
        except Deferred as full:
            log.warning("Alertmanager batch %r (%d alerts) not stored: %s; answered 429", batch.group_key,
                        len(batch.alerts), full)
            return self._deferred("inbox_full", full.retry_after, "too many alerts wait to be handled")
        except FutureTimeout:
            log.warning("Alertmanager batch %r (%d alerts) not stored within %g s (the database is busy); "
                        "answered 503, Alertmanager will retry", batch.group_key, len(batch.alerts),
                        self._answer_within)
            return 503, {"error": "gpubot's database is busy; Alertmanager will retry these alerts"}
        except Exception as exc:  # a bug or an outage of ours: Alertmanager will retry a 5xx
            log.error("Alertmanager batch %r (%d alerts) not handled: %s", batch.group_key, len(batch.alerts),
                      " ".join(f"{type(exc).__name__}: {exc}".split()), exc_info=True)
            return 500, {"error": "gpubot could not handle these alerts; Alertmanager will retry. See gpubot's log."}
        if fresh is False:
            return 202, {"accepted": len(batch.alerts), "duplicate": True}
        return 202, {"accepted": len(batch.alerts)}

    def close(self) -> None:
        self._threads.shutdown(wait=False)

    @staticmethod
    def _deferred(reason: str, wait: float, why: str) -> Answer:
        count_deferred(reason)
        seconds = max(1, math.ceil(wait))  # Retry-After takes whole seconds (RFC 9110 10.2.3)
        return 429, {"error": f"{why}: try again in {seconds} s", "retry_after": seconds}

    def _authorized(self, headers: Mapping[str, str]) -> bool:
        values = [v for k, v in headers.items() if k.lower() == "authorization"]
        if len(values) != 1:
            return False
        scheme, _, credentials = values[0].strip().partition(" ")
        # RFC 7235: the scheme is case-insensitive; compare_digest so timing says nothing of the token.
        return scheme.lower() == "bearer" and hmac.compare_digest(credentials.strip().encode(), self._token)
