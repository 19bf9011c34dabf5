"""``/gpu``: acknowledged at once (bad input answered in the ack itself), the work done lazily."""
from __future__ import annotations

from slack_bolt import App
from slack_sdk import WebClient

from bot.commands import GpuCommand, parse_command
from bot.errors import GpubotError, UserError
from bot.payloads import META_EXPLAIN
from bot.render.blocks import (
    error_blocks, explain_modal, queued_blocks, help_blocks, incident_detail_blocks, incident_list_blocks, nodepools_blocks, nodes_blocks,
)
from bot.permalinks import PERMALINKS
from bot.render.blocks.incidents import MAX_LISTED
from bot.render.blocks.text import escape
from handlers.charts import attach_fleet_chart
from handlers import flows
from handlers.deps import Deps
from handlers.forms import open_sealed_form
from handlers.guard import guarded
from handlers.reply import Reply


def register(app: App, deps: Deps) -> None:
    def ack_gpu(ack, command, client):
        try:
            parsed = parse_command(command.get("text", ""))
        except UserError as exc:
            ack(text=str(exc), blocks=error_blocks(str(exc)), response_type="ephemeral")
            return
        if parsed.action == "help":
            ack(text="gpubot: /gpu why-pending <job>, diagnose <target>, explain, nodes, nodepools",
                blocks=help_blocks(), response_type="ephemeral")
            return
        if parsed.action == "explain" and not parsed.text:
            # The trigger_id lives 3 s from the command: the form is opened here, in the request's own
            # thread, not after the lazy pool gets round to it.
            failure = _open_explain_form(client, deps, command)
            if failure:
                ack(text=failure, blocks=error_blocks(failure), response_type="ephemeral")
                return
        ahead = deps.queued_ahead(command)
        if ahead:
            # Told now, in the ack (no API call): the answer may be a while under a burst.
            note = queued_note(ahead)
            ack(text=note, blocks=queued_blocks(note), response_type="ephemeral")
            return
        ack()

    @guarded
    def run_gpu(command, client, respond):
        try:
            parsed = parse_command(command.get("text", ""))
        except UserError:
            return  # already answered in the ack
        channel, user = command["channel_id"], command["user_id"]
        reply = deps.reply(client, channel=channel, user=user, respond=respond)
        if parsed.action in ("why-pending", "diagnose"):
            flows.run_diagnosis(reply, deps, target=parsed.target, namespace=parsed.namespace, cluster=parsed.cluster)
        elif parsed.action == "explain" and parsed.text:
            flows.explain(reply, deps, text=parsed.text, private=True)
        elif parsed.action in ("nodes", "nodepools"):
            _fleet(reply, deps, parsed)
        elif parsed.action in ("incidents", "incident"):
            _incidents(reply, deps, parsed)

    app.command("/gpu")(ack=ack_gpu, lazy=[run_gpu])


def queued_note(ahead: int) -> str:
    return (f"Queued: {ahead} request{'s' if ahead != 1 else ''} ahead of yours. "
            "gpubot posts the answer here as soon as it starts; no need to ask again.")


def _open_explain_form(client: WebClient, deps: Deps, command: dict) -> str | None:
    """Open the explain form; None when it opened, else what to tell the person."""
    return open_sealed_form(client, deps, trigger_id=command["trigger_id"],
                            view=explain_modal(channel_id=command["channel_id"]), action=META_EXPLAIN,
                            again="run /gpu explain again, or paste the text after it.")


def _fleet(reply: Reply, deps: Deps, parsed: GpuCommand) -> None:
    asker = deps.asker(reply.user, reply.channel)
    try:
        if parsed.action == "nodes":
            report = deps.service.nodes(context=parsed.cluster, asker=asker)
            reply.post(text=f"GPU nodes in {escape(report.cluster)}", blocks=nodes_blocks(report))
        else:
            report = deps.service.nodepools(context=parsed.cluster, asker=asker)
            reply.post(text=f"GPU NodePools in {escape(report.cluster)}", blocks=nodepools_blocks(report))
    except GpubotError as exc:
        reply.error(str(exc))
        return
    attach_fleet_chart(reply, report)


def _incidents(reply: Reply, deps: Deps, parsed: GpuCommand) -> None:
    from bot.store_cli import parse_since

    try:
        if deps.store is None:
            raise UserError("incidents are not recorded in this installation")
        access = deps.service.access(deps.asker(reply.user, reply.channel))
        if parsed.action == "incident":
            detail = deps.store.get(parsed.incident_id, access=access)
            reply.post(text=f"Incident #{detail.incident.id}: {escape(detail.incident.title)}",
                       blocks=incident_detail_blocks(detail))
        else:
            incidents = deps.store.list(status=parsed.status, since=parse_since(parsed.since), limit=200, access=access)
            title = f"{'Open' if parsed.status == 'open' else 'All'} incidents" + (f" (last {parsed.since})" if parsed.since else "")
            links = PERMALINKS.for_incidents(reply.client, incidents[:MAX_LISTED])
            reply.post(text=title, blocks=incident_list_blocks(incidents, title=title, links=links))
    except GpubotError as exc:
        reply.error(str(exc))
