"""Slack's published limits, as the fake Slack enforces them (answers 429 with Retry-After past them).

Written from Slack's pages, independently of the bot's own table (bot/delivery/limits.py), so a wrong
table in the bot is caught here rather than agreed with:
- docs.slack.dev/apis/web-api/rate-limits: limits are per method per app per workspace; Tier 1: 1+ per
  minute, Tier 2: 20+, Tier 3: 50+, Tier 4: 100+; chat.postMessage "generally allows posting one message
  per second per channel, while also maintaining a workspace-wide limit" (unpublished; taken as 300 a
  minute here). Enforced as the floor of each tier in a sliding 60 s window.
- each method's reference page for its tier (chat.update, chat.delete: Tier 3; chat.postEphemeral,
  views.open/update/publish, users.info: Tier 4; conversations.info: Tier 3; usergroups.users.list: Tier 2;
  files.getUploadURLExternal, files.completeUploadExternal: Tier 4; chat.getPermalink: "special", "hundreds
  of requests per minute", not limited here).
- docs.slack.dev/interactivity/handling-user-interaction: a response_url may be used up to 5 times within
  30 minutes; a trigger_id expires 3 seconds after it was issued and can be used once.
"""
from __future__ import annotations

import math
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Callable

TIERS = {1: 1, 2: 20, 3: 50, 4: 100}
METHOD_TIER = {
    "chat.update": 3, "chat.delete": 3, "conversations.info": 3,
    "chat.postEphemeral": 4, "views.open": 4, "views.update": 4, "views.publish": 4, "views.push": 4,
    "users.info": 4, "usergroups.users.list": 2,
    "files.getUploadURLExternal": 4, "files.completeUploadExternal": 4,
}
POST_PER_CHANNEL_PER_S = 1
POST_WORKSPACE_PER_MINUTE = 300
RESPONSE_URL_USES = 5
RESPONSE_URL_LIFETIME_S = 30 * 60
TRIGGER_LIFETIME_S = 3.0


@dataclass
class Refusal:
    method: str
    channel: str | None
    retry_after: int
    at: float


@dataclass
class SlackLimits:
    clock: Callable[[], float] = time.monotonic
    refusals: list[Refusal] = field(default_factory=list)
    _calls: dict[tuple, deque] = field(default_factory=lambda: defaultdict(deque))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self, method: str, args: dict) -> int | None:
        """None: the call is within the limits (and is counted); else the Retry-After in seconds."""
        windows: list[tuple[tuple, int, float]] = []
        if method in METHOD_TIER:
            windows.append(((method,), TIERS[METHOD_TIER[method]], 60.0))
        if method == "chat.postMessage":
            windows.append(((method,), POST_WORKSPACE_PER_MINUTE, 60.0))
            windows.append(((method, str(args.get("channel"))), POST_PER_CHANNEL_PER_S, 1.0))
        now = self.clock()
        with self._lock:
            wait = 0.0
            for key, allowed, span in windows:
                calls = self._calls[key]
                while calls and now - calls[0] >= span:
                    calls.popleft()
                if len(calls) >= allowed:
                    wait = max(wait, calls[0] + span - now)
            if wait > 0:
                retry_after = max(1, math.ceil(wait))
                self.refusals.append(Refusal(method, args.get("channel"), retry_after, now))
                return retry_after
            for key, _, _ in windows:
                self._calls[key].append(now)
            return None


class Triggers:
    """trigger_ids the tests hand out (in payloads), so views.open can tell expired and reused ones."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._issued: dict[str, float] = {}
        self._used: set[str] = set()
        self._lock = threading.Lock()
        self._clock = clock

    def issue(self, trigger_id: str) -> str:
        with self._lock:
            self._issued[trigger_id] = self._clock()
        return trigger_id

    def use(self, trigger_id: str) -> str | None:
        """None if usable now (and marks it used), else Slack's error for it."""
        with self._lock:
            issued = self._issued.get(trigger_id)
            if issued is None:
                return "invalid_trigger_id"
            if trigger_id in self._used:
                return "exchanged_trigger_id"
            if self._clock() - issued > TRIGGER_LIFETIME_S:
                return "expired_trigger_id"
            self._used.add(trigger_id)
            return None


class ResponseUrls:
    """Uses of each response_url: five within thirty minutes of the first."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._uses: dict[str, list[float]] = defaultdict(list)
        self._lock = threading.Lock()
        self._clock = clock

    def use(self, path: str) -> str | None:
        now = self._clock()
        with self._lock:
            uses = self._uses[path]
            if uses and now - uses[0] > RESPONSE_URL_LIFETIME_S:
                return "expired_url"
            if len(uses) >= RESPONSE_URL_USES:
                return "used_url"
            uses.append(now)
            return None


TRIGGERS = Triggers()  # one per test process: payloads issue, every FakeSlack checks
