"""What each faked Web API method answers, shaped like Slack's documented responses.

Each method takes the state and the call's arguments and returns the JSON body. Response shapes follow
the examples on docs.slack.dev/reference/methods/<method> (chat.postMessage, chat.update,
chat.postEphemeral, chat.delete, chat.getPermalink, views.open, views.update, views.publish,
conversations.info, users.info, auth.test, apps.connections.open, files.getUploadURLExternal,
files.completeUploadExternal); error names are Slack's own.
"""
from __future__ import annotations

import copy
import itertools
import json
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
    # Files of the external upload flow by id (``UploadedFile``), and where upload URLs are served.
    files: dict[str, "UploadedFile"] = field(default_factory=dict)
    root_url: Callable[[], str] = lambda: "http://127.0.0.1"
    scopes: frozenset[str] = frozenset()
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


@dataclass
class UploadedFile:
    """A file between files.getUploadURLExternal and files.completeUploadExternal (and after)."""
    id: str
    filename: str
    length: int
    alt_txt: str = ""
    data: bytes | None = None  # the bytes POSTed to the upload URL
    title: str = ""
    shares: list[dict] = field(default_factory=list)  # {"channel", "thread_ts", "ts"} per completed share
    completed: bool = False


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


def _check_slack_files(blocks: list, state: SlackState, *, error: str) -> None:
    """An image's ``slack_file`` must name a file whose upload was completed (Block Kit's Slack file
    object: "the user posting these blocks must have access to this file")."""
    for i, block in enumerate(blocks or []):
        ref = block.get("slack_file") if isinstance(block, dict) else None
        if not isinstance(ref, dict) or "id" not in ref:
            continue
        with state.lock:
            known = state.files.get(str(ref["id"]))
        if known is None or not known.completed:
            raise SlackError(error, [f"[ERROR] invalid slack file [json-pointer:/blocks/{i}/slack_file]"])


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
    _check_slack_files(args.get("blocks"), state, error="invalid_blocks")
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


def chat_get_permalink(state: SlackState, args: dict) -> dict:
    """https://docs.slack.dev/reference/methods/chat.getPermalink: the message's URL,
    https://<workspace>.slack.com/archives/<channel>/p<ts without its dot>; a reply's carries
    ``?thread_ts=<parent>&cid=<channel>``. Errors: channel_not_found, message_not_found."""
    channel = _required(args, "channel", "channel_not_found")
    if channel[:1] not in ("C", "G", "D"):
        raise SlackError("channel_not_found")
    ts = _required(args, "message_ts", "message_not_found")
    with state.lock:
        message = state.messages.get((channel, ts))
    if message is None:
        raise SlackError("message_not_found")
    link = f"{ws.TEAM_URL.rstrip('/')}/archives/{channel}/p{ts.replace('.', '')}"
    parent = message.get("thread_ts")
    if parent and parent != ts:
        link += f"?thread_ts={parent}&cid={channel}"
    return {"ok": True, "channel": channel, "permalink": link}


def _need_scope(state: SlackState, scope: str) -> None:
    """Slack's answer to a token without the method's scope (names both, as Slack does)."""
    if scope not in state.scopes:
        raise MissingScope(needed=scope, provided=",".join(sorted(state.scopes)))


class MissingScope(SlackError):
    def __init__(self, *, needed: str, provided: str):
        super().__init__("missing_scope")
        self.needed, self.provided = needed, provided

    def body(self) -> dict:
        return {**super().body(), "needed": self.needed, "provided": self.provided}


def files_get_upload_url_external(state: SlackState, args: dict) -> dict:
    """https://docs.slack.dev/reference/methods/files.getUploadURLExternal (scope files:write, Tier 4):
    ``filename`` and ``length`` (bytes) required; a zero or missing length is ``missing_argument``
    (Slack: "typically only occurs when the length provided is 0"); alt_txt at most 1000 characters."""
    _need_scope(state, "files:write")
    filename = args.get("filename")
    if not filename:
        raise SlackError("invalid_arguments", ["[ERROR] missing required field: filename"])
    try:
        length = int(str(args.get("length") or "0"))
    except ValueError:
        raise SlackError("invalid_arguments", ["[ERROR] length must be an integer"]) from None
    if length <= 0:
        raise SlackError("missing_argument")
    alt_txt = str(args.get("alt_txt") or "")
    if len(alt_txt) > 1000:
        raise SlackError("alt_txt_too_large")
    file_id = state.next_id("F")
    with state.lock:
        state.files[file_id] = UploadedFile(id=file_id, filename=str(filename), length=length, alt_txt=alt_txt)
    return {"ok": True, "upload_url": f"{state.root_url()}/upload/v1/{file_id}", "file_id": file_id}


