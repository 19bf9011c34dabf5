"""The last line between a bug and Slack: log the traceback with a reference, tell the person in one
line. Expected errors (bad input, unreachable cluster) are handled before this, where they occur."""
from __future__ import annotations

import functools
import logging
import uuid
from typing import Callable

from bot.observe import failed, observed
from bot.render.blocks import error_blocks

log = logging.getLogger("gpubot.handlers")


def guarded(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - reported to the user and logged with its traceback
            ref = uuid.uuid4().hex[:8]
            failed()
            log.exception("listener %s failed (ref %s)", fn.__name__, ref)
            _tell(kwargs, f"Something went wrong on gpubot's side (ref {ref}); the details are in its log.")
    return observed(fn.__name__, wrapper)


def _tell(kwargs: dict, message: str) -> None:
    try:
        respond = kwargs.get("respond")
        if respond is not None:
            respond(text=message, blocks=error_blocks(message), response_type="ephemeral")
            return
        client, body = kwargs.get("client"), kwargs.get("body") or {}
        event = kwargs.get("event") or body.get("event") or {}
        channel = event.get("channel") or (body.get("channel") or {}).get("id")
        if client is not None and channel:
            client.chat_postMessage(channel=channel, thread_ts=event.get("thread_ts") or event.get("ts"),
                                    text=message, blocks=error_blocks(message))
    except Exception:  # noqa: BLE001 - telling the user failed too; the log has both
        log.exception("could not report the failure to Slack")
