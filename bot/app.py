"""The Slack app factory: one Bolt App wired to the diagnosis service and the listeners."""
from __future__ import annotations

import logging

from slack_bolt import App

from bot.delivery.pacer import Pacer
from bot.policy.source import PolicySource
from bot.remediation.flow import Remediator
from bot.service import DiagnosisService
from bot.store.proposals import ProposalStore
from bot.settings import Settings
from bot.slack_client import make_web_client
from bot.store import DeliveryStore, IncidentStore, check_current, make_engine
from bot.workers import WorkerPool, run_lazy_listeners_in
from bot.workpool import WorkPool
from handlers import register_listeners
from handlers.approvers import UserGroups
from handlers.deps import Deps

log = logging.getLogger(__name__)


def create_app(settings: Settings, *, service: DiagnosisService | None = None, pacer: Pacer | None = None,
               workers: "WorkerPool | None" = None, worker: bool = False) -> App:
    """The app that serves Slack. With ``workers``, its lazy listeners (diagnoses) run in those worker
    processes; ``worker=True`` is the app inside one of them (bot.workers)."""
    return build_app(settings, service=service, pacer=pacer, workers=workers, worker=worker)[0]


def build_app(settings: Settings, *, service: DiagnosisService | None = None, pacer: Pacer | None = None,
              workers: "WorkerPool | None" = None, worker: bool = False) -> tuple[App, Deps]:
    """The app and what its listeners share (``gpubot serve`` builds its alerts from the same parts)."""
    settings.require_slack()
    engine = make_engine(settings.database_url)
    check_current(engine)  # refuse to start on a schema that is behind: `gpubot db upgrade` first
    pacer = pacer or (workers.pacer if workers is not None else Pacer(share=settings.slack_rate_share))
    client = make_web_client(token=settings.slack_bot_token, base_url=settings.slack_api_url, pacer=pacer)
    app = App(
        client=client,
        signing_secret=settings.slack_signing_secret or "socket-mode",
        # Acks run in the request's own thread and answer at once; only the lazy work (diagnoses) goes
        # to this pool. Were acks queued on the pool too, a burst of slow diagnoses would hold them
        # past Slack's 3 s (measured: tests/benchmarks/bench_ack.py).
        process_before_response=True,
        # The pool also counts unfinished work, so `gpubot serve` can let it finish before exiting.
        listener_executor=WorkPool(max_workers=16),
        # Bolt verifies the token with auth.test at start-up: a wrong token fails fast, not on first use.
        token_verification_enabled=True,
        # A worker is handed requests only by the serving process, which verified them (and a queued
        # request may be older than the 5 minutes a signature is good for).
        request_verification_enabled=settings.slack_mode == "http" and not worker,
    )
    pool = app.listener_runner.listener_executor
    backlog = pool.ahead if isinstance(pool, WorkPool) else None
    if workers is not None:
        run_lazy_listeners_in(app, workers)
        backlog = workers.ahead
    # The policy is read now: an invalid file stops start-up with its line and reason.
    service = service or DiagnosisService(settings, policy=PolicySource.from_settings(settings))
    log.info("gpubot: %s", service.policy.describe())
    remediator = Remediator(service, ProposalStore(engine),
                            groups=UserGroups(client, lambda: service.policy.current().approvers.usergroups))
    deps = Deps(service=service, settings=settings, store=IncidentStore(engine), remediation=remediator,
                backlog=backlog)
    # Retries are recognised where requests arrive: a worker only sees what the serving process accepted.
    register_listeners(app, deps, deliveries=None if worker else DeliveryStore(engine), pacer=pacer)

    @app.error
    def on_error(error, body, logger):
        # Errors that escaped a listener's own handling (Bolt already answered Slack's request).
        logger.exception("unhandled error in a Slack listener: %s", error)

    return app, deps


def work_pool(app: App) -> WorkPool:
    """The thread pool the app's lazy listeners run on when it has no worker processes (see create_app)."""
    pool = app.listener_runner.listener_executor
    assert isinstance(pool, WorkPool), "the app was not made by create_app"
    return pool
