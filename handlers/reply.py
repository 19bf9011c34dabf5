"""Where the answers to one interaction go: a message in the channel or thread, updated in place,
and private (ephemeral) notes to the person who asked. Falls back to the command's response_url when
the bot is not a member of the channel."""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.payloads import Signer, seal_blocks
from bot.slack_client import Dropped, Undelivered, best_effort, retry_after
from bot.render.blocks import error_blocks

log = logging.getLogger(__name__)
_NOT_MEMBER = ("not_in_channel", "channel_not_found", "is_archived")
# chat.update is Tier 3 (about 50 a minute for the workspace, shared with every answer): whatever the
# configured interval, one message is not updated with progress more often than this.
MIN_PROGRESS_INTERVAL_S = 3.0


@dataclass
class Reply:
    client: WebClient
    channel: str
    signer: Signer
    user: str | None = None
    thread_ts: str | None = None
    respond: Callable | None = None  # Bolt's respond(), for slash commands
    ts: str | None = None  # the message being updated in place
    via_response_url: bool = False
    _progress_at: float | None = field(default=None, init=False, repr=False)  # the last progress update sent
    _progress_not_before: float = field(default=0.0, init=False, repr=False)  # Slack's Retry-After
    _progress_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def _sealed(self, blocks: list[dict], channel: str | None) -> list[dict]:
        """Every button value sealed for the conversation it goes to (a user id: their DM, which has an
        id of its own, so the click is checked by authorisation alone)."""
        conversation = None if channel is None or channel[:1] in ("U", "W") else channel
        return seal_blocks(blocks, self.signer, conversation=conversation)

    def post(self, *, text: str, blocks: list[dict]) -> None:
        try:
            result = self.client.chat_postMessage(channel=self.channel, thread_ts=self.thread_ts, text=text,
                                                  blocks=self._sealed(blocks, self.channel))
            self.ts = result["ts"]
        except SlackApiError as exc:
            if self.respond is None or exc.response.get("error") not in _NOT_MEMBER:
                raise
            self.via_response_url = True
            self.respond(text=text, blocks=self._sealed(blocks, self.channel), response_type="ephemeral")

    def update(self, *, text: str, blocks: list[dict]) -> None:
        """Replace the message with an answer that must arrive: the client retries what Slack asks to be
        retried; what still fails is logged with where it was going and raised for the guard to report."""
        if self.via_response_url:
            self.respond(text=text, blocks=self._sealed(blocks, self.channel), response_type="ephemeral",
                         replace_original=True)
        elif self.ts is None:
            self.post(text=text, blocks=blocks)
        else:
            try:
                self.client.chat_update(channel=self.channel, ts=self.ts, text=text,
                                        blocks=self._sealed(blocks, self.channel))
            except SlackApiError as exc:
                log.error("answer not delivered to channel %s message %s after retries: %s",
                          self.channel, self.ts, exc.response.get("error"))
                raise
            except Undelivered as exc:
                log.error("answer not delivered to channel %s message %s: %s", self.channel, self.ts, exc)
                raise

    def progress(self, *, text: str, blocks: list[dict], every: float = MIN_PROGRESS_INTERVAL_S) -> None:
        """Best effort: show how the work is going, or drop it. Never more often than ``every`` seconds
        (at least MIN_PROGRESS_INTERVAL_S) per message, only when the pacer can spare the slot (half of
        chat.update's window is kept for answers), never waiting out a rate limit (a later update or the
        answer supersedes it), never through a response_url (5 uses in 30 minutes are kept for the
        answer)."""
        if self.via_response_url or self.ts is None:
            return
        now = time.monotonic()
        with self._progress_lock:
            if now < self._progress_not_before:
                return
            if self._progress_at is not None and now - self._progress_at < max(every, MIN_PROGRESS_INTERVAL_S):
                return
            self._progress_at = now
        try:
            best_effort(self.client).chat_update(channel=self.channel, ts=self.ts, text=text,
                                                     blocks=self._sealed(blocks, self.channel))
        except (OSError, Dropped) as exc:  # no room, or no connection: the next update or the answer follows
            log.debug("progress update of %s/%s dropped: %s", self.channel, self.ts, exc)
        except SlackApiError as exc:
            wait = retry_after(exc, default=0.0)
            with self._progress_lock:
                self._progress_not_before = max(self._progress_not_before, time.monotonic() + wait)
            log.debug("progress update of %s/%s dropped: %s (retry after %gs)", self.channel, self.ts,
                      exc.response.get("error"), wait)

    def private(self, *, text: str, blocks: list[dict]) -> None:
        """A note only the asker sees (in the thread when there is one)."""
        sealed = self._sealed(blocks, self.channel)
        if self.respond is not None and (self.via_response_url or self.user is None):
            self.respond(text=text, blocks=sealed, response_type="ephemeral")
            return
        try:
            self.client.chat_postEphemeral(channel=self.channel, user=self.user, thread_ts=self.thread_ts,
                                           text=text, blocks=sealed)
        except SlackApiError as exc:
            log.info("ephemeral message failed (%s); answering another way", exc.response.get("error"))
            if self.respond is not None:
                self.respond(text=text, blocks=sealed, response_type="ephemeral")
            elif self.user:
                # a direct message
                self.client.chat_postMessage(channel=self.user, text=text, blocks=self._sealed(blocks, self.user))
            else:
                raise

    def error(self, message: str) -> None:
        """A one-line problem (bad input, unknown object, cluster trouble) told only to the asker."""
        self.private(text=message, blocks=error_blocks(message))

    def withdraw(self) -> None:
        """Remove the in-progress message (its target turned out not to exist)."""
        if self.ts is not None and not self.via_response_url:
            self.client.chat_delete(channel=self.channel, ts=self.ts)
            self.ts = None

