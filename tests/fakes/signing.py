"""Signed requests to the bot's HTTP endpoint, as Slack sends them.

    slack = SlackRequests("http://127.0.0.1:3000", secret=SIGNING_SECRET)
    status, headers, body = slack.slash_command("why is pytorch-dist-job pending", response_url=...)

Signatures are Slack's v0 scheme: ``v0=`` + hex HMAC-SHA256 of ``v0:{timestamp}:{body}`` keyed by the
signing secret (docs.slack.dev/authentication/verifying-requests-from-slack). Bodies come from the
recorded shapes in ``tests/fixtures/slack`` via ``payloads``.
"""
from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import time
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from . import payloads

FORM = "application/x-www-form-urlencoded"
JSON = "application/json"


def sign(body: bytes, *, secret: str, timestamp: int | None = None) -> dict[str, str]:
    """The ``X-Slack-Request-Timestamp`` and ``X-Slack-Signature`` headers for ``body``."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


class Reply(NamedTuple):
    status: int
    headers: dict[str, str]
    body: str

    def json(self) -> Any:
        return json.loads(self.body)


class SlackRequests:
    """POSTs signed requests to ``{base_url}{path}`` (default ``/slack/events``), one connection each."""

    def __init__(self, base_url: str, *, secret: str, path: str = "/slack/events", timeout: float = 10):
        self.base_url = base_url.rstrip("/")
        self.secret = secret
        self.path = path
        self.timeout = timeout

    # -- transport -----------------------------------------------------------------------------
    def raw(self, body: bytes, headers: dict[str, str]) -> Reply:
        """POST exactly these bytes and headers: for forged, unsigned or stale requests."""
        parts = urlsplit(self.base_url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=self.timeout)
        try:
            conn.request("POST", (parts.path or "") + self.path, body=body, headers=headers)
            response = conn.getresponse()
            text = response.read().decode("utf-8", "replace")
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
        finally:
            conn.close()

    def post(self, body: str, *, content_type: str, timestamp: int | None = None) -> Reply:
        data = body.encode("utf-8")
        headers = {"Content-Type": content_type, **sign(data, secret=self.secret, timestamp=timestamp)}
        return self.raw(data, headers)

    def post_json(self, payload: dict) -> Reply:
        return self.post(json.dumps(payload), content_type=JSON)

    # -- what Slack sends ------------------------------------------------------------------------
    def slash_command(self, text: str, *, command: str = "/gpu", channel_id: str = "C0TRAIN",
                      user_id: str = "U0ALICE", response_url: str | None = None,
                      trigger_id: str | None = None) -> Reply:
        body = payloads.slash_command(text, command=command, channel_id=channel_id, user_id=user_id,
                                      response_url=response_url, trigger_id=trigger_id)
        return self.post(body, content_type=FORM)

    def event(self, event: dict) -> Reply:
        """Any event inside an ``event_callback`` envelope with a fresh ``event_id``."""
        return self.post_json(payloads.event_callback(event))

    def app_mention(self, text: str, *, channel: str = "C0TRAIN", ts: str | None = None,
                    user: str = "U0ALICE") -> Reply:
        return self.post_json(payloads.app_mention(text, channel=channel, ts=ts, user=user))

    def direct_message(self, text: str, *, channel: str = "D0ALICE", ts: str | None = None,
                       user: str = "U0ALICE", thread_ts: str | None = None) -> Reply:
        return self.post_json(payloads.direct_message(text, channel=channel, ts=ts, user=user, thread_ts=thread_ts))

    def thread_message(self, text: str, *, channel: str = "C0TRAIN", ts: str | None = None, thread_ts: str,
                       user: str = "U0ALICE") -> Reply:
        return self.post_json(payloads.thread_message(text, channel=channel, ts=ts, thread_ts=thread_ts, user=user))

    def block_action(self, action_id: str, value: str, *, channel: str = "C0TRAIN", message_ts: str,
                     user: str = "U0ALICE", message: dict | None = None, block_id: str | None = None,
                     response_url: str | None = None) -> Reply:
        payload = payloads.block_action(action_id, value, channel=channel, message_ts=message_ts, user=user,
                                        message=message, block_id=block_id, response_url=response_url)
        return self.post(payloads.form_payload(payload), content_type=FORM)

    def view_submission(self, callback_id: str, values: dict, private_metadata: str = "", *,
                        user: str = "U0ALICE", view_id: str | None = None) -> Reply:
        payload = payloads.view_submission(callback_id, values, private_metadata, user=user, view_id=view_id)
        return self.post(payloads.form_payload(payload), content_type=FORM)

    def url_verification(self, challenge: str) -> Reply:
        return self.post_json(payloads.url_verification(challenge))
