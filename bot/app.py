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
from bot.workpool import WorkPool
from handlers import register_listeners
from handlers.approvers import UserGroups
from handlers.deps import Deps

log = logging.getLogger(__name__)


def create_app(settings: Settings, *, service: DiagnosisService | None = None, pacer: Pacer | None = None) -> App:
    settings.require_slack()
    engine = make_engine(settings.database_url)
    check_current(engine)  # refuse to start on a schema that is behind: `gpubot db upgrade` first
    pacer = pacer or Pacer(share=settings.slack_rate_share)
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
        request_verification_enabled=settings.slack_mode == "http",
    )
    # The policy is read now: an invalid file stops start-up with its line and reason.
    service = service or DiagnosisService(settings, policy=PolicySource.from_settings(settings))
    log.info("gpubot: %s", service.policy.describe())
    remediator = Remediator(service, ProposalStore(engine),
                            groups=UserGroups(client, lambda: service.policy.current().approvers.usergroups))
    deps = Deps(service=service, settings=settings, store=IncidentStore(engine), remediation=remediator)
    register_listeners(app, deps, deliveries=DeliveryStore(engine), pacer=pacer)

    @app.error
    def on_error(error, body, logger):
        # Errors that escaped a listener's own handling (Bolt already answered Slack's request).
        logger.exception("unhandled error in a Slack listener: %s", error)

    return app


def work_pool(app: App) -> WorkPool:
    """The pool the app's lazy listeners run on (see create_app)."""
    pool = app.listener_runner.listener_executor
    assert isinstance(pool, WorkPool), "the app was not made by create_app"
    return pool
