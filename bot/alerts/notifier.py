"""From problems to Slack: one message per problem group (its cause where it has one: bot.alerts.causes),
posted once, updated when it changes, marked resolved when it clears; a burst of new groups becomes one
digest.

The order of work keeps the database the one source of truth: the report is written first (one
transaction, bot.store.alerts), then incidents are opened and closed, then Slack is told. A message is
posted only by the replica whose claim won (``AlertStore.claim_post``); a post or an update that
fails is logged and left for the next report, which finds the group unposted (its claim given back)
or its message showing an older state (``shown``), and tries again.
"""
from __future__ import annotations

import logging
import os
import socket
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Sequence

from slack_sdk import WebClient
from sqlalchemy.exc import SQLAlchemyError

from bot.alerts import messages
from bot.alerts.causes import by_cause
from bot.alerts.routing import AlertRouter
from bot.errors import UserError
from bot.payloads import Signer, seal_blocks
from bot.render.blocks.alert import digest_blocks, digest_text
from bot.render.blocks.alert_masking import Closed
from bot.store.alerts import AlertStore, AlertView, Batch, GroupView
from bot.store.incidents import IncidentStore
from bot.store.tx import StoreUnavailable, utcnow
from playbooks.model import Diagnosis, Evidence, Finding, Target
from playbooks.problems import Problem

log = logging.getLogger(__name__)
STATUSES = ("firing", "resolved")
ALERTMANAGER_RESOLVED = "Alertmanager sent resolved"
# Incidents opened or closed per report, at most: each is a transaction of its own (IncidentStore), so a
# burst of 500 new problems would hold the sweep for seconds; the rest follow in the next reports.
INCIDENTS_PER_REPORT = 100


@dataclass
class Summary:
    """What one report did in Slack and in the incident store."""

    posted: int = 0  # alert messages posted
    digests: int = 0  # digest messages posted (each in place of many)
    digested: int = 0  # groups told in those digests
    updated: int = 0  # messages updated while firing
    resolved: int = 0  # messages updated to say resolved
    snoozed: int = 0  # groups not posted or updated because they are snoozed
    unrouted: int = 0  # groups with nowhere to go (no route, no GPUBOT_ALERT_CHANNEL)
    claimed_elsewhere: int = 0  # groups another replica was posting
    failed: int = 0  # posts and updates Slack refused or did not answer (retried next report)
    incidents_opened: int = 0
    incidents_resolved: int = 0


def sweep_reason(at: datetime) -> str:
    return f"no longer seen by the sweep at {at.astimezone(timezone.utc):%H:%M} UTC"


