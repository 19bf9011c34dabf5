"""The bot token checked with ``auth.test`` before ``gpubot serve`` builds anything on it, and in Socket
Mode the app-level token with ``apps.connections.open``.

Slack answering "invalid_auth" is final: one line and exit 3 (a restart will not fix a wrong Secret).
Slack not answering (DNS, a proxy, an egress policy, a 5xx) may pass: the check is retried with
exponential backoff and jitter (tenacity) until an overall deadline, then it is one line and exit 3 too,
so the pod restarts with CrashLoopBackOff instead of hanging with nothing in its log.
"""
from __future__ import annotations

import logging
import socket
import time
import urllib.error

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_delay, wait_exponential_jitter

from bot.errors import DependencyError, SlackAuthFailed, SlackUnreachable

log = logging.getLogger(__name__)
# How long start-up waits for Slack to answer at all; the probe port answers /healthz meanwhile, so the
# kubelet does not restart a pod that is only waiting.
CONNECT_DEADLINE_S = 120.0
ATTEMPT_TIMEOUT_S = 10
MAX_WAIT_S = 15.0


class _NoAnswer(Exception):
    """Slack did not answer usefully this time (no connection, a timeout, a 5xx or 429): try again."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SlackAppTokenRefused(SlackAuthFailed):
    """Slack refused the app-level token (apps.connections.open): Socket Mode cannot connect."""

    def __init__(self, error: str) -> None:
        DependencyError.__init__(self, f"Slack refused the app-level token ({error}): set SLACK_APP_TOKEN to an "
                                 "xapp-... token with the connections:write scope (the app's Basic Information > "
                                 "App-Level Tokens), and turn Socket Mode on for the app")
        self.error = error


def verify_bot_token(token: str, *, api_url: str, deadline: float = CONNECT_DEADLINE_S,
                     attempt_timeout: int = ATTEMPT_TIMEOUT_S) -> dict:
    """``auth.test``'s answer (team, user, bot id); SlackAuthFailed if Slack refuses the token,
    SlackUnreachable if it gave no answer within ``deadline`` seconds."""
    client = WebClient(token=token, base_url=api_url, timeout=attempt_timeout, retry_handlers=[])
    return _until_answered("auth.test", lambda: client.auth_test(), refused=SlackAuthFailed, api_url=api_url,
                           deadline=deadline)


def verify_app_token(token: str, *, api_url: str, deadline: float = CONNECT_DEADLINE_S,
                     attempt_timeout: int = ATTEMPT_TIMEOUT_S) -> dict:
    """The app-level token asked for a Socket Mode URL, the first call the Socket Mode client makes
    (https://api.slack.com/methods/apps.connections.open); SlackAppTokenRefused if Slack refuses it.
    The URL answered is left undialled: each call hands out a fresh one, and the handler asks again."""
    client = WebClient(token=token, base_url=api_url, timeout=attempt_timeout, retry_handlers=[])
    return _until_answered("apps.connections.open", lambda: client.apps_connections_open(app_token=token),
                           refused=SlackAppTokenRefused, api_url=api_url, deadline=deadline)


def _until_answered(method: str, call, *, refused: type[SlackAuthFailed], api_url: str, deadline: float) -> dict:
    started = time.monotonic()
    retrying = Retrying(
        retry=retry_if_exception_type(_NoAnswer),
        stop=stop_after_delay(deadline),
        wait=wait_exponential_jitter(initial=1.0, max=MAX_WAIT_S),
        before_sleep=lambda state: log.warning(
            "gpubot: Slack did not answer %s (%s); trying again in %.0f s", method,
            state.outcome.exception(), state.next_action.sleep if state.next_action else 0.0),
    )
    try:
        return retrying(_answer, call, refused)
    except RetryError as exc:
        last = exc.last_attempt.exception()
        reason = last.reason if isinstance(last, _NoAnswer) else str(last)
        raise SlackUnreachable(api_url, reason, waited=time.monotonic() - started) from None


def _answer(call, refused: type[SlackAuthFailed]) -> dict:
    try:
        return dict(call().data)
    except SlackApiError as exc:
        status = getattr(exc.response, "status_code", 200)
        if status == 429 or status >= 500:
            raise _NoAnswer(f"HTTP {status}") from None
        error = (exc.response.data or {}).get("error") if isinstance(exc.response.data, dict) else None
        raise refused(str(error or f"HTTP {status}")) from None
    except (OSError, urllib.error.URLError) as exc:
        raise _NoAnswer(connection_reason(exc)) from None


def connection_reason(exc: BaseException) -> str:
    """A failed connection in a few words: what urllib wraps is what happened."""
    cause = getattr(exc, "reason", exc)
    if isinstance(cause, ConnectionRefusedError):
        return "connection refused"
    if isinstance(cause, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(cause, socket.gaierror):
        return "unknown host"
    text = str(cause) or type(cause).__name__
    return " ".join(text.split())[:120]
