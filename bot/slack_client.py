"""The one place gpubot's Slack Web API client is made: every call it makes retries what Slack asks to be
retried (429 with Retry-After, 500/503, a dropped connection), a bounded number of times."""
from __future__ import annotations

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)

# Enough to ride out a Retry-After or two and a server blip; past that the caller logs what was lost.
MAX_RETRIES = 4
TIMEOUT_S = 10


def make_web_client(*, token: str | None, base_url: str, timeout: int = TIMEOUT_S) -> WebClient:
    """The bot's client. Bolt copies its retry handlers into the client each listener receives."""
    return WebClient(token=token, base_url=base_url, timeout=timeout, retry_handlers=[
        RateLimitErrorRetryHandler(max_retry_count=MAX_RETRIES),  # sleeps the Retry-After Slack sends
        ServerErrorRetryHandler(max_retry_count=MAX_RETRIES),
        ConnectionErrorRetryHandler(max_retry_count=MAX_RETRIES),
    ])


def without_retries(client: WebClient) -> WebClient:
    """The same client that fails at once instead of waiting: for calls that are worth less than the
    wait (a progress update is stale by the time a Retry-After has passed)."""
    plain = WebClient(token=client.token, base_url=client.base_url, timeout=client.timeout, ssl=client.ssl,
                      proxy=client.proxy, headers=client.headers, logger=client.logger, retry_handlers=[])
    plain.default_params = dict(client.default_params)  # the team_id Bolt sets per request
    return plain
