"""Changes behind an approval, in Slack: Request approval (under a diagnosis) records a proposal and
posts it in the incident's thread and the approvers' channel; Approve, Reject and Undo act on it for
whoever clicks, as the policy allows (bot.remediation.flow), and every message showing it is updated
in place. The clicker hears the outcome privately."""
from __future__ import annotations

import logging

from slack_bolt import App
from slack_sdk.errors import SlackApiError

from bot.errors import GpubotError
from bot.payloads import (
    ACTION_APPROVAL, ACTION_APPROVE, ACTION_REJECT, ACTION_UNDO, decode_approval, decode_proposal, seal_blocks,
)
from bot.render.blocks.proposal import proposal_blocks, proposal_text
from bot.render.blocks.text import escape
from bot.store.proposals import ProposalConflict
from bot.threads import is_direct_message
from handlers.actions import click_channel, opened_value, reply_for
from handlers.deps import Deps
from handlers.guard import guarded
from handlers.reply import Reply

log = logging.getLogger(__name__)


def register(app: App, deps: Deps) -> None:
    @guarded
    def request_approval(body, client):
        reply = reply_for(body, client, deps)
        asker = deps.asker(reply.user, click_channel(body))
        try:
            request = decode_approval(opened_value(body, deps, ACTION_APPROVAL))
            candidates = _candidates(deps, request.incident, fallback=reply)
            proposal = deps.remediator().propose(
                request.remediation, asker=asker, cluster=request.target.cluster, namespace=request.target.namespace,
                reason=f"{request.code} on {request.target.text}", incident_id=request.incident,
                finding_code=request.code, places=candidates)
        except GpubotError as exc:
            reply.error(str(exc))
            return
        places = _announce(deps, client, proposal, candidates)
        where = ", ".join(f"<#{channel}>" for channel, _ in places) or "here"
        reply.private(text=f"Approval requested: change #{proposal.id}",
                      blocks=[{"type": "section", "text": {"type": "mrkdwn", "text":
                               f"Approval requested for change #{proposal.id} ({escape(proposal.kind)} on "
                               f"`{escape(proposal.target)}`), posted in {where}. Nothing is written until an approver "
                               "approves it."}}])

    def decide(action: str):
        @guarded
        def handler(body, client):
            reply = reply_for(body, client, deps)
            asker = deps.asker(reply.user, click_channel(body))
            try:
                proposal_id = decode_proposal(opened_value(body, deps, action))
                remediator = deps.remediator()
                if action == ACTION_APPROVE:
                    outcome = remediator.approve(proposal_id, asker=asker)
                elif action == ACTION_REJECT:
                    outcome = remediator.reject(proposal_id, asker=asker)
                else:
                    outcome = remediator.undo(proposal_id, asker=asker)
            except ProposalConflict as exc:
                # The proposal moved on (expired, applied, rejected ...): every copy shows where it stands.
                _refresh(deps, client, exc.proposal, note=None)
                reply.error(str(exc))
                return
            except GpubotError as exc:
                reply.error(str(exc))
                return
            _refresh(deps, client, outcome.proposal, note=f"Last: {outcome.message} (<@{reply.user}>)")
            reply.private(text=f"Change #{outcome.proposal.id}: {outcome.message}",
                          blocks=[{"type": "section", "text": {"type": "mrkdwn",
                                                               "text": f"Change #{outcome.proposal.id}: {outcome.message}"}}])
        handler.__name__ = action.rpartition(".")[2]
        return handler

    app.action(ACTION_APPROVAL)(ack=lambda ack: ack(), lazy=[request_approval])
    for action in (ACTION_APPROVE, ACTION_REJECT, ACTION_UNDO):
        app.action(action)(ack=lambda ack: ack(), lazy=[decide(action)])


def _candidates(deps: Deps, incident_id: int | None, *, fallback: Reply) -> list[tuple[str, str | None]]:
    """Where the request would go: the incident's thread and the approvers' channel, else where it was
    asked. An incident's thread in a direct message is left out: it would tell that person of a request
    made elsewhere. Which of these may show it is the remediator's call (its channel's grant)."""
    targets: list[tuple[str, str | None]] = []
    if incident_id is not None and deps.store is not None:
        try:
            incident = deps.store.get(incident_id).incident
            if incident.slack_channel and incident.slack_ts and not is_direct_message(incident.slack_channel):
                targets.append((incident.slack_channel, incident.slack_ts))
        except GpubotError:
            pass
    approvers = deps.service.policy.current().approvers.channel
    if approvers and approvers not in [c for c, _ in targets]:
        targets.append((approvers, None))
    if not targets:
        targets.append((fallback.channel, fallback.thread_ts))
    return targets


def _announce(deps: Deps, client, proposal, candidates: list[tuple[str, str | None]]) -> list[tuple[str, str]]:
    """Post the request where its channel may read it; remember each message so every later step
    updates them all."""
    targets = deps.remediator().shown_in(candidates, cluster=proposal.cluster, namespace=proposal.namespace)
    posted: list[tuple[str, str]] = []
    for channel, thread in targets:
        try:
            result = client.chat_postMessage(channel=channel, thread_ts=thread, text=proposal_text(proposal),
                                             blocks=seal_blocks(proposal_blocks(proposal), deps.signer,
                                                                conversation=channel))
        except SlackApiError as exc:
            log.warning("could not post change #%s in %s: %s", proposal.id, channel, exc.response.get("error"))
            continue
        deps.proposals().add_message(proposal.id, channel=channel, ts=result["ts"])
        posted.append((channel, result["ts"]))
    return posted


def _refresh(deps: Deps, client, proposal, *, note: str | None) -> None:
    for channel, ts in proposal.messages:
        try:
            client.chat_update(channel=channel, ts=ts, text=proposal_text(proposal),
                               blocks=seal_blocks(proposal_blocks(proposal, note=note), deps.signer, conversation=channel))
        except SlackApiError as exc:
            log.warning("could not update change #%s in %s: %s", proposal.id, channel, exc.response.get("error"))
