"""Incidents in Slack: Acknowledge / Resolve buttons and the App Home tab."""
from __future__ import annotations

import logging

from slack_bolt import App
from sqlalchemy.exc import SQLAlchemyError

from bot.errors import GpubotError, UserError
from bot.payloads import ACTION_ACKNOWLEDGE, ACTION_RESOLVE, decode_incident
from bot.render.blocks import error_blocks, home_view, incident_action_blocks
from bot.store import StoreUnavailable
from handlers.actions import reply_for
from handlers.deps import Deps
from handlers.guard import guarded

log = logging.getLogger(__name__)


def register(app: App, deps: Deps) -> None:
    def act(body, client, *, resolve: bool) -> None:
        reply = reply_for(body, client)
        user = reply.user or "unknown"
        try:
            incident_id = decode_incident(str((body.get("actions") or [{}])[0].get("value", "")))
            if deps.store is None:
                raise UserError("incidents are not recorded in this installation")
            incident = deps.store.resolve(incident_id, actor=user) if resolve else deps.store.acknowledge(incident_id, actor=user)
        except GpubotError as exc:
            reply.private(text=str(exc), blocks=error_blocks(str(exc)))
            return
        verb = "resolved" if resolve else "acknowledged"
        text = f"Incident #{incident.id} {verb} by <@{user}>"
        reply.post(text=text, blocks=incident_action_blocks(text))

    @guarded
    def acknowledge(body, client):
        act(body, client, resolve=False)

    @guarded
    def resolve(body, client):
        act(body, client, resolve=True)

    @guarded
    def home(event, client):
        try:
            view = home_view(open_incidents=deps.store.list(status="open", limit=200),
                             counts=deps.store.counts_by_code()) if deps.store else home_view(open_incidents=[], counts={})
        except (StoreUnavailable, SQLAlchemyError) as exc:
            log.warning("App Home without incidents: %s", exc)
            view = home_view(open_incidents=[], counts={}, failure=str(exc))
        client.views_publish(user_id=event["user"], view=view)

    app.action(ACTION_ACKNOWLEDGE)(ack=lambda ack: ack(), lazy=[acknowledge])
    app.action(ACTION_RESOLVE)(ack=lambda ack: ack(), lazy=[resolve])
    app.event("app_home_opened")(ack=lambda ack: ack(), lazy=[home])
