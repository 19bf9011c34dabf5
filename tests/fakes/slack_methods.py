"""What each faked Web API method answers, shaped like Slack's documented responses.

Each method takes the state and the call's arguments and returns the JSON body. Response shapes follow
the examples on docs.slack.dev/reference/methods/<method> (chat.postMessage, chat.update,
chat.postEphemeral, chat.delete, views.open, views.update, views.publish, conversations.info,
users.info, auth.test, apps.connections.open); error names are Slack's own.
"""
from __future__ import annotations

import copy
import itertools
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from . import workspace as ws
from .block_kit_limits import problems, view_problems
from .slack_limits import TRIGGERS

MAX_TEXT = 40_000
FIRST_TS_SECONDS = 1_767_225_600  # 2026-01-01T00:00:00Z


class SlackError(Exception):
    """An ``{"ok": false, "error": ...}`` answer, with Slack's explanation lines when it gives them."""

    def __init__(self, error: str, messages: list[str] | None = None):
        super().__init__(error)
        self.error = error
        self.messages = messages or []

    def body(self) -> dict:
        body: dict[str, Any] = {"ok": False, "error": self.error}
        if self.messages:
            body["errors"] = [m.removeprefix("[ERROR] ") for m in self.messages]
            body["response_metadata"] = {"messages": list(self.messages)}
        return body


