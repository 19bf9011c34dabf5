"""What the Snooze and Acknowledge buttons of an alert do, for a clicker already identified: check
they may read everything the alert speaks of, record it, and show it in the alert's message.

Handlers (handlers/alerts.py) only open the sealed value and pass the clicker's authorisation in;
the rules live here, beside the notifier that wrote the message."""
from __future__ import annotations

import logging
from datetime import datetime
from typing import Callable

from slack_sdk import WebClient
from sqlalchemy.exc import SQLAlchemyError

from bot.alerts import messages
from bot.alerts.buttons import SNOOZES
from bot.alerts.routing import ChannelReads, channel_closes
from bot.render.blocks.alert_masking import Closed
from bot.errors import UserError
from bot.payloads import Signer
from bot.store.alerts import AlertStore, GroupView
from bot.store.incidents import IncidentStore
from bot.store.tx import StoreUnavailable, utcnow

log = logging.getLogger(__name__)
# Raises (bot.errors.Refused) unless the clicker may read ``namespace`` of ``cluster`` where they clicked.
Authorise = Callable[[str, "str | None"], None]


class AlertClicks:
    def __init__(self, *, store: AlertStore, incidents: IncidentStore | None, signer: Signer, reads: ChannelReads,
                 clock: Callable[[], datetime] = utcnow) -> None:
        """``reads``: whether a channel's own grant opens a namespace (masked messages stay masked)."""
        self.store = store
        self.reads = reads
        self.incidents = incidents
        self.signer = signer
        self._clock = clock

    def snooze(self, group_id: int, *, action: str, actor: str, authorise: Authorise, client: WebClient) -> str:
        """Snooze for the period of ``action`` (one of bot.alerts.buttons.SNOOZES); what to tell the clicker."""
        snooze = SNOOZES[action]
        self._authorised(group_id, authorise)
        now = self._clock()
        if snooze.period is None:
            group = self.store.snooze(group_id, actor=actor, until_resolved=True)
            told = "until it resolves"
        else:
            group = self.store.snooze(group_id, actor=actor, until=now + snooze.period)
            told = f"for {_period(snooze.period.total_seconds())}"
        self._show(group, client, now)
        return f"Alert #{group.id} snoozed {told}: its message is not updated until then, and it is not posted again."

    def acknowledge(self, group_id: int, *, actor: str, authorise: Authorise, client: WebClient) -> str:
        self._authorised(group_id, authorise)
        group = self.store.acknowledge(group_id, actor=actor)
        self._acknowledge_incidents(group, actor)
        self._show(group, client, self._clock())
        return f"Alert #{group.id} acknowledged."

    def _authorised(self, group_id: int, authorise: Authorise) -> GroupView:
        group = self.store.get(group_id)
        for cluster, namespace in group.scopes:
            authorise(cluster, namespace)
        return group

    def _show(self, group: GroupView, client: WebClient, now: datetime) -> None:
        """The message says who snoozed or acknowledged it (a digest's message tells no single alert)."""
        if group.ts is None or group.in_digest:
            return
        # What the channel may not read, object by object, as the notifier drew it (a click must not mask more).
        closed = Closed(channel_closes(self.reads, group.channel, group.scopes))
        if messages.update(client, self.signer, group, now=now, closed=closed):
            self.store.mark_shown({group.id: messages.shown_key(group, now, closed=closed)})

    def _acknowledge_incidents(self, group: GroupView, actor: str) -> None:
        if self.incidents is None:
            return
        for incident_id in dict.fromkeys(m.incident_id for m in group.members if m.incident_id):
            try:
                self.incidents.acknowledge(incident_id, actor=actor)
            except UserError:
                pass  # resolved meanwhile: nothing to acknowledge
            except (StoreUnavailable, SQLAlchemyError) as exc:
                log.warning("alert #%s acknowledged, incident #%s not: %s", group.id, incident_id, exc)


def _period(seconds: float) -> str:
    hours = round(seconds / 3600)
    return f"{hours // 24} day{'s' if hours >= 48 else ''}" if hours % 24 == 0 else f"{hours} hour{'s' if hours != 1 else ''}"
