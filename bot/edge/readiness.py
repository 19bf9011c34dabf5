"""What ``/readyz`` answers: ready, or the one reason this replica should get no requests now.

Not ready while the edge is stopping (SIGTERM), the database does not answer a ``SELECT 1``, Slack
refuses the bot token, or the diagnosis workers are down. Each check is cheap and cached for a few
seconds: the kubelet probes every 10 s per replica, and a probe must never queue behind a database that
hangs (the check runs in a thread of its own and is given up on after ``DB_TIMEOUT_S``).
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Callable

from sqlalchemy import Engine, text

from bot.store.tx import short

CACHE_S = 5.0
DB_TIMEOUT_S = 2.0
# auth.test is Tier 4 (100 a minute); once a minute per replica keeps a revoked token from going unseen.
SLACK_EVERY_S = 60.0
# Slack's answers that mean the token itself is refused (https://api.slack.com/methods/auth.test#errors).
TOKEN_REFUSED = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired",
                           "no_permission", "org_login_required", "ekm_access_denied"})


class SlackAuth:
    """Whether Slack took the bot token the last time it was asked (serve's auth.test, a refusal seen)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ok, self._reason = True, ""

    def mark(self, ok: bool, reason: str = "") -> None:
        with self._lock:
            self._ok, self._reason = ok, ("" if ok else reason or "Slack refused the bot token")

    def refused(self) -> str | None:
        with self._lock:
            return None if self._ok else self._reason


SLACK_AUTH = SlackAuth()


def mark_slack_auth(ok: bool, reason: str = "") -> None:
    """Record the outcome of an ``auth.test`` (or of any call Slack answered with a refused token)."""
    SLACK_AUTH.mark(ok, reason)


class Cached:
    """``check()`` (a reason, or None) at most once per ``every`` seconds, given up after ``timeout``."""

    def __init__(self, check: Callable[[], str | None], *, every: float, timeout: float, what: str) -> None:
        self._check, self._every, self._timeout, self._what = check, every, timeout, what
        self._thread = ThreadPoolExecutor(1, thread_name_prefix=f"gpubot-ready-{what}")
        self._lock = threading.Lock()
        self._running: Future | None = None
        self._at = float("-inf")
        self._reason: str | None = None

    def reason(self) -> str | None:
        with self._lock:
            if time.monotonic() - self._at < self._every:
                return self._reason
            if self._running is None:  # one check at a time: a hung one is not joined by more
                self._running = self._thread.submit(self._check)
            running = self._running
        try:
            reason = running.result(timeout=self._timeout)
        except FutureTimeout:
            return f"{self._what} did not answer within {self._timeout:g} s"
        except Exception as exc:  # noqa: BLE001 - the check's failure is the reason
            reason = f"{self._what}: {short(exc)}"
        with self._lock:
            if self._running is running:
                self._running, self._at, self._reason = None, time.monotonic(), reason
        return reason


def database_check(engine: Engine) -> Callable[[], str | None]:
    def check() -> str | None:
        try:
            with engine.connect() as connection:
                connection.execute(text("SELECT 1"))
        except Exception as exc:  # noqa: BLE001 - any failure to answer is "unreachable"
            return f"database unreachable: {short(exc)}"
        return None
    return check


def slack_token_check(client, auth: SlackAuth) -> Callable[[], str | None]:
    """``auth.test`` with ``client``: a refused token is recorded (and is the reason); Slack not
    answering is not the token's fault and leaves the last outcome as it was."""
    from slack_sdk.errors import SlackApiError

    def check() -> str | None:
        try:
            client.auth_test()
        except SlackApiError as exc:
            error = str((exc.response.data or {}).get("error", "")) if exc.response is not None else ""
            if error in TOKEN_REFUSED:
                auth.mark(False, f"Slack refused the bot token ({error}): set SLACK_BOT_TOKEN to a valid token")
        except OSError:
            pass
        else:
            auth.mark(True)
        return auth.refused()
    return check


class Readiness:
    def __init__(self, *, accepting: Callable[[], bool], database: Engine | None = None,
                 slack_client=None, workers_alive: Callable[[], bool] | None = None,
                 cache_s: float = CACHE_S, db_timeout: float = DB_TIMEOUT_S, slack_every_s: float = SLACK_EVERY_S,
                 slack_auth: SlackAuth = SLACK_AUTH) -> None:
        self._accepting = accepting
        self._database = Cached(database_check(database), every=cache_s, timeout=db_timeout,
                                what="database") if database is not None else None
        self._slack = Cached(slack_token_check(slack_client, slack_auth), every=slack_every_s, timeout=db_timeout,
                             what="Slack auth.test") if slack_client is not None else None
        self._workers_alive = workers_alive
        self._slack_auth = slack_auth

    def reason(self) -> str | None:
        """None when ready; else one line saying why not."""
        if not self._accepting():
            return "not accepting requests (stopping)"
        if self._database is not None and (reason := self._database.reason()):
            return reason
        if self._slack is not None:
            self._slack.reason()  # records its outcome; a timeout is Slack unreachable, not a refusal
        if reason := self._slack_auth.refused():
            return reason
        if self._workers_alive is not None and not self._workers_alive():
            return "the diagnosis workers are down"
        return None
