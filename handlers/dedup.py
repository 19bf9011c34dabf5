"""Slack delivers at least once: a retry (``X-Slack-Retry-Num``) or a duplicate is acknowledged and
not acted on again, whichever replica it reaches.

A global Bolt middleware, so it runs after Bolt has verified the request's signature (a forged request
never reaches the table) and before any listener. What identifies a delivery:

- an event: its ``event_id``, the same on every retry of it;
- a click: the action, the message or view it was on, the person, and the click's own ``action_ts`` and
  ``trigger_id`` (a retry repeats them, a second click gets new ones);
- a form submission: the view, its ``hash`` (which changes with every update) and the ``trigger_id``;
- a slash command: the bytes Slack signed, which include the invocation's own ``trigger_id``.

When the database cannot answer, the delivery is processed anyway: answering twice beats not at all.
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from typing import Callable

from slack_bolt import BoltRequest, BoltResponse
from slack_bolt.middleware import Middleware
from sqlalchemy.exc import SQLAlchemyError

from bot.store import DeliveryStore, StoreUnavailable

log = logging.getLogger(__name__)
# After a failure the table is left alone for this long: requests are not each held up by a
# database that is away, and the log gets one line per spell rather than one per request.
PAUSE_AFTER_FAILURE = 10.0


class DeliveryDedup(Middleware):
    def __init__(self, store: DeliveryStore, *, pause: float = PAUSE_AFTER_FAILURE) -> None:
        self._store = store
        self._pause = pause
        self._paused_until = 0.0

    @property
    def name(self) -> str:
        return "DeliveryDedup"

    def process(self, *, req: BoltRequest, resp: BoltResponse,
                next: Callable[[], BoltResponse]) -> BoltResponse | None:  # noqa: A002 - Bolt's keyword
        delivery = delivery_of(req)
        if delivery is None or self._first_time(*delivery):
            return next()
        kind, _ = delivery
        log.info("duplicate Slack %s delivery acknowledged and ignored (retry %s, reason %s)", kind,
                 _header(req, "x-slack-retry-num") or "none", _header(req, "x-slack-retry-reason") or "none")
        return BoltResponse(status=200, body="")

    def _first_time(self, kind: str, key: str) -> bool:
        if time.monotonic() < self._paused_until:
            return True
        try:
            return self._store.first_time(key, kind=kind)
        except (StoreUnavailable, SQLAlchemyError) as exc:
            self._paused_until = time.monotonic() + self._pause
            log.warning("Slack deliveries are not deduplicated for the next %.0f s (the database did not answer: "
                        "%s); a retried request may be answered twice", self._pause, " ".join(str(exc).split())[:200])
            return True


def delivery_of(req: BoltRequest) -> tuple[str, str] | None:
    """(kind, key) of a delivery worth deduplicating; None for anything else (url_verification, options)."""
    body = req.body or {}
    if body.get("type") == "event_callback" and body.get("event_id"):
        return "event", _key("event", body.get("team_id"), body["event_id"])
    if body.get("type") == "block_actions":
        action = (body.get("actions") or [{}])[0]
        container = body.get("container") or {}
        return "interaction", _key("block_actions", _user(body), action.get("action_id"), action.get("block_id"),
                                   action.get("action_ts"), container.get("message_ts") or container.get("view_id"),
                                   body.get("trigger_id"))
    if body.get("type") == "view_submission":
        view = body.get("view") or {}
        return "interaction", _key("view_submission", _user(body), view.get("id"), view.get("hash"),
                                   body.get("trigger_id"))
    if body.get("command"):
        # A retry repeats the exact bytes; in Socket Mode the payload has no bytes of its own.
        signed = req.raw_body if req.raw_body else json.dumps(body, sort_keys=True)
        return "command", _key("command", signed)
    return None


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode("utf-8")).hexdigest()


def _user(body: dict) -> str | None:
    return (body.get("user") or {}).get("id")


def _header(req: BoltRequest, name: str) -> str | None:
    values = req.headers.get(name) or []
    return values[0] if values else None
