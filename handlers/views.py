"""The explain form: a pasted log, explained privately to whoever pasted it."""
from __future__ import annotations

import json

from slack_bolt import App

from handlers import flows
from handlers.deps import Deps
from handlers.guard import guarded
from handlers.reply import Reply

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
        try:
            channel = json.loads(view.get("private_metadata") or "{}").get("channel")
        except ValueError:
            channel = None
        user = body["user"]["id"]
        # In the channel the form came from when possible, else a direct message.
        reply = Reply(client=client, channel=channel or user, user=user)
        flows.explain(reply, deps, text=text, private=bool(channel))

    app.view(CALLBACK_EXPLAIN)(ack=ack_explain, lazy=[run_explain])
