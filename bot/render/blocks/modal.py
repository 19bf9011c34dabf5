"""The modal that takes a pasted log for /gpu explain."""
from __future__ import annotations

import json

from bot.render.blocks import kit, limits
from bot.render.blocks.text import clean

CALLBACK_ID = "gpubot.explain"
BLOCK_ID = "log"
ACTION_ID = "text"


def explain_modal(*, channel_id: str) -> dict:
    """A views.open view; the submission carries the text in state.values.log.text and the channel
    to answer in as private_metadata ``{"channel": ...}``."""
    element = {"type": "plain_text_input", "action_id": ACTION_ID, "multiline": True,
               "max_length": limits.INPUT_MAX_LENGTH,
               "placeholder": kit.plain("Paste log lines, kubectl describe output or events")}
    return {
        "type": "modal",
        "callback_id": CALLBACK_ID,
        "title": kit.plain("Explain a log"),
        "submit": kit.plain("Explain"),
        "close": kit.plain("Cancel"),
        "private_metadata": json.dumps({"channel": channel_id}),
        "blocks": [
            {"type": "input", "block_id": BLOCK_ID, "label": kit.plain("Log text"), "element": element},
            kit.context("Up to 3000 characters here; for a whole log run `gpubot explain FILE`."),
        ],
    }


RESOLVE_CALLBACK_ID = "gpubot.resolve"
RESOLVE_BLOCK_ID = "resolution"


def resolve_modal(*, incident_id: int, title: str, channel_id: str | None, thread_ts: str | None) -> dict:
    """Resolve an incident, saying what fixed it: the next diagnosis of the same problem quotes it."""
    element = {"type": "plain_text_input", "action_id": ACTION_ID, "multiline": True, "max_length": 500,
               "placeholder": kit.plain("e.g. annotated the job with karpenter.sh/do-not-disrupt")}
    return {
        "type": "modal",
        "callback_id": RESOLVE_CALLBACK_ID,
        "title": kit.plain(f"Resolve #{incident_id}"[:24]),
        "submit": kit.plain("Resolve"),
        "close": kit.plain("Cancel"),
        "private_metadata": json.dumps({"incident": incident_id, "channel": channel_id, "thread": thread_ts}),
        "blocks": [
            kit.context(clean(title, 1900)),
            {"type": "input", "block_id": RESOLVE_BLOCK_ID, "optional": True,
             "label": kit.plain("What fixed it?"), "element": element},
        ],
    }
