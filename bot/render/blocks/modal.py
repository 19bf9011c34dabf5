"""The modal that takes a pasted log for /gpu explain."""
from __future__ import annotations

import json

from bot.render.blocks import kit, limits

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