def upload_bytes(state: SlackState, file_id: str, data: bytes) -> tuple[int, str]:
    """The POST to an upload URL: raw bytes (HTTP 200 "OK - <n>" as Slack's file service answers), or 404
    for a URL it never issued."""
    with state.lock:
        known = state.files.get(file_id)
        if known is None or known.completed:
            return 404, "file_not_found"
        known.data = data
    return 200, f"OK - {len(data)}"


def files_complete_upload_external(state: SlackState, args: dict) -> dict:
    """https://docs.slack.dev/reference/methods/files.completeUploadExternal (scope files:write, Tier 4):
    ``files`` = [{"id", "title"}]; shared to ``channel_id`` (in ``thread_ts`` if given) with
    ``initial_comment``, or kept private to the uploader without a channel. A file whose bytes never
    arrived, or arrived with another length than the one announced, is ``file_not_found``: Slack
    finishes only uploads its file service holds whole."""
    _need_scope(state, "files:write")
    raw = args.get("files")
    try:
        entries = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        entries = None
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) and e.get("id") for e in entries):
        raise SlackError("invalid_arguments", ["[ERROR] missing required field: files"])
    channel = args.get("channel_id") or None
    thread_ts = args.get("thread_ts") or None
    if channel is not None and str(channel)[:1] not in ("C", "G", "D"):
        raise SlackError("invalid_channel")
    if thread_ts is not None and channel is None:
        raise SlackError("invalid_arguments", ["[ERROR] thread_ts needs channel_id"])
    with state.lock:
        found = [state.files.get(str(e["id"])) for e in entries]
        for known in found:
            if known is None or known.completed or known.data is None or len(known.data) != known.length:
                raise SlackError("file_not_found")
        if thread_ts is not None and (str(channel), str(thread_ts)) not in state.messages:
            raise SlackError("message_not_found")
    answer = []
    for entry, known in zip(entries, found):
        assert known is not None
        known.title = str(entry.get("title") or known.filename)
        known.completed = True
        share: dict[str, Any] = {}
        if channel is not None:
            ts = state.next_ts()
            share = {"channel": str(channel), "thread_ts": thread_ts, "ts": ts,
                     "initial_comment": args.get("initial_comment") or ""}
            known.shares.append(share)
            message = {"type": "message", "subtype": "file_share", "user": ws.BOT_USER_ID, "bot_id": ws.BOT_ID,
                       "ts": ts, "text": share["initial_comment"], "files": [{"id": known.id}]}
            if thread_ts:
                message["thread_ts"] = str(thread_ts)
            with state.lock:
                state.messages[(str(channel), ts)] = message
        answer.append(_file_object(known, share))
    return {"ok": True, "files": answer}


def _file_object(known: UploadedFile, share: dict) -> dict:
    """The file object's fields Slack returns right after completion (docs.slack.dev/reference/objects/file-object)."""
    base = f"{ws.TEAM_URL.rstrip('/')}/files/{ws.BOT_USER_ID}/{known.id}/{known.filename}"
    obj: dict[str, Any] = {"id": known.id, "name": known.filename, "title": known.title,
                           "mimetype": "image/png" if known.filename.endswith(".png") else "application/octet-stream",
                           "size": known.length, "user": ws.BOT_USER_ID, "is_public": bool(share),
                           "url_private": f"https://files.slack.com/files-pri/{ws.TEAM_ID}-{known.id}/{known.filename}",
                           "permalink": base, "shares": {}}
    if share:
        kind = "private" if share["channel"][:1] in ("G", "D") else "public"
        reply = {"ts": share["ts"], "channel_name": ws.name_from_id(share["channel"]), "team_id": ws.TEAM_ID}
        if share.get("thread_ts"):
            reply["thread_ts"] = share["thread_ts"]
        obj["shares"] = {kind: {share["channel"]: [reply]}}
    return obj


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
    _check_slack_files(view.get("blocks") or [], state, error="invalid_arguments")
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
    "usergroups.users.list": usergroups_users_list, "chat.getPermalink": chat_get_permalink,
    "files.getUploadURLExternal": files_get_upload_url_external,
    "files.completeUploadExternal": files_complete_upload_external,
}
APP_TOKEN_METHODS = frozenset({"apps.connections.open"})
