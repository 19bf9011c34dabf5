"""Alerts inside `gpubot serve`: the sweep (leader replica only, on APScheduler), Alertmanager's webhook
(every replica), and the one notifier both report to."""
from __future__ import annotations

import dataclasses
import logging
from datetime import datetime, timedelta, timezone

from apscheduler.schedulers.background import BackgroundScheduler
from slack_sdk import WebClient
from sqlalchemy import Engine

from bot.alerts.alertmanager import AlertBatch
from bot.alerts.inbox import Inbox
from bot.alerts.intake import AlertmanagerEndpoint
from bot.alerts.labels import DIAGNOSABLE
from bot.alerts.notifier import Notifier, Summary
from bot.alerts.routing import AlertRouter
from bot.alerts.sweep import SweepResult, sweep
from bot.errors import ClusterConfigError, GpubotError
from bot.observe import counted_alerts, timed_sweep
from bot.payloads import Signer
from bot.service import Asker, DiagnosisService
from bot.settings import Settings
from bot.store import IncidentStore
from bot.store.alerts import AlertStore
from bot.store.webhooks import WebhookStore
from playbooks.model import Evidence
from playbooks.problems import Problem

log = logging.getLogger(__name__)
SWEEP_JOB = "sweep"
PRUNE_JOB = "prune"
# Retention (bot.store.retention) runs daily, first a minute after start-up (serving comes first).
PRUNE_EVERY_S, PRUNE_FIRST_S = 86400.0, 60.0
# Alerts of one webhook call diagnosed before they are posted (the rest are posted with their labels
# alone): handled after the webhook's answer, but a storm of diagnoses would still delay the message.
MAX_ENRICHED = 5


def cluster_name(service: DiagnosisService) -> str:
    """The name alerts carry (the same the sweep and diagnoses use, so fingerprints agree)."""
    try:
        return service.gateway().name
    except GpubotError:
        return service.settings.cluster_name or ""


