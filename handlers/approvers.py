"""Who is in the approvers' Slack user groups: ``usergroups.users.list``, cached for a few minutes
(Slack rates it Tier 2), so an Approve click costs no Slack call in the common case."""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

log = logging.getLogger(__name__)


class UserGroups:
    def __init__(self, client: WebClient, groups: Callable[[], frozenset[str]], *, ttl: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._client = client
        self._groups = groups  # the approvers' user groups of the current policy
        self._ttl = ttl
        self._clock = clock
        self._members: dict[str, tuple[float, frozenset[str]]] = {}
        self._lock = threading.Lock()

    def __call__(self, user: str) -> frozenset[str]:
        """The approvers' groups ``user`` belongs to. A group Slack cannot list counts as none of them
        (an approval is refused rather than granted on a failed read)."""
        return frozenset(g for g in self._groups() if user in self._members_of(g))

    def _members_of(self, group: str) -> frozenset[str]:
        now = self._clock()
        with self._lock:
            cached = self._members.get(group)
            if cached is not None and now - cached[0] < self._ttl:
                return cached[1]
        try:
            members = frozenset(self._client.usergroups_users_list(usergroup=group).get("users") or [])
        except SlackApiError as exc:
            log.warning("cannot list members of user group %s: %s", group, exc.response.get("error"))
            return cached[1] if cached is not None else frozenset()
        with self._lock:
            self._members[group] = (now, members)
        return members
