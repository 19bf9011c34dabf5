"""Recording a diagnosis as an incident, and the note it adds to the answer.

The database is a side show to the answer: when it is down, the diagnosis is still posted, with a
note that it was not recorded."""
from __future__ import annotations

import logging

from sqlalchemy.exc import SQLAlchemyError

from bot.payloads import seal_blocks
from bot.render.blocks import incident_note_blocks
from bot.store import StoreUnavailable
from bot.store.tx import STORE_UNAVAILABLE
from bot.render.blocks.text import escape
from bot.store.incidents import Recorded
from bot.threads import is_direct_message
from handlers.deps import Deps
from handlers.reply import Reply
from playbooks.model import Diagnosis

log = logging.getLogger(__name__)


def record(deps: Deps, diagnosis: Diagnosis, *, actor: str) -> tuple[Recorded | None, str | None]:
    if deps.store is None:
        return None, None
    try:
        return deps.store.record_diagnosis(diagnosis, actor=actor, source="slack"), None
    except StoreUnavailable as exc:
        return None, str(exc)
    except SQLAlchemyError:
        log.exception("recording the diagnosis failed")
        return None, STORE_UNAVAILABLE


def link_thread(deps: Deps, reply: Reply, recorded: Recorded | None, *, actor: str, summary: str) -> None:
    """A new incident lives in the thread of this answer; a known one collects this diagnosis in its
    own thread. A direct message is neither: what someone asks gpubot privately stays private, so it
    never becomes an incident's thread and no thread is told of it."""
    if recorded is None or deps.store is None or reply.ts is None or is_direct_message(reply.channel):
        return
    incident = recorded.incident
    root = reply.thread_ts or reply.ts
    try:
        if incident.slack_ts is None:
            deps.store.set_thread(incident.id, channel=reply.channel, ts=root)
        elif (incident.slack_channel, incident.slack_ts) != (reply.channel, root) and \
                not is_direct_message(incident.slack_channel) and \
                _channel_may_read(deps, incident.slack_channel, cluster=incident.cluster, namespace=incident.namespace):
            text = f"Diagnosed again by <@{actor}> in <#{reply.channel}>: {escape(summary)}"
            blocks = seal_blocks(incident_note_blocks(recorded), deps.signer, conversation=incident.slack_channel)
            reply.client.chat_postMessage(channel=incident.slack_channel, thread_ts=incident.slack_ts, text=text,
                                          blocks=blocks or None)
    except (StoreUnavailable, SQLAlchemyError):
        log.warning("could not link incident #%s to its Slack thread", incident.id)


def _channel_may_read(deps: Deps, channel: str, *, cluster: str, namespace: str | None) -> bool:
    """Whether everyone in ``channel`` may read the incident: the channel's own grant, not the grant of
    whoever happened to open the incident there (an admin's diagnosis of another team's namespace)."""
    return deps.service.channel_may_read(channel, cluster=cluster, namespace=namespace)


def note(recorded: Recorded | None, failure: str | None) -> list[dict]:
    return incident_note_blocks(recorded, failure=failure)
