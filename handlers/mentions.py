"""``@gpubot`` mentions and direct messages in plain words, answered in a thread; a log pasted in
one of the bot's threads (or a DM) is explained."""
from __future__ import annotations

from slack_bolt import App

from bot.intent import parse_question
from bot.render.blocks import help_blocks
from handlers import flows
from handlers.deps import Deps
from handlers.guard import guarded
from playbooks import linear

_MENTION = linear.compile(r"<@[A-Z0-9]+(\|[^>]*)?>")


def looks_like_log(text: str) -> bool:
    """Pasted output rather than a question: a code block, or several lines of it."""
    return "```" in text or text.count("\n") >= 3


def register(app: App, deps: Deps) -> None:
    @guarded
    def on_mention(event, client):
        _answer(event, client, deps)

    @guarded
    def on_message(event, client):
        if event.get("bot_id") or event.get("subtype"):
            return  # our own posts, edits, joins: not questions
        if event.get("channel_type") == "im":
            _answer(event, client, deps)
            return
        channel, thread = event.get("channel"), event.get("thread_ts")
        # Only a log pasted in one of the bot's threads is for us; the rest is people talking. The
        # cheap test first: asking the store about every thread message would be wasted work.
        if thread is not None and looks_like_log(event.get("text", "")) and deps.threads.knows(channel, thread):
            _answer(event, client, deps)

    app.event("app_mention")(ack=lambda ack: ack(), lazy=[on_mention])
    app.event("message")(ack=lambda ack: ack(), lazy=[on_message])


def _answer(event: dict, client, deps: Deps) -> None:
    text = _MENTION.sub("", event.get("text", "")).strip()
    channel = event["channel"]
    thread = event.get("thread_ts") or event["ts"]
    if event.get("channel_type") != "im":  # in a DM every message is answered anyway
        deps.threads.remember(channel, thread)
    reply = deps.reply(client, channel=channel, user=event.get("user"), thread_ts=thread)
    if looks_like_log(text):
        flows.explain(reply, deps, text=text.replace("```", ""), private=False)
        return
    intent = parse_question(text)
    if intent.target is None:
        pending = _pending_hint(deps, channel, event.get("user"), intent.namespace)
        reply.post(text="Which job should I look at?" + pending, blocks=help_blocks(prefix="Which job should I look at?" + pending))
        return
    flows.run_diagnosis(reply, deps, target=intent.target, namespace=intent.namespace, cluster=None)


def _pending_hint(deps: Deps, channel: str, user: str | None, namespace: str | None) -> str:
    """Pending jobs in the namespace asked about (or this channel's default), if the asker may read it."""
    asker = deps.asker(user, channel)
    ns = namespace or deps.service.access(asker).default_namespace
    if ns is None:
        return ""
    try:
        pending = deps.service.pending_jobs(namespace=ns, asker=asker)
    except Exception:  # noqa: BLE001 - a hint only: refused, or the cluster's trouble shows on the next question
        return ""
    return f" Pending in {ns}: {', '.join(pending[:10])}." if pending else f" Nothing is pending in {ns}."