class Notifier:
    def __init__(self, *, store: AlertStore, incidents: IncidentStore, client: WebClient, router: AlertRouter,
                 signer: Signer, digest_after: int, clock: Callable[[], datetime] = utcnow,
                 owner: str | None = None) -> None:
        """``digest_after``: more new groups than this for one channel in one report make a digest.
        ``owner``: this replica's name on its claims (default: host, process and a random suffix)."""
        self.store = store
        self.incidents = incidents
        self.client = client
        self.router = router
        self.signer = signer
        self.digest_after = digest_after
        self._clock = clock
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    # -- reports ------------------------------------------------------------------------------------

    def sweep_seen(self, problems: Sequence[Problem], cluster: str, *, complete: bool = True) -> Summary:
        """A sweep of ``cluster`` found ``problems`` (all of them, when ``complete``: what it alerted
        before and does not report now has cleared; an incomplete sweep clears nothing)."""
        batch = self.store.sweep(by_cause(problems), cluster=cluster, reason=sweep_reason(self._clock()), complete=complete)
        return self._deliver(batch)

    def alertmanager(self, alerts: Sequence[tuple[Problem, str]]) -> Summary:
        """Alertmanager's alerts, each with its status ``firing`` or ``resolved``."""
        for _, status in alerts:
            if status not in STATUSES:
                raise ValueError(f"an Alertmanager alert is firing or resolved, not {status!r}")
        firing = by_cause(p for p, status in alerts if status == "firing")
        resolved = [p for p, status in alerts if status == "resolved"]
        return self._deliver(self.store.alertmanager(firing, resolved, reason=ALERTMANAGER_RESOLVED))

    # -- delivery -----------------------------------------------------------------------------------

    def _deliver(self, batch: Batch) -> Summary:
        summary = Summary()
        now = self._clock()
        incidents = self._sync_incidents(summary)
        fresh: dict[str, list[GroupView]] = {}
        digests: set[tuple[str, str]] = set()
        for group in batch.groups:
            if group.ts is None:
                channel = self._new_channel(group, now, summary)
                if channel is not None:
                    fresh.setdefault(channel, []).append(group)
            elif group.in_digest:
                if messages.digest_key(group) != group.shown:
                    digests.add((group.channel, group.ts))
            elif messages.shown_key(group, now, closed=self._closed(group, group.channel)) != group.shown:
                if group.snoozed(now):
                    summary.snoozed += 1
                else:
                    self._update(group, now, summary)
        for channel, groups in fresh.items():
            if len(groups) > self.digest_after:
                self._post_digest(channel, groups, now, summary)
            else:
                for group in groups:
                    self._post(channel, group, now, incidents, summary)
        for channel, ts in sorted(digests):
            self._refresh_digest(channel, ts, now, summary)
        return summary

    def _closed(self, group: GroupView, channel: str) -> Closed:
        """What of the group ``channel`` may not read, held back and counted in its message: asked at every
        render, so a storm that spreads into another namespace, or an edited policy, is reflected in it."""
        return Closed(self.router.closes(channel, group.scopes))

    def _new_channel(self, group: GroupView, now: datetime, summary: Summary) -> str | None:
        """Where a group without a message goes, or None when it is not to be posted now."""
        if group.status != "firing":
            return None  # cleared before it was ever posted (snoozed, or nowhere to go)
        if group.snoozed(now):
            summary.snoozed += 1
            return None
        lead = group.members[0] if group.members else None
        found = self.router.destination(cluster=group.cluster, scopes=group.scopes,
                                        nodepool=lead.nodepool if lead else None, severity=group.severity)
        if found is None:
            summary.unrouted += 1
            return None
        return found.channel

    def _post(self, channel: str, group: GroupView, now: datetime, incidents: dict[int, int],
              summary: Summary) -> None:
        if not self.store.claim_post(group.id, owner=self.owner, channel=channel):
            summary.claimed_elsewhere += 1
            return
        closed = self._closed(group, channel)
        try:
            ts = messages.post(self.client, self.signer, group, channel=channel, now=now, closed=closed)
        except messages.SLACK_FAILURES as exc:
            log.warning("alert #%s not posted in %s, next report tries again: %s", group.id, channel,
                        messages.why(exc))
            self.store.release([group.id], owner=self.owner)
            summary.failed += 1
            return
        self.store.posted({group.id: messages.shown_key(group, now, closed=closed)}, channel=channel, ts=ts,
                          owner=self.owner)
        summary.posted += 1
        if not closed:  # an incident's thread is where its notes and approval requests go: never a masked one
            self._thread_incidents(group, channel, ts, incidents)

    def _update(self, group: GroupView, now: datetime, summary: Summary) -> None:
        closed = self._closed(group, group.channel)
        if not messages.update(self.client, self.signer, group, now=now, closed=closed):
            summary.failed += 1
            return
        self.store.mark_shown({group.id: messages.shown_key(group, now, closed=closed)})
        if group.status == "resolved":
            summary.resolved += 1
        else:
            summary.updated += 1

    def _post_digest(self, channel: str, groups: list[GroupView], now: datetime, summary: Summary) -> None:
        claimed = [g for g in groups if self.store.claim_post(g.id, owner=self.owner, channel=channel)]
        summary.claimed_elsewhere += len(groups) - len(claimed)
        if not claimed:
            return
        try:
            result = self.client.chat_postMessage(
                channel=channel, text=digest_text(claimed),
                blocks=seal_blocks(digest_blocks(claimed, now=now, closed=self._closed_by_id(claimed, channel)),
                                   self.signer, conversation=channel))
        except messages.SLACK_FAILURES as exc:
            log.warning("digest of %d alerts not posted in %s, next report tries again: %s", len(claimed), channel,
                        messages.why(exc))
            self.store.release([g.id for g in claimed], owner=self.owner)
            summary.failed += 1
            return
        self.store.posted({g.id: messages.digest_key(g) for g in claimed}, channel=channel, ts=result["ts"],
                          owner=self.owner, in_digest=True)
        summary.digests += 1
        summary.digested += len(claimed)

    def _closed_by_id(self, groups: Sequence[GroupView], channel: str) -> dict[int, Closed]:
        return {g.id: self._closed(g, channel) for g in groups}

    def _refresh_digest(self, channel: str, ts: str, now: datetime, summary: Summary) -> None:
        groups = self.store.in_message(channel, ts)
        try:
            self.client.chat_update(channel=channel, ts=ts, text=digest_text(groups),
                                    blocks=seal_blocks(digest_blocks(groups, now=now,
                                                                     closed=self._closed_by_id(groups, channel)),
                                                       self.signer, conversation=channel))
        except messages.SLACK_FAILURES as exc:
            log.warning("digest %s in %s not updated, next report tries again: %s", ts, channel, messages.why(exc))
            summary.failed += 1
            return
        self.store.mark_shown({g.id: messages.digest_key(g) for g in groups})
        summary.updated += 1

    # -- incidents ------------------------------------------------------------------------------------

    def _sync_incidents(self, summary: Summary) -> dict[int, int]:
        """Close the incidents of resolved alerts, then open one per new alert (closing first, so a
        problem back at once gets an incident of its own); alert id -> incident id opened now.
        A database failure here leaves the rest for the next report."""
        due = self.store.incidents_due(limit=INCIDENTS_PER_REPORT)
        closed: list[int] = []
        opened: dict[int, int | None] = {}
        try:
            for alert in due.to_close:
                if alert.incident_id is not None and self._resolve_incident(alert):
                    summary.incidents_resolved += 1
                closed.append(alert.id)
            for alert in due.to_open:
                recorded = self.incidents.record_diagnosis(_diagnosis(alert), actor="gpubot", source=alert.source)
                opened[alert.id] = recorded.incident.id if recorded else None
                if recorded is not None and recorded.created:
                    summary.incidents_opened += 1
        except (StoreUnavailable, SQLAlchemyError) as exc:
            log.warning("incidents of alerts not all recorded, next report goes on: %s", exc)
        if closed:
            self.store.incidents_closed(closed)
        if opened:
            self.store.incidents_opened(opened)
        return {alert_id: incident for alert_id, incident in opened.items() if incident is not None}

    def _resolve_incident(self, alert: AlertView) -> bool:
        try:
            self.incidents.resolve(alert.incident_id, actor="gpubot", resolution=alert.resolved_reason)
        except UserError:
            return False  # resolved already, by a person
        return True

    def _thread_incidents(self, group: GroupView, channel: str, ts: str, incidents: dict[int, int]) -> None:
        """The alert message becomes the thread of its problems' incidents (approval requests land there)."""
        ids = dict.fromkeys(i for i in (m.incident_id or incidents.get(m.id) for m in group.members) if i)
        try:
            for incident_id in ids:
                self.incidents.set_thread(incident_id, channel=channel, ts=ts)
                self.incidents.add_timeline(incident_id, kind="alert_sent", actor="gpubot",
                                            detail=f"alert posted in {channel}")
        except (StoreUnavailable, SQLAlchemyError, UserError) as exc:
            log.warning("alert #%s posted, its incidents not tied to the message: %s", group.id, exc)


def _diagnosis(alert: AlertView) -> Diagnosis:
    """The alert as a one-finding diagnosis: the incident store keys it by the same fingerprint."""
    finding = Finding(code=alert.code, severity=alert.severity, confidence="high", title=alert.title, detail="",
                      evidence=[Evidence(source=s, text=t) for s, t in alert.evidence])
    return Diagnosis(target=Target(kind=alert.target_kind, name=alert.target_name, namespace=alert.namespace),
                     summary=alert.title, findings=[finding], cluster=alert.cluster or None)
