"""Slack request bodies built from the recorded shapes in ``tests/fixtures/slack`` (see its README).

Each builder loads a fixture, fills in the fields a test chooses and returns the body Slack would
send: a form-encoded string for slash commands and interactions, a dict for Events API envelopes.
"""
from __future__ import annotations

import copy
import functools
import itertools
import json
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from . import workspace as ws
from .slack_limits import TRIGGERS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "slack"
_event_ids = itertools.count(1)
_ts = itertools.count(1)
_triggers = itertools.count(1)
MENTION = re.compile(r"<@([UW][A-Z0-9]+)>")


@functools.cache
def _fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8").strip()


def fixture(name: str) -> Any:
    """A fresh copy of a JSON fixture, or the text of a ``.txt`` one."""
    text = _fixture_text(name)
    return json.loads(text) if name.endswith(".json") else text


def event_ts() -> str:
    """A user message's ts, distinct from the fake Web API's (which start at 1767225600)."""
    return f"1767225000.{next(_ts) * 100:06d}"


def new_trigger_id() -> str:
    """A trigger_id as Slack issues one with an interaction: usable once, for 3 seconds."""
    return TRIGGERS.issue(f"8231847718{next(_triggers):03d}.1111111111.6f0c2b1de1a0c1e9b36a5a4b7b7d5e3a")


def channel_name(channel_id: str) -> str:
    return "directmessage" if channel_id.startswith("D") else ws.name_from_id(channel_id)


def slash_command(text: str, *, command: str = "/gpu", channel_id: str = "C0TRAIN", user_id: str = "U0ALICE",
                  response_url: str | None = None, trigger_id: str | None = None) -> str:
    """The form body of a slash command, fields in the order Slack sends them."""
    fields = dict(parse_qsl(fixture("slash_command.txt"), keep_blank_values=True))
    fields.update(channel_id=channel_id, channel_name=channel_name(channel_id), user_id=user_id,
                  user_name=ws.name_from_id(user_id), command=command, text=text,
                  trigger_id=trigger_id or new_trigger_id())
    if response_url is not None:
        fields["response_url"] = response_url
    return urlencode(fields)


def rich_text(text: str) -> list[dict]:
    """The ``rich_text`` block Slack attaches to a typed message, mentions as ``user`` elements."""
    elements: list[dict] = []
    position = 0
    for match in MENTION.finditer(text):
        if match.start() > position:
            elements.append({"type": "text", "text": text[position:match.start()]})
        elements.append({"type": "user", "user_id": match.group(1)})
        position = match.end()
    if position < len(text):
        elements.append({"type": "text", "text": text[position:]})
    section = {"type": "rich_text_section", "elements": elements}
    return [{"type": "rich_text", "block_id": "Sesm", "elements": [section]}]


def event_callback(event: dict, *, template: str = "app_mention.json") -> dict:
    """An Events API envelope around ``event``, with a unique ``event_id``."""
    envelope = fixture(template)
    envelope["event"] = event
    envelope["event_id"] = f"Ev{next(_event_ids):010d}"
    envelope["event_time"] = int(time.time())
    return envelope


def _typed_message(template: str, text: str, *, channel: str, ts: str | None, user: str) -> dict:
    envelope = fixture(template)
    event = envelope["event"]
    ts = ts or event_ts()
    event.update(text=text, user=user, channel=channel, ts=ts, event_ts=ts, blocks=rich_text(text))
    return event_callback(event, template=template)


def app_mention(text: str, *, channel: str = "C0TRAIN", ts: str | None = None, user: str = "U0ALICE") -> dict:
    return _typed_message("app_mention.json", text, channel=channel, ts=ts, user=user)


def direct_message(text: str, *, channel: str = "D0ALICE", ts: str | None = None, user: str = "U0ALICE",
                   thread_ts: str | None = None) -> dict:
    envelope = _typed_message("message_im.json", text, channel=channel, ts=ts, user=user)
    if thread_ts is not None:
        envelope["event"].update(thread_ts=thread_ts, parent_user_id=user)
    return envelope


def thread_message(text: str, *, channel: str = "C0TRAIN", ts: str | None = None, thread_ts: str,
                   user: str = "U0ALICE", parent_user_id: str | None = None) -> dict:
    envelope = _typed_message("message_thread.json", text, channel=channel, ts=ts, user=user)
    envelope["event"].update(thread_ts=thread_ts, parent_user_id=parent_user_id or user)
    return envelope


def _user(user: str) -> dict:
    name = ws.name_from_id(user)
    return {"id": user, "username": name, "name": name, "team_id": ws.TEAM_ID}


def block_action(action_id: str, value: str, *, channel: str = "C0TRAIN", message_ts: str, user: str = "U0ALICE",
                 message: dict | None = None, block_id: str | None = None, text: str = "Apply fix",
                 response_url: str | None = None) -> dict:
    """A button click on a message; ``message`` defaults to the fixture's bot message, re-stamped."""
    payload = fixture("block_actions.json")
    action = payload["actions"][0]
    action.update(action_id=action_id, value=value, text={"type": "plain_text", "text": text, "emoji": True},
                  action_ts=f"{int(time.time())}.744196")
    if block_id is not None:
        action["block_id"] = block_id
    payload["user"] = _user(user)
    payload["container"].update(message_ts=message_ts, channel_id=channel)
    payload["channel"] = {"id": channel, "name": channel_name(channel)}
    payload["message"] = copy.deepcopy(message) if message is not None else payload["message"]
    payload["message"]["ts"] = message_ts
    payload["trigger_id"] = new_trigger_id()
    if response_url is not None:
        payload["response_url"] = response_url
    return payload


def view_submission(callback_id: str, values: dict, private_metadata: str = "", *, user: str = "U0ALICE",
                    view_id: str | None = None, blocks: list | None = None) -> dict:
    """A modal's submit: ``values`` is ``view.state.values`` ({block_id: {action_id: {type, value}}})."""
    payload = fixture("view_submission.json")
    view = payload["view"]
    view.update(callback_id=callback_id, private_metadata=private_metadata, state={"values": values})
    if view_id is not None:
        view.update(id=view_id, root_view_id=view_id)
    if blocks is not None:
        view["blocks"] = blocks
    payload["user"] = _user(user)
    payload["trigger_id"] = new_trigger_id()
    return payload


def url_verification(challenge: str) -> dict:
    payload = fixture("url_verification.json")
    payload["challenge"] = challenge
    return payload


def form_payload(payload: dict) -> str:
    """Interactions arrive as ``payload=<url-encoded JSON>``."""
    return urlencode({"payload": json.dumps(payload, separators=(",", ":"))})