class Alerts:
    def __init__(self, settings: Settings, service: DiagnosisService, engine: Engine, client: WebClient,
                 signer: Signer, *, cluster: str) -> None:
        self.settings = settings
        self.service = service
        self.cluster = cluster
        self.router = AlertRouter(service.policy.current, default_channel=settings.alert_channel,
                                  reads=lambda channel, cluster, namespace: service.channel_may_read(
                                      channel, cluster=cluster, namespace=namespace))
        self.notifier = Notifier(store=AlertStore(engine), incidents=IncidentStore(engine), client=client,
                                 router=self.router, signer=signer, digest_after=settings.alert_digest_after)
        # The webhook stores what it accepts and answers; the inbox's consumer hands it to ``intake``.
        self.inbox = Inbox(WebhookStore(engine, max_rows=settings.alertmanager_inbox_rows,
                                        max_bytes=settings.alertmanager_inbox_bytes), self.intake, cluster=cluster)
        self.endpoint = AlertmanagerEndpoint(settings.alertmanager_token, self.inbox.put, cluster=cluster,
                                             rate=settings.alertmanager_rate)
        self.scheduler = BackgroundScheduler(timezone=timezone.utc)
        # Paused until this replica leads (next_run_time=None); one sweep at a time, missed runs merged.
        self.scheduler.add_job(self.sweep_once, "interval", seconds=settings.sweep_interval, id=SWEEP_JOB,
                               next_run_time=None, max_instances=1, coalesce=True)
        self.engine = engine
        self.scheduler.add_job(self.prune_once, "interval", seconds=PRUNE_EVERY_S, id=PRUNE_JOB, max_instances=1,
                               coalesce=True, next_run_time=datetime.now(timezone.utc) + timedelta(seconds=PRUNE_FIRST_S))
        self.elector = None

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> "Alerts":
        from bot.leader import LeaderElector

        self.scheduler.start()
        self.inbox.start()
        if not self.settings.alert_channel and not self.service.policy.current().alerts.routes:
            # Nowhere to post: sweeping would cost the cluster reads (and the CPU) for nothing.
            log.info("gpubot: sweeps are off: set GPUBOT_ALERT_CHANNEL or the policy's alerts.routes to turn them on")
            return self
        try:
            self.elector = LeaderElector.from_settings(self.settings, on_started_leading=self._lead,
                                                       on_stopped_leading=self._follow)
        except ClusterConfigError as exc:
            log.warning("gpubot: no sweeps from this replica: %s", exc)
            return self
        self.elector.start()
        return self

    def stop(self) -> None:
        if self.elector is not None:
            self.elector.stop(release=True)  # steps down first, then hands the Lease over at once
        self.scheduler.shutdown(wait=False)
        self.inbox.stop()
        self.endpoint.close()

    def _lead(self) -> None:
        log.info("gpubot: leading: sweeping every %g s", self.settings.sweep_interval)
        self.scheduler.modify_job(SWEEP_JOB, next_run_time=datetime.now(timezone.utc))

    def _follow(self) -> None:
        log.info("gpubot: not leading: sweeps paused")
        self.scheduler.pause_job(SWEEP_JOB)

    # -- sources ----------------------------------------------------------------------------------
    def sweep_once(self) -> Summary | None:
        if self.elector is not None and not self.elector.is_leader:
            return None  # leadership was lost while this run waited
        try:
            result: SweepResult = timed_sweep(sweep, self.service, self.settings)
        except GpubotError as exc:
            log.warning("gpubot: sweep failed: %s", exc)
            return None
        for gap in result.not_checked:
            log.info("gpubot: sweep: %s", gap)
        summary = counted_alerts(self.notifier.sweep_seen(result.problems, result.cluster, complete=not result.not_checked))
        log.info("gpubot: sweep of %s: %d problems, %d list requests; %s", result.cluster, len(result.problems),
                 result.requests, summary)
        return summary

    def prune_once(self):
        if self.elector is not None and not self.elector.is_leader:
            return None  # the leader prunes; with no election (one replica, or no sweeps) every replica does
        from bot.store.retention import prune_logged

        return prune_logged(self.engine, self.settings)

    def intake(self, batch: AlertBatch) -> None:
        alerts = batch.by_problem()
        enriched = 0
        reported: list[tuple[Problem, str]] = []
        for alert in alerts:
            problem = alert.problem
            if alert.status == "firing" and problem.target.kind in DIAGNOSABLE and enriched < MAX_ENRICHED:
                channel = self._reader(problem)
                if channel is not None:
                    enriched += 1
                    problem = self._enriched(problem, channel=channel)
            reported.append((problem, alert.status))
        counted_alerts(self.notifier.alertmanager(reported))

    def _reader(self, problem: Problem) -> str | None:
        """The channel the alert is routed to when that channel may read it in full; None: it is not
        diagnosed (it would be masked there, or goes nowhere), so nothing is read on its behalf."""
        found = self.router.destination(cluster=problem.cluster, scopes=[(problem.cluster, problem.namespace)],
                                        nodepool=problem.nodepool, severity=problem.severity)
        return found.channel if found is not None and not found.masked else None

    def _enriched(self, problem: Problem, *, channel: str) -> Problem:
        """The alert with what a diagnosis of its target says (its fingerprint unchanged), diagnosed as
        ``channel`` asks: its grant bounds what is read and what evidence is kept."""
        t = problem.target
        try:
            diagnosis = self.service.diagnose(f"{t.kind}/{t.name}", namespace=t.namespace,
                                              asker=Asker(user=None, channel=channel))
        except GpubotError as exc:
            return dataclasses.replace(problem, detail=f"{problem.detail}\nNot diagnosed: {exc}".strip())
        if not diagnosis.findings:
            return problem
        top = diagnosis.findings[0]
        evidence = tuple(Evidence(e.source, e.text) for e in top.evidence[:5])
        detail = f"{problem.detail}\nDiagnosis: {top.code} ({top.confidence}): {top.title}".strip()
        return dataclasses.replace(problem, detail=detail, evidence=problem.evidence + evidence)
