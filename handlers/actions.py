"""Buttons on a diagnosis: Re-run, Show evidence, Request approval. Every value is decoded and
validated before use: a click is untrusted input like any other request."""
from __future__ import annotations

import json

from slack_bolt import App

from bot.errors import GpubotError, UserError
from bot.payloads import (
    ACTION_APPROVAL, ACTION_EVIDENCE, ACTION_RERUN, decode_approval, decode_evidence, decode_target, encode_target,
)
from bot.render.blocks import approval_preview_blocks, evidence_messages
from handlers import flows
from handlers.deps import Deps
from handlers.guard import guarded
from handlers.reply import Reply
from playbooks.remediations import merge_patch


def reply_for(body: dict, client) -> Reply:
    container = body.get("container") or {}
    message = body.get("message") or {}
    channel = container.get("channel_id") or (body.get("channel") or {}).get("id")
    thread = message.get("thread_ts") or container.get("message_ts")
    return Reply(client=client, channel=channel, user=(body.get("user") or {}).get("id"), thread_ts=thread)


def _value(body: dict) -> str:
    actions = body.get("actions") or [{}]
    return str(actions[0].get("value", ""))


def register(app: App, deps: Deps) -> None:
    @guarded
    def rerun(body, client):
        reply = reply_for(body, client)
        try:
            ref = decode_target(_value(body))
        except UserError as exc:
            reply.error(str(exc))
            return
        flows.run_diagnosis(reply, deps, target=ref.text, namespace=ref.namespace, cluster=ref.cluster)

    @guarded
    def show_evidence(body, client):
        reply = reply_for(body, client)
        try:
            ref = decode_evidence(_value(body))
            diagnosis = deps.diagnoses.get(encode_target(ref.target)) or deps.service.diagnose(
                ref.target.text, namespace=ref.target.namespace, context=ref.target.cluster)
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
    def request_approval(body, client):
        reply = reply_for(body, client)
        try:
            request = decode_approval(_value(body))
        except UserError as exc:
            reply.error(str(exc))
            return
        patch = json.dumps(merge_patch(request.remediation), indent=2)
        reply.private(text=f"Change proposed: {request.remediation.kind} on {request.remediation.target}",
                      blocks=approval_preview_blocks(request, patch))

    for action_id, lazy in ((ACTION_RERUN, rerun), (ACTION_EVIDENCE, show_evidence), (ACTION_APPROVAL, request_approval)):
        app.action(action_id)(ack=lambda ack: ack(), lazy=[lazy])
