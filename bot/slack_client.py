"""The one place gpubot's Slack Web API client is made. Every call passes the pacer (Slack's published
limits, per method and per channel: ``bot.delivery``) and honours a 429's Retry-After for every thread
and worker process. An answer is retried (429, 5xx, a dropped connection) until it is delivered or its
deadline passes; a best-effort call (progress) is sent only when there is room and dropped otherwise."""
from __future__ import annotations

import logging
import time
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler

from bot.delivery.pacer import Pacer, PaceTimeout
from bot.metrics import count_slack_call

log = logging.getLogger(__name__)

# Within one attempt, slack_sdk retries a dropped connection this many times; 429s and 5xx come back to
# the loop below, which waits (Retry-After, or backing off) and tries again until the answer's deadline.
MAX_RETRIES = 4
TIMEOUT_S = 10
# How long an answer keeps trying (a burst of 200 diagnoses in one workspace needs about four minutes
# of Tier 3 chat.update calls; an answer still undelivered after this is logged and dropped).
ANSWER_DEADLINE_S = 900.0
MAX_BACKOFF_S = 30.0


class Dropped(SlackClientError):
    """A best-effort call not sent: the method's window is too full to spare a slot for it."""


class Undelivered(SlackClientError):
    """A call that could not be made before its deadline (the pacer or Slack kept it waiting)."""


class PacedWebClient(WebClient):
    def __init__(self, *args: Any, pacer: Pacer, deadline_s: float = ANSWER_DEADLINE_S,
                 best_effort: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pacer = pacer
        self.deadline_s = deadline_s
        self.best_effort = best_effort

    def __deepcopy__(self, memo: dict) -> "PacedWebClient":
        # Bolt deep-copies a request's context for its lazy listeners: the copy keeps the one pacer.
        return paced_copy(self, self.pacer, deadline_s=self.deadline_s, best_effort=self.best_effort)

    def api_call(self, api_method: str, *, http_verb: str = "POST", files: dict | None = None,
                 data: dict | None = None, params: dict | None = None, json: dict | None = None,
                 headers: dict | None = None, auth: dict | None = None):
        channel = _channel_of(json, data, params)
        deadline = time.monotonic() + self.deadline_s
        attempt = 0
        while True:
            self._take_slot(api_method, channel, deadline)
            try:
                try:
                    return _counted(api_method, super().api_call(api_method, http_verb=http_verb, files=files, data=data, params=params,
                                            json=json, headers=headers, auth=auth))
                finally:
                    self.pacer.finished(api_method, channel)
            except SlackApiError as exc:
                status = getattr(exc.response, "status_code", 200)
                count_slack_call(api_method, status)
                if status == 429:
                    wait = retry_after(exc)
                    self.pacer.hold(api_method, channel, wait)
                elif status >= 500 and not self.best_effort:
                    wait = min(MAX_BACKOFF_S, 0.5 * 2.0 ** attempt)
                else:
                    raise
                if self.best_effort or time.monotonic() + wait > deadline:
                    raise
            except OSError as exc:  # the connection failed after slack_sdk's own retries
                count_slack_call(api_method, None)
                wait = min(MAX_BACKOFF_S, 0.5 * 2.0 ** attempt)
                if self.best_effort or time.monotonic() + wait > deadline:
                    raise
                log.info("%s to %s failed (%s); trying again in %.0f s", api_method, channel or "Slack", exc, wait)
            attempt += 1
            time.sleep(wait)

    def _take_slot(self, method: str, channel: str | None, deadline: float) -> None:
        if self.best_effort:
            if not self.pacer.try_acquire(method, channel):
                raise Dropped(f"{method} to {channel or 'Slack'} dropped: Slack's limit leaves no room for it")
            return
        try:
            self.pacer.acquire(method, channel, deadline)
        except PaceTimeout as exc:
            raise Undelivered(f"{method} to {channel or 'Slack'} not sent before its deadline ({exc})") from None


def make_web_client(*, token: str | None, base_url: str, timeout: int = TIMEOUT_S,
                    pacer: Pacer | None = None) -> PacedWebClient:
    """The bot's client. Bolt makes a plain client per request; ``PacedClients`` (handlers/pacing.py)
    swaps it for ``paced_copy`` of it, so listeners' calls are paced too."""
    return PacedWebClient(token=token, base_url=base_url, timeout=timeout, pacer=pacer or Pacer(),
                          retry_handlers=_retry_handlers())


def paced_copy(client: WebClient, pacer: Pacer, *, deadline_s: float = ANSWER_DEADLINE_S,
               best_effort: bool = False) -> PacedWebClient:
    """The same client (token, URL, team) passing ``pacer``: an answer (retried until ``deadline_s``) or,
    with ``best_effort``, a call that is sent at once or not at all."""
    paced = PacedWebClient(token=client.token, base_url=client.base_url, timeout=client.timeout, ssl=client.ssl,
                           proxy=client.proxy, headers=client.headers, logger=client.logger, pacer=pacer,
                           deadline_s=deadline_s, best_effort=best_effort,
                           retry_handlers=[] if best_effort else _retry_handlers())
    paced.default_params = dict(client.default_params)  # the team_id Bolt sets per request
    return paced


def best_effort(client: WebClient) -> PacedWebClient:
    """For calls worth less than a wait (a progress update is stale by the time a slot frees)."""
    pacer = client.pacer if isinstance(client, PacedWebClient) else Pacer()
    return paced_copy(client, pacer, best_effort=True)


def with_deadline(client: WebClient, seconds: float) -> WebClient:
    """The client giving up after ``seconds`` (a modal must open within its trigger's 3 s)."""
    if not isinstance(client, PacedWebClient):
        return client
    return paced_copy(client, client.pacer, deadline_s=seconds)


def retry_after(exc: SlackApiError, default: float = 1.0) -> float:
    """Seconds Slack asked to wait."""
    headers = getattr(exc.response, "headers", None) or {}
    for name, value in headers.items():
        if name.lower() == "retry-after":
            value = value[0] if isinstance(value, list) else value
            try:
                return max(0.0, float(value))
            except ValueError:
                return default
    return default


def _retry_handlers() -> list:
    # 429s and 5xx are not left to slack_sdk: the pacer must hear of a 429 (it holds the method for
    # everyone), and slack_sdk's backoff would not stop at the answer's deadline.
    return [ConnectionErrorRetryHandler(max_retry_count=MAX_RETRIES)]


def _counted(method: str, response):
    count_slack_call(method, getattr(response, "status_code", 200))
    return response


def _channel_of(*sources: dict | None) -> str | None:
    for source in sources:
        if source and source.get("channel"):
            return str(source["channel"])
    return None
