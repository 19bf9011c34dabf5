"""Buttons on a diagnosis: Re-run, Show evidence, Share in channel (Request approval: handlers.proposals).

A click is untrusted input like any other request: its value is opened only if gpubot sealed it for
this action in this conversation (bot.payloads.Signer), decoded through the same validation as typed
input, and what it names is authorised again for the person who clicked (bot.service)."""
from __future__ import annotations

from slack_bolt import App

from bot.errors import GpubotError
from bot.payloads import (
    ACTION_EVIDENCE, ACTION_RERUN, ACTION_SHARE, decode_evidence, decode_share, decode_target, encode_target,
)
from bot.render.blocks import evidence_messages
from handlers import flows
from handlers.deps import Deps
from handlers.guard import guarded
from handlers.reply import Reply


def click_channel(body: dict) -> str | None:
    """The conversation the click came from, as Slack (not the button) states it."""
    container = body.get("container") or {}
    return container.get("channel_id") or (body.get("channel") or {}).get("id")


def reply_for(body: dict, client, deps: Deps) -> Reply:
    message = body.get("message") or {}
    container = body.get("container") or {}
    user = (body.get("user") or {}).get("id")
    channel = click_channel(body) or user
    thread = message.get("thread_ts") or container.get("message_ts")
    return deps.reply(client, channel=channel, user=user, thread_ts=thread)


def opened_value(body: dict, deps: Deps, action: str) -> str:
    """The button's value, if gpubot sealed it for ``action`` in this conversation; PayloadError if not."""
    actions = body.get("actions") or [{}]
    return deps.signer.open(str(actions[0].get("value", "")), action=action, conversation=click_channel(body))


def register(app: App, deps: Deps) -> None:
    @guarded
    def rerun(body, client):
        reply = reply_for(body, client, deps)
        try:
            ref = decode_target(opened_value(body, deps, ACTION_RERUN))
        except GpubotError as exc:
            reply.error(str(exc))
            return
        flows.run_diagnosis(reply, deps, target=ref.text, namespace=ref.namespace, cluster=ref.cluster)

    @guarded
    def show_evidence(body, client):
        reply = reply_for(body, client, deps)
        asker = deps.asker(reply.user, click_channel(body))
        try:
            ref = decode_evidence(opened_value(body, deps, ACTION_EVIDENCE))
            access = deps.service.check_read(asker, cluster=ref.target.cluster, namespace=ref.target.namespace)
            # Only a diagnosis made for the same access is reused: another's may name what this one hides.
            diagnosis = deps.diagnoses.get((encode_target(ref.target), access)) or deps.service.diagnose(
                ref.target.text, namespace=ref.target.namespace, context=ref.target.cluster, asker=asker)
        except GpubotError as exc:
            reply.error(str(exc))
            return
        index = next((i for i, f in enumerate(diagnosis.findings) if f.code == ref.code), None)
        if index is None:
            note = f"{ref.code} is no longer found for {ref.target.text}: press Re-run for the current diagnosis."
            reply.error(note)
            return
        for blocks in evidence_messages(diagnosis, index):
            reply.post(text=f"Evidence for {ref.code}", blocks=blocks)

    @guarded
    def share(body, client):
        reply = reply_for(body, client, deps)
        try:
            token = decode_share(opened_value(body, deps, ACTION_SHARE))
        except GpubotError as exc:
            reply.error(str(exc))
            return
        reply.thread_ts = None  # the shared answer is a message of its own, not a reply to a private one
        flows.share_explanation(reply, deps, token=token)

    for action_id, lazy in ((ACTION_RERUN, rerun), (ACTION_EVIDENCE, show_evidence), (ACTION_SHARE, share)):
        app.action(action_id)(ack=lambda ack: ack(), lazy=[lazy])
