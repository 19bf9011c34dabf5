"""Incidents in Slack: Acknowledge / Resolve buttons and the App Home tab."""
from __future__ import annotations

import json
import logging
import uuid
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout

from slack_bolt import App
from slack_sdk import WebClient
from sqlalchemy.exc import SQLAlchemyError

from bot.errors import GpubotError, UserError
from bot.payloads import ACTION_ACKNOWLEDGE, ACTION_RESOLVE, META_RESOLVE, PayloadError, decode_incident, seal_blocks
from bot.policy import Access
from bot.render.blocks import home_view, incident_action_blocks, resolve_modal
from bot.render.blocks.incidents import action_text
from bot.render.blocks.modal import RESOLVE_BLOCK_ID, RESOLVE_CALLBACK_ID
from bot.store import StoreUnavailable
from bot.store.tx import STORE_UNAVAILABLE
from bot.store.incidents import IncidentDetail
from bot.permalinks import PERMALINKS
from bot.render.blocks.home import TOP_PER_SEVERITY
from handlers.actions import click_channel, opened_value, reply_for
from handlers.charts import home_chart
from handlers.deps import Deps
from handlers.forms import open_sealed_form
from handlers.guard import guarded

log = logging.getLogger(__name__)
# The store read deciding whether the Resolve form opens gets this long, leaving views.open the rest
# of the trigger's 3 s.
ACK_READ_BUDGET = 1.5
# Where the ack step leaves, for the lazy step, why the form did not open.
RESOLVE_REFUSAL = "gpubot_resolve_refusal"


def register(app: App, deps: Deps) -> None:
    @guarded
    def acknowledge(body, client):
        reply = reply_for(body, client, deps)
        try:
            incident_id = _incident_id(body, deps, ACTION_ACKNOWLEDGE)
            incident = _store(deps).acknowledge(incident_id, actor=reply.user or "unknown",
                                                access=_access(deps, reply.user, click_channel(body)))
        except GpubotError as exc:
            reply.error(str(exc))
            return
        text = f"Incident #{incident.id} acknowledged by <@{reply.user}>"
        reply.post(text=text, blocks=incident_action_blocks(text))

    reads = ThreadPoolExecutor(max_workers=4, thread_name_prefix="gpubot-ack-read")

    def ack_resolution(ack, body, client, context):
        """Resolve asks what fixed it (the next diagnosis of the same problem quotes the answer), in a form
        opened now: the click's trigger_id lives 3 s. What stops it is told privately in the lazy step."""
        context[RESOLVE_REFUSAL] = _open_resolve_form(body, client, deps, reads)
        ack()

    @guarded
    def ask_resolution(body, client, context):
        refusal = context.get(RESOLVE_REFUSAL)
        if refusal:
            reply_for(body, client, deps).error(refusal)

    @guarded
    def resolve(view, body, client):
        value = ((view["state"]["values"].get(RESOLVE_BLOCK_ID) or {}).get("text") or {}).get("value") or ""
        user = body["user"]["id"]
        try:
            meta = _resolve_metadata(deps, view.get("private_metadata"))
        except GpubotError as exc:
            deps.reply(client, channel=user, user=user).error(str(exc))
            return
        reply = deps.reply(client, channel=meta["channel"] or user, user=user, thread_ts=meta["thread"])
        try:
            # Authorised again on submission: the policy may have changed while the form was open.
            incident = _store(deps).resolve(meta["incident"], actor=user, resolution=value.strip() or None,
                                            access=_access(deps, user, meta["channel"]))
        except GpubotError as exc:
            reply.error(str(exc))
            return
        text = f"Incident #{incident.id} resolved by <@{user}>" + (f": {incident.resolution}" if incident.resolution else "")
        reply.post(text=action_text(text), blocks=incident_action_blocks(text))

    @guarded
    def home(event, client):
        # App Home has no channel: the person's own grant and the policy's "*" channel decide.
        access = _access(deps, event["user"], None)
        try:
            if deps.store:
                incidents = deps.store.list(status="open", limit=200, access=access)
                view = home_view(open_incidents=incidents, counts=deps.store.counts_by_code(access=access),
                                 links=PERMALINKS.for_incidents(client, _shown_on_home(incidents)),
                                 chart_file_id=home_chart(client, deps.store, access=access))
            else:
                view = home_view(open_incidents=[], counts={})
        except (StoreUnavailable, SQLAlchemyError) as exc:
            log.warning("App Home without incidents: %s", " ".join(str(exc).split())[:300])
            view = home_view(open_incidents=[], counts={}, failure=STORE_UNAVAILABLE)
        view["blocks"] = seal_blocks(view.get("blocks"), deps.signer, conversation=None)
        client.views_publish(user_id=event["user"], view=view)

    app.action(ACTION_ACKNOWLEDGE)(ack=lambda ack: ack(), lazy=[acknowledge])
    app.action(ACTION_RESOLVE)(ack=ack_resolution, lazy=[ask_resolution])
    app.view(RESOLVE_CALLBACK_ID)(ack=lambda ack: ack(), lazy=[resolve])
    app.event("app_home_opened")(ack=lambda ack: ack(), lazy=[home])


