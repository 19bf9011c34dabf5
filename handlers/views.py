"""The explain form: a pasted log, explained privately to whoever pasted it."""
from __future__ import annotations

import json
import re

from slack_bolt import App

from handlers import flows
from handlers.deps import Deps
from handlers.guard import guarded
from bot.errors import GpubotError
from bot.payloads import META_EXPLAIN

CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{2,30}$")

CALLBACK_EXPLAIN = "gpubot.explain"


def register(app: App, deps: Deps) -> None:
    def ack_explain(ack, view):
        text = (((view.get("state") or {}).get("values") or {}).get("log") or {}).get("text", {}).get("value") or ""
        if not text.strip():
            ack(response_action="errors", errors={"log": "Paste a log or kubectl describe output."})
            return
        ack()

    @guarded
    def run_explain(view, body, client):
        text = view["state"]["values"]["log"]["text"]["value"]
        user = body["user"]["id"]
        try:
            meta = json.loads(deps.signer.open(view.get("private_metadata"), action=META_EXPLAIN, conversation=None))
            channel = meta.get("channel") if isinstance(meta, dict) else None
        except (GpubotError, ValueError):
            channel = None  # not metadata gpubot wrote: answer in a direct message only
        if not isinstance(channel, str) or not CHANNEL_ID.match(channel):
            channel = None
        # Privately in the channel the form came from when possible, else a direct message.
        reply = deps.reply(client, channel=channel or user, user=user)
        flows.explain(reply, deps, text=text, private=bool(channel))  # a DM is private already

    app.view(CALLBACK_EXPLAIN)(ack=ack_explain, lazy=[run_explain])
