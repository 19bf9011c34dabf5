"""Bolt hands each request a plain WebClient of its own; this middleware swaps it for the same client
passing the app's pacer, so every call a listener makes keeps to Slack's limits (bot.slack_client)."""
from __future__ import annotations

from typing import Callable

from slack_bolt import BoltRequest, BoltResponse
from slack_bolt.middleware import Middleware

from bot.delivery.pacer import Pacer
from bot.slack_client import PacedWebClient, paced_copy


class PacedClients(Middleware):
    def __init__(self, pacer: Pacer, *, deadline_s: float) -> None:
        self._pacer = pacer
        self._deadline_s = deadline_s

    @property
    def name(self) -> str:
        return "PacedClients"

    def process(self, *, req: BoltRequest, resp: BoltResponse,
                next: Callable[[], BoltResponse]) -> BoltResponse | None:  # noqa: A002 - Bolt's keyword
        client = req.context.client
        if client is not None and not isinstance(client, PacedWebClient):
            req.context["client"] = paced_copy(client, self._pacer, deadline_s=self._deadline_s)
        return next()
