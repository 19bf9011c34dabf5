"""Alert buttons: Snooze 1h / 1d / until resolved, and Acknowledge.

The alert is the one named by the value gpubot sealed for this action in this channel; the clicker
acts only if the policy lets them read, from where they clicked, every namespace the alert speaks of
(bot.service.check_read). A refusal is one private line. The rules are bot.alerts.clicks'."""
from __future__ import annotations

import threading

from slack_bolt import App

from bot.alerts.buttons import ALERT_ACTIONS, decode_alert
from bot.alerts.clicks import AlertClicks
from bot.errors import GpubotError, UserError
from bot.payloads import ACTION_ALERT_ACKNOWLEDGE
from bot.render.blocks import kit
from bot.store import AlertStore
from handlers.actions import click_channel, opened_value, reply_for
from handlers.deps import Deps
from handlers.guard import guarded


def register(app: App, deps: Deps) -> None:
    made: list[AlertClicks] = []
    lock = threading.Lock()

    def clicks() -> AlertClicks:
        if deps.store is None:
            raise UserError("alerts are not recorded in this installation: it has no incident store")
        with lock:
            if not made:
                made.append(AlertClicks(store=AlertStore(deps.store.engine), incidents=deps.store, signer=deps.signer,
                                        reads=lambda channel, cluster, namespace: deps.service.channel_may_read(
                                            channel, cluster=cluster, namespace=namespace)))
            return made[0]

    def on_click(action: str):
        @guarded
        def handler(body, client):
            reply = reply_for(body, client, deps)
            asker = deps.asker(reply.user, click_channel(body))

            def authorise(cluster: str, namespace: str | None) -> None:
                deps.service.check_read(asker, cluster=cluster or None, namespace=namespace)

            try:
                group_id = decode_alert(opened_value(body, deps, action))
                if action == ACTION_ALERT_ACKNOWLEDGE:
                    told = clicks().acknowledge(group_id, actor=reply.user or "unknown", authorise=authorise,
                                                client=client)
                else:
                    told = clicks().snooze(group_id, action=action, actor=reply.user or "unknown",
                                           authorise=authorise, client=client)
            except GpubotError as exc:
                reply.error(str(exc))
                return
            reply.private(text=told, blocks=[kit.section(told)])
        handler.__name__ = action.rpartition(".")[2]
        return handler

    for action in ALERT_ACTIONS:
        app.action(action)(ack=lambda ack: ack(), lazy=[on_click(action)])
