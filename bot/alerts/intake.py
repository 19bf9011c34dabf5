"""``POST /alertmanager``: Alertmanager's webhook, authenticated with a bearer token, handed on as one
``AlertBatch``.

The sink only stores the batch (bot.alerts.inbox); handling it (diagnoses, Slack) happens afterwards, so
the answer never waits on a sweep, a diagnosis or Slack. Storing itself is bounded too: a sink that
has not returned within ANSWER_WITHIN seconds (a database holding its lock) is answered 503, which
Alertmanager retries; should the store still complete, the retry is recognised as the same
notification and changes nothing.

Transport-free: the HTTP server calls ``handle`` with what it read and writes back the status and the
JSON it returns. Alertmanager retries a webhook on 5xx and not on 4xx (notify/webhook/webhook.go
``Retrier``: "5xx response codes are assumed to be recoverable"), so a body gpubot can never read is
answered 4xx and a failure of ours 5xx. No answer carries a traceback.
"""
from __future__ import annotations

import hmac
import logging
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Callable, Mapping

from bot.alerts.alertmanager import MAX_BODY, AlertBatch, MalformedAlert, PayloadTooLarge, parse_webhook

log = logging.getLogger(__name__)
Answer = tuple[int, dict]
# Alertmanager's webhook timeout is 10 s by default (http_config); answering in well under one second
# leaves it no reason to send the same notification twice.
ANSWER_WITHIN = 0.5
SINK_THREADS = 4


class AlertmanagerEndpoint:
    def __init__(self, token: str | None, sink: Callable[[AlertBatch], "bool | None"], *, cluster: str = "",
                 answer_within: float = ANSWER_WITHIN) -> None:
        """``sink``: stores the batch; returns False when it had the same notification already."""
        self._token = token.encode() if token else None
        self._sink = sink
        self._cluster = cluster
        self._answer_within = answer_within
        self._threads = ThreadPoolExecutor(SINK_THREADS, thread_name_prefix="gpubot-am-sink")

    def handle(self, method: str, headers: Mapping[str, str], body: bytes) -> Answer:
        if method.upper() != "POST":
            return 405, {"error": "use POST: Alertmanager's webhook receiver posts its alerts"}
        if self._token is None:
            return 503, {"error": "the Alertmanager intake is off: set GPUBOT_ALERTMANAGER_TOKEN to enable it"}
        if not self._authorized(headers):
            return 401, {"error": "missing or wrong bearer token: set http_config.authorization on the receiver"}
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

    def _authorized(self, headers: Mapping[str, str]) -> bool:
        values = [v for k, v in headers.items() if k.lower() == "authorization"]
        if len(values) != 1:
            return False
        scheme, _, credentials = values[0].strip().partition(" ")
        # RFC 7235: the scheme is case-insensitive; compare_digest so timing says nothing of the token.
        return scheme.lower() == "bearer" and hmac.compare_digest(credentials.strip().encode(), self._token)
