"""Where the answers to one interaction go: a message in the channel or thread, updated in place,
and private (ephemeral) notes to the person who asked. Falls back to the command's response_url when
the bot is not a member of the channel."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.payloads import Signer, seal_blocks
from bot.render.blocks import error_blocks

log = logging.getLogger(__name__)
_NOT_MEMBER = ("not_in_channel", "channel_not_found", "is_archived")


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
        if self.via_response_url:
            self.respond(text=text, blocks=self._sealed(blocks, self.channel), response_type="ephemeral",
                         replace_original=True)
        elif self.ts is None:
            self.post(text=text, blocks=blocks)
        else:
            self.client.chat_update(channel=self.channel, ts=self.ts, text=text, blocks=self._sealed(blocks, self.channel))

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
