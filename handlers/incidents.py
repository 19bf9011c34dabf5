"""Incidents in Slack: Acknowledge / Resolve buttons and the App Home tab."""
from __future__ import annotations

import json
import logging

from slack_bolt import App
from sqlalchemy.exc import SQLAlchemyError

from bot.errors import GpubotError, UserError
from bot.payloads import ACTION_ACKNOWLEDGE, ACTION_RESOLVE, decode_incident
from bot.render.blocks import home_view, incident_action_blocks, resolve_modal
from bot.render.blocks.modal import RESOLVE_BLOCK_ID, RESOLVE_CALLBACK_ID
from bot.store import StoreUnavailable
from handlers.actions import reply_for
from handlers.deps import Deps
from handlers.guard import guarded
from handlers.reply import Reply

log = logging.getLogger(__name__)


def register(app: App, deps: Deps) -> None:
    @guarded
    def acknowledge(body, client):
        reply = reply_for(body, client)
        try:
            incident = _store(deps).acknowledge(_incident_id(body), actor=reply.user or "unknown")
        except GpubotError as exc:
            reply.error(str(exc))
            return
        text = f"Incident #{incident.id} acknowledged by <@{reply.user}>"
        reply.post(text=text, blocks=incident_action_blocks(text))

    @guarded
    def ask_resolution(body, client):
        """Resolve asks what fixed it: the next diagnosis of the same problem quotes the answer."""
        reply = reply_for(body, client)
        try:
            detail = _store(deps).get(_incident_id(body))
        except GpubotError as exc:
            reply.error(str(exc))
            return
        incident = detail.incident
        if incident.status == "resolved":
            note = f"incident #{incident.id} is already resolved"
            reply.error(note)
            return
        client.views_open(trigger_id=body["trigger_id"], view=resolve_modal(
            incident_id=incident.id, title=f"{incident.code} on {incident.target}: {incident.title}",
            channel_id=reply.channel, thread_ts=reply.thread_ts))

    @guarded
    def resolve(view, body, client):
        meta = json.loads(view.get("private_metadata") or "{}")
        value = ((view["state"]["values"].get(RESOLVE_BLOCK_ID) or {}).get("text") or {}).get("value") or ""
        user = body["user"]["id"]
        reply = Reply(client=client, channel=meta.get("channel") or user, user=user, thread_ts=meta.get("thread"))
        try:
            incident = _store(deps).resolve(int(meta.get("incident", 0)), actor=user, resolution=value.strip() or None)
        except GpubotError as exc:
            reply.error(str(exc))
            return
        text = f"Incident #{incident.id} resolved by <@{user}>" + (f": {incident.resolution}" if incident.resolution else "")
        reply.post(text=text, blocks=incident_action_blocks(text))

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
    app.action(ACTION_RESOLVE)(ack=lambda ack: ack(), lazy=[ask_resolution])
    app.view(RESOLVE_CALLBACK_ID)(ack=lambda ack: ack(), lazy=[resolve])
    app.event("app_home_opened")(ack=lambda ack: ack(), lazy=[home])


def _store(deps: Deps):
    if deps.store is None:
        raise UserError("incidents are not recorded in this installation")
    return deps.store


def _incident_id(body: dict) -> int:
    return decode_incident(str((body.get("actions") or [{}])[0].get("value", "")))
