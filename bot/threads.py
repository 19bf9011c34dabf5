"""Slack threads the bot answered in, where a pasted log gets explained.

Kept in memory and, when there is an incident store, in the database too: with several replicas
behind a Service, the paste may reach a replica that did not answer the thread."""
from __future__ import annotations

import logging

from bot.recent import Recent
from bot.store import IncidentStore, StoreUnavailable

log = logging.getLogger(__name__)


def is_direct_message(channel: str | None) -> bool:
    """A conversation of one person with gpubot (Slack's IM ids begin with D): what happens there is
    theirs alone, so no incident's thread lives there and no other thread tells of it."""
    return bool(channel) and channel.startswith("D")


class BotThreads:
    def __init__(self, store: IncidentStore | None, *, size: int = 2000) -> None:
        self._store = store
        self._recent: Recent[bool] = Recent(size)

    def remember(self, channel: str, thread_ts: str) -> None:
        self._recent.put((channel, thread_ts), True)
        if self._store is not None:
            try:
                self._store.remember_thread(channel, thread_ts)
            except StoreUnavailable as exc:
                log.warning("thread %s/%s is remembered by this replica only: %s", channel, thread_ts, exc)

    def knows(self, channel: str, thread_ts: str) -> bool:
        if (channel, thread_ts) in self._recent:
            return True
        if self._store is None:
            return False
        try:
            known = self._store.knows_thread(channel, thread_ts)
        except StoreUnavailable as exc:
            log.warning("cannot tell whether %s/%s is one of the bot's threads: %s", channel, thread_ts, exc)
            return False
        if known:
            self._recent.put((channel, thread_ts), True)
        return known
