"""Alertmanager's batches between the webhook's 202 and the notifier: stored first, handled afterwards.

``put`` is the webhook's sink: one INSERT, then the consumer is woken. The consumer is a thread on
every replica; it claims stored bodies (bot.store.webhooks: row locks on PostgreSQL, a guarded
``claimed_at`` on SQLite), reads each again and hands it to ``handle`` (``Alerts.intake``: diagnoses,
the alert store, Slack), however long that takes. It also wakes every POLL seconds for bodies another
replica stored and did not get to (it stopped, or died while handling).

The inbox is bounded (the store's ``max_rows`` / ``max_bytes``): a batch that finds it full is not
stored and ``put`` raises intake's ``Deferred``, which the webhook answers 429. Retry-After is one
poll: by then every live consumer has woken at least once and taken what it could.
"""
from __future__ import annotations

import logging
import math
import os
import socket
import threading
import uuid
from typing import Callable

from bot.alerts.alertmanager import AlertBatch, MalformedAlert, parse_webhook
from bot.alerts.intake import Deferred
from bot.store.tx import StoreUnavailable
from bot.store.webhooks import MAX_ATTEMPTS, InboxFull, WebhookStore

log = logging.getLogger(__name__)
POLL = 5.0


class Inbox:
    def __init__(self, store: WebhookStore, handle: Callable[[AlertBatch], None], *, cluster: str,
                 owner: str | None = None, poll: float = POLL) -> None:
        self.store = store
        self._handle = handle
        self._cluster = cluster
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._poll = poll
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def put(self, batch: AlertBatch) -> bool:
        """Store ``batch`` as received; False: the same notification was stored before. Raises Deferred
        when the inbox is full (nothing stored)."""
        try:
            fresh = self.store.put(batch.body, dedupe_key=batch.dedupe_key, alerts=len(batch.alerts))
        except InboxFull as full:
            self._wake.set()  # whatever fills it should be on its way out
            raise Deferred(str(full), retry_after=max(1, math.ceil(self._poll))) from None
        if fresh:
            self._wake.set()
        return fresh

    def drain(self) -> int:
        """Handle every stored batch nobody else is handling; how many were handled."""
        done = 0
        while not self._stop.is_set():
            claimed = self.store.claim(owner=self.owner)
            if not claimed:
                return done
            for stored in claimed:
                try:
                    self._handle(parse_webhook(stored.body, cluster=self._cluster))
                except MalformedAlert as exc:  # it parsed when stored: only a change of gpubot's rules gets here
                    log.error("Alertmanager batch #%d no longer reads, given up: %s", stored.id, exc)
                    self.store.failed(stored.id, owner=self.owner, error=str(exc), attempts=MAX_ATTEMPTS)
                except Exception as exc:
                    why = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
                    log.error("Alertmanager batch #%d (try %d) not handled, tried again later: %s", stored.id,
                              stored.attempts, why, exc_info=True)
                    self.store.failed(stored.id, owner=self.owner, error=why, attempts=stored.attempts)
                else:
                    self.store.handled(stored.id, owner=self.owner)
                    done += 1
        return done

    # -- the consumer thread ----------------------------------------------------------------------
    def start(self) -> "Inbox":
        self._thread = threading.Thread(target=self._run, name="gpubot-alertmanager-inbox", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self._poll)
            self._wake.clear()
            try:
                self.drain()
            except StoreUnavailable as exc:
                log.warning("Alertmanager batches not handled now, the next wake-up tries again: %s", exc)
            except Exception:  # a bug: loud, and the thread lives on for the next batch
                log.exception("Alertmanager inbox: unexpected failure")
