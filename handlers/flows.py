"""The interactions several surfaces share: run a diagnosis visibly, explain a pasted log."""
from __future__ import annotations

import secrets
import time

from bot.errors import GpubotError, NotFoundError, Refused
from bot.payloads import TargetRef, encode_target, with_incident
from bot.render.blocks import diagnosis_blocks, diagnosis_text, error_blocks, progress_blocks, share_blocks, shared_note_blocks
from bot.render.blocks.text import escape
from bot.textinput import check_paste
from handlers import recording
from handlers.charts import attach_gpu_chart
from handlers.deps import Deps
from handlers.reply import Reply

MAX_BLOCKS = 50


def run_diagnosis(reply: Reply, deps: Deps, *, target: str, namespace: str | None, cluster: str | None) -> None:
    """Post "Diagnosing X ..." at once, keep it updated while facts are gathered, replace it with the
    diagnosis. What the asker may not read is refused privately before anything is posted or read; an
    unknown target becomes a private note with close names; a cluster that does not answer becomes a
    one-line error in place of the diagnosis."""
    asker = deps.asker(reply.user, reply.channel)
    try:
        deps.service.check_read(asker, cluster=cluster, namespace=namespace)
    except GpubotError as exc:
        reply.error(str(exc))
        return
    started = time.monotonic()
    shown = [target]
    reply.post(text=f"Diagnosing {escape(target)} ...", blocks=progress_blocks(target, "looking it up"))

    def progress(step: str) -> None:
        # Best effort and throttled per message by the Reply; the answer below replaces it regardless.
        reply.progress(text=f"Diagnosing {escape(shown[0])} ... ({escape(step)})", every=deps.settings.progress_interval,
                       blocks=progress_blocks(shown[0], step, elapsed=time.monotonic() - started))

    def resolved(resolved_target) -> None:
        shown[0] = str(resolved_target)
        progress("reading pods and events")

    try:
        diagnosis = deps.service.diagnose(target, namespace=namespace, context=cluster, asker=asker,
                                          on_resolved=resolved, progress=progress)
    except NotFoundError as exc:
        if reply.thread_ts is None:
            reply.withdraw()
            reply.error(str(exc))
        else:
            reply.update(text=str(exc), blocks=error_blocks(str(exc)))
        return
    except Refused as exc:
        reply.withdraw()
        reply.error(str(exc))
        return
    except GpubotError as exc:
        reply.update(text=str(exc), blocks=error_blocks(str(exc)))
        return
    deps.diagnoses.put((encode_target(TargetRef.of(diagnosis)), deps.service.access(asker)), diagnosis)
    actor = reply.user or "unknown"
    recorded, failure = recording.record(deps, diagnosis, actor=actor)
    blocks = with_incident(_fit(diagnosis, recording.note(recorded, failure)),
                           recorded.incident.id if recorded is not None else None)
    reply.update(text=diagnosis_text(diagnosis), blocks=blocks)
    recording.link_thread(deps, reply, recorded, actor=actor, summary=diagnosis.summary)
    attach_gpu_chart(reply, diagnosis)


def _fit(diagnosis, extra: list[dict]) -> list[dict]:
    """The diagnosis plus the incident note, within Slack's 50 blocks (fewer findings if need be)."""
    for max_findings in (5, 4, 3, 2, 1):
        blocks = diagnosis_blocks(diagnosis, max_findings=max_findings) + extra
        if len(blocks) <= MAX_BLOCKS:
            return blocks
    return diagnosis_blocks(diagnosis, max_findings=1)


def explain(reply: Reply, deps: Deps, *, text: str, private: bool) -> None:
    """Explain pasted text. Text pasted privately (``/gpu explain``, the form) is answered privately,
    with a button to share the explanation in the channel."""
    try:
        check_paste(text)
        diagnosis = deps.service.explain(text.encode("utf-8"), source="pasted log")
    except GpubotError as exc:
        reply.error(str(exc))
        return
    if not private:
        reply.post(text=diagnosis_text(diagnosis), blocks=diagnosis_blocks(diagnosis))
        return
    token = secrets.token_urlsafe(16)
    deps.explanations.put(token, (reply.user or "", diagnosis))
    share = share_blocks(token) if reply.channel[:1] in ("C", "G") else []
    reply.private(text=diagnosis_text(diagnosis), blocks=_fit(diagnosis, share))


def share_explanation(reply: Reply, deps: Deps, *, token: str) -> None:
    """Post a private explanation in the channel, at the request of the person it was made for."""
    held = deps.explanations.get(token)
    if held is None or held[0] != (reply.user or ""):
        reply.error("this explanation is no longer held by gpubot: paste the text again with /gpu explain")
        return
    diagnosis = held[1]
    reply.post(text=f"Shared by <@{reply.user}>: {diagnosis_text(diagnosis)}",
               blocks=[*shared_note_blocks(reply.user or ''), *diagnosis_blocks(diagnosis)][:MAX_BLOCKS])
