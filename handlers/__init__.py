"""Slack listeners, one module per surface; each module has ``register(app, deps)``."""
from __future__ import annotations

from slack_bolt import App

from bot.delivery.pacer import Pacer
from bot.store import DeliveryStore
from handlers.deps import Deps


def register_listeners(app: App, deps: Deps, *, deliveries: DeliveryStore | None = None,
                       pacer: Pacer | None = None) -> None:
    from handlers import actions, alerts, commands, dedup, incidents, mentions, pacing, proposals, views

    if pacer is not None:
        app.use(pacing.PacedClients(pacer, deadline_s=deps.settings.answer_deadline))

    if deliveries is not None:
        # First of the app's own middleware: a retry is answered before anything acts on it.
        app.use(dedup.DeliveryDedup(deliveries))

    commands.register(app, deps)
    mentions.register(app, deps)
    actions.register(app, deps)
    views.register(app, deps)
    incidents.register(app, deps)
    proposals.register(app, deps)
    alerts.register(app, deps)