def _shown_on_home(incidents: list) -> list:
    """The incidents App Home lists (the first few of each severity): the only ones worth a link."""
    by_severity: dict[str, list] = {}
    for incident in incidents:
        by_severity.setdefault(incident.severity, []).append(incident)
    return [i for group in by_severity.values() for i in group[:TOP_PER_SEVERITY]]


def _open_resolve_form(body: dict, client: WebClient, deps: Deps, reads: ThreadPoolExecutor) -> str | None:
    """Open the resolve form for the incident the button names; None when it opened, else why not."""
    reply = reply_for(body, client, deps)

    def read() -> IncidentDetail:
        return _store(deps).get(_incident_id(body, deps, ACTION_RESOLVE),
                                access=_access(deps, reply.user, click_channel(body)))

    try:
        # Bounded: a database slower than this would make the form miss the trigger's 3 s anyway.
        incident = reads.submit(read).result(timeout=ACK_READ_BUDGET).incident
    except FutureTimeout:
        return "the incident database was too slow to answer: press Resolve again in a moment"
    except GpubotError as exc:
        return str(exc)
    except Exception:  # noqa: BLE001 - the lazy step tells the person; the traceback is logged here
        ref = uuid.uuid4().hex[:8]
        log.exception("the resolve form failed (ref %s)", ref)
        return f"Something went wrong on gpubot's side (ref {ref}); the details are in its log."
    if incident.status == "resolved":
        return f"incident #{incident.id} is already resolved"
    view = resolve_modal(incident_id=incident.id, title=f"{incident.code} on {incident.target}: {incident.title}",
                         channel_id=reply.channel, thread_ts=reply.thread_ts)
    return open_sealed_form(client, deps, trigger_id=body["trigger_id"], view=view, action=META_RESOLVE,
                            again="press Resolve again")


def _store(deps: Deps):
    if deps.store is None:
        raise UserError("incidents are not recorded in this installation")
    return deps.store


def _incident_id(body: dict, deps: Deps, action: str) -> int:
    return decode_incident(opened_value(body, deps, action))


def _access(deps: Deps, user: str | None, channel: str | None) -> Access:
    return deps.service.access(deps.asker(user, channel))


def _resolve_metadata(deps: Deps, sealed: object) -> dict:
    """The resolve form's metadata, if gpubot wrote it: incident id, and where to answer."""
    try:
        meta = json.loads(deps.signer.open(sealed, action=META_RESOLVE, conversation=None))
    except PayloadError as exc:
        raise PayloadError(str(exc).replace("this button", "this form")) from None
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        raise PayloadError("this form was not sent by gpubot")
    incident, channel, thread = meta.get("incident"), meta.get("channel"), meta.get("thread")
    if not isinstance(incident, int) or isinstance(incident, bool) or not 0 < incident < 2**31 \
            or not (channel is None or isinstance(channel, str)) or not (thread is None or isinstance(thread, str)):
        raise PayloadError("this form was not sent by gpubot")
    return {"incident": incident, "channel": channel, "thread": thread}