@dataclass
class SlackState:
    """Messages and views the fake has accepted, so updates and deletes can be checked against them."""

    socket_url: Callable[[], str | None] = lambda: None
    messages: dict[tuple[str, str], dict] = field(default_factory=dict)
    views: dict[str, dict] = field(default_factory=dict)
    # User group id -> member ids, for usergroups.users.list (set by a test).
    usergroups: dict[str, list[str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _ts: itertools.count = field(default_factory=lambda: itertools.count(1))
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def next_ts(self) -> str:
        """Unique, increasing message timestamps: ``1767225600.000100``, ``1767225600.000200``, ..."""
        micros = next(self._ts) * 100
        return f"{FIRST_TS_SECONDS + micros // 1_000_000}.{micros % 1_000_000:06d}"

    def next_id(self, prefix: str) -> str:
        return f"{prefix}0{next(self._ids):08X}"

    def seed_message(self, channel: str, *, text: str = "", blocks: list | None = None, user: str = "U0ALICE",
                     ts: str | None = None) -> str:
        """Put a message that someone else posted into a channel (one the bot can answer but not edit)."""
        ts = ts or self.next_ts()
        message = {"type": "message", "user": user, "text": text, "ts": ts, "team": ws.TEAM_ID}
        if blocks is not None:
            message["blocks"] = blocks
        with self.lock:
            self.messages[(channel, ts)] = message
        return ts


def _required(args: dict, key: str, error: str) -> str:
    value = args.get(key)
    if value in (None, ""):
        raise SlackError(error)
    return str(value)


def _check_message(args: dict, *, need_content: bool = True) -> None:
    text, blocks, attachments = args.get("text"), args.get("blocks"), args.get("attachments")
    if need_content and not text and not blocks and not attachments:
        raise SlackError("no_text")
    if isinstance(text, str) and len(text) > MAX_TEXT:
        raise SlackError("msg_too_long")
    if blocks is not None:
        found = problems(blocks, surface="message")
        if found:
            raise SlackError("invalid_blocks", found)


def _with_block_ids(blocks: list, state: SlackState) -> list:
    """Slack gives every stored block a ``block_id`` when the app sent none."""
    stored = copy.deepcopy(blocks)
    for block in stored:
        if isinstance(block, dict):
            block.setdefault("block_id", state.next_id("b")[-5:])
    return stored


def _bot_message(args: dict, ts: str, state: SlackState) -> dict:
    message: dict[str, Any] = {
        "user": ws.BOT_USER_ID, "type": "message", "ts": ts, "bot_id": ws.BOT_ID, "app_id": ws.APP_ID,
        "text": args.get("text") or "", "team": ws.TEAM_ID,
        "bot_profile": {"id": ws.BOT_ID, "app_id": ws.APP_ID, "name": ws.BOT_USER_NAME, "team_id": ws.TEAM_ID,
                        "deleted": False},
    }
    if args.get("blocks") is not None:
        message["blocks"] = _with_block_ids(args["blocks"], state)
    if args.get("attachments") is not None:
        message["attachments"] = copy.deepcopy(args["attachments"])
    if args.get("thread_ts"):
        message["thread_ts"] = str(args["thread_ts"])
        message["parent_user_id"] = ws.BOT_USER_ID
    return message


def _channel_id(channel: str) -> str:
    """Posting to a user ID lands in the bot's DM with that user."""
    return "D" + channel[1:] if channel[:1] in ("U", "W") else channel


def chat_post_message(state: SlackState, args: dict) -> dict:
    channel = _channel_id(_required(args, "channel", "channel_not_found"))
    _check_message(args)
    ts = state.next_ts()
    message = _bot_message(args, ts, state)
    with state.lock:
        state.messages[(channel, ts)] = message
    return {"ok": True, "channel": channel, "ts": ts, "message": copy.deepcopy(message)}


def chat_update(state: SlackState, args: dict) -> dict:
    channel = _required(args, "channel", "channel_not_found")
    ts = _required(args, "ts", "message_not_found")
    _check_message(args)
    with state.lock:
        old = state.messages.get((channel, ts))
        if old is None:
            raise SlackError("message_not_found")
        if old.get("bot_id") != ws.BOT_ID:
            raise SlackError("cant_update_message")
        message = _bot_message(args, ts, state)
        if "thread_ts" in old:
            message["thread_ts"], message["parent_user_id"] = old["thread_ts"], old["parent_user_id"]
        message["edited"] = {"user": ws.BOT_USER_ID, "ts": state.next_ts()}
        state.messages[(channel, ts)] = message
    return {"ok": True, "channel": channel, "ts": ts, "text": message["text"], "message": copy.deepcopy(message)}


def chat_post_ephemeral(state: SlackState, args: dict) -> dict:
    _required(args, "channel", "channel_not_found")
    _required(args, "user", "user_not_in_channel")
    _check_message(args)
    return {"ok": True, "message_ts": state.next_ts()}


def chat_delete(state: SlackState, args: dict) -> dict:
    channel = _required(args, "channel", "channel_not_found")
    ts = _required(args, "ts", "message_not_found")
    with state.lock:
        old = state.messages.get((channel, ts))
        if old is None:
            raise SlackError("message_not_found")
        if old.get("bot_id") != ws.BOT_ID:
            raise SlackError("cant_delete_message")
        del state.messages[(channel, ts)]
    return {"ok": True, "channel": channel, "ts": ts}


def _check_view(args: dict) -> dict:
    view = args.get("view")
    if not isinstance(view, dict):
        raise SlackError("invalid_arguments", ["[ERROR] missing required field: view [json-pointer:/view]"])
    found = view_problems(view)
    if found:
        raise SlackError("invalid_arguments", found)
    return view


def _stored_view(state: SlackState, view: dict, *, view_id: str, root_view_id: str | None = None,
                 previous_view_id: str | None = None) -> dict:
    stored = {
        "id": view_id, "team_id": ws.TEAM_ID, "type": view["type"],
        "blocks": _with_block_ids(view.get("blocks") or [], state),
        "private_metadata": view.get("private_metadata", ""), "callback_id": view.get("callback_id", ""),
        "state": {"values": {}}, "hash": f"{state.next_ts()}.{view_id[-6:]}",
        "clear_on_close": view.get("clear_on_close", False), "notify_on_close": view.get("notify_on_close", False),
        "close": view.get("close"), "submit": view.get("submit"),
        "previous_view_id": previous_view_id, "root_view_id": root_view_id or view_id, "app_id": ws.APP_ID,
        "external_id": view.get("external_id", ""), "app_installed_team_id": ws.TEAM_ID, "bot_id": ws.BOT_ID,
    }
    if "title" in view:
        stored["title"] = copy.deepcopy(view["title"])
    with state.lock:
        state.views[view_id] = stored
    return {"ok": True, "view": copy.deepcopy(stored)}


def views_open(state: SlackState, args: dict) -> dict:
    _use_trigger(args)
    view = _check_view(args)
    return _stored_view(state, view, view_id=state.next_id("V"))


def views_push(state: SlackState, args: dict) -> dict:
    _use_trigger(args)
    view = _check_view(args)
    return _stored_view(state, view, view_id=state.next_id("V"))


def _use_trigger(args: dict) -> None:
    problem = TRIGGERS.use(_required(args, "trigger_id", "invalid_trigger_id"))
    if problem:
        raise SlackError(problem)


def views_update(state: SlackState, args: dict) -> dict:
    view = _check_view(args)
    with state.lock:
        external_id = args.get("external_id")
        found = [v for v in state.views.values()
                 if v["id"] == args.get("view_id") or (external_id and v["external_id"] == external_id)]
    if not found:
        raise SlackError("not_found")
    old = found[0]
    if args.get("hash") and args["hash"] != old["hash"]:
        raise SlackError("hash_conflict")
    return _stored_view(state, view, view_id=old["id"], root_view_id=old["root_view_id"],
                        previous_view_id=old["previous_view_id"])


def views_publish(state: SlackState, args: dict) -> dict:
    user = _required(args, "user_id", "user_not_found")
    view = _check_view(args)
    return _stored_view(state, view, view_id="V" + user[1:])


def conversations_info(state: SlackState, args: dict) -> dict:
    channel = _required(args, "channel", "channel_not_found")
    if channel[:1] not in ("C", "G", "D"):
        raise SlackError("channel_not_found")
    is_im = channel.startswith("D")
    info: dict[str, Any] = {
        "id": channel, "created": FIRST_TS_SECONDS - 86_400, "is_archived": False, "is_im": is_im,
        "is_channel": channel.startswith("C"), "is_group": False, "is_private": channel.startswith("G") or is_im,
        "is_member": True, "is_general": False, "context_team_id": ws.TEAM_ID,
    }
    if is_im:
        info["user"] = "U" + channel[1:]
    else:
        info["name"] = ws.name_from_id(channel)
        info["name_normalized"] = info["name"]
    return {"ok": True, "channel": info}


def users_info(state: SlackState, args: dict) -> dict:
    user = _required(args, "user", "user_not_found")
    if user[:1] not in ("U", "W"):
        raise SlackError("user_not_found")
    name = ws.BOT_USER_NAME if user == ws.BOT_USER_ID else ws.name_from_id(user)
    real = name.replace("-", " ").title()
    return {"ok": True, "user": {
        "id": user, "team_id": ws.TEAM_ID, "name": name, "deleted": False, "real_name": real, "tz": "Europe/Paris",
        "tz_offset": 3600, "is_admin": False, "is_bot": user == ws.BOT_USER_ID, "is_app_user": False,
        "profile": {"real_name": real, "display_name": name, "team": ws.TEAM_ID},
    }}


def usergroups_users_list(state: SlackState, args: dict) -> dict:
    """Members of a user group (https://api.slack.com/methods/usergroups.users.list): ``users`` is a
    list of ids; an unknown group is ``no_such_subteam``."""
    group = _required(args, "usergroup", "no_such_subteam")
    with state.lock:
        members = state.usergroups.get(group)
    if members is None:
        raise SlackError("no_such_subteam")
    return {"ok": True, "users": list(members)}


def auth_test(state: SlackState, args: dict) -> dict:
    return {"ok": True, "url": ws.TEAM_URL, "team": ws.TEAM_NAME, "user": ws.BOT_USER_NAME, "team_id": ws.TEAM_ID,
            "user_id": ws.BOT_USER_ID, "bot_id": ws.BOT_ID, "is_enterprise_install": False}


def api_test(state: SlackState, args: dict) -> dict:
    return {"ok": True, "args": {k: v for k, v in args.items() if k != "token"}}


def apps_connections_open(state: SlackState, args: dict) -> dict:
    url = state.socket_url()
    if url is None:
        # Not a Slack error: the test asked for Socket Mode without FakeSlack(socket_mode=True).
        raise SlackError("fake_socket_mode_not_started")
    return {"ok": True, "url": url}


METHODS: dict[str, Callable[[SlackState, dict], dict]] = {
    "chat.postMessage": chat_post_message, "chat.update": chat_update, "chat.postEphemeral": chat_post_ephemeral,
    "chat.delete": chat_delete, "views.open": views_open, "views.push": views_push, "views.update": views_update,
    "views.publish": views_publish, "conversations.info": conversations_info, "users.info": users_info,
    "auth.test": auth_test, "api.test": api_test, "apps.connections.open": apps_connections_open,
    "usergroups.users.list": usergroups_users_list,
}
APP_TOKEN_METHODS = frozenset({"apps.connections.open"})
