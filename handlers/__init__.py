"""Slack listeners, one module per surface; each module has ``register(app, deps)``."""
from __future__ import annotations

from slack_bolt import App

from handlers.deps import Deps


def register_listeners(app: App, deps: Deps) -> None:
    from handlers import actions, commands, incidents, mentions, proposals, views

    commands.register(app, deps)
    mentions.register(app, deps)
    actions.register(app, deps)
    views.register(app, deps)
    incidents.register(app, deps)
    proposals.register(app, deps)
