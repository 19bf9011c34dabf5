"""The interactions several surfaces share: run a diagnosis visibly, explain a pasted log."""
from __future__ import annotations

import threading
import time

from bot.errors import GpubotError, NotFoundError
from bot.payloads import TargetRef, encode_target
from bot.render.blocks import diagnosis_blocks, diagnosis_text, error_blocks, progress_blocks
from handlers import recording
from handlers.deps import Deps
from handlers.reply import Reply

MAX_BLOCKS = 50


def run_diagnosis(reply: Reply, deps: Deps, *, target: str, namespace: str | None, cluster: str | None) -> None:
    """Post "Diagnosing X ..." at once, keep it updated while facts are gathered, replace it with the
    diagnosis. An unknown target becomes a private note with close names; a cluster that does not
    answer becomes a one-line error in place of the diagnosis."""
    started = time.monotonic()
    shown = [target]
    reply.post(text=f"Diagnosing {target} ...", blocks=progress_blocks(target, "looking it up"))
    last = [started]
    lock = threading.Lock()

    def progress(step: str, *, force: bool = False) -> None:
        now = time.monotonic()
        with lock:
            if not force and now - last[0] < deps.settings.progress_interval:
                return
            last[0] = now
        reply.update(text=f"Diagnosing {shown[0]} ... ({step})", blocks=progress_blocks(shown[0], step, elapsed=now - started))

    def resolved(resolved_target) -> None:
        shown[0] = str(resolved_target)
        progress("reading pods and events", force=True)

    try:
        diagnosis = deps.service.diagnose(target, namespace=namespace, context=cluster, on_resolved=resolved, progress=progress)
    except NotFoundError as exc:
        if reply.thread_ts is None:
            reply.withdraw()
            reply.error(str(exc))
        else:
            reply.update(text=str(exc), blocks=error_blocks(str(exc)))
        return
    except GpubotError as exc:
        reply.update(text=str(exc), blocks=error_blocks(str(exc)))
        return
    deps.diagnoses.put(encode_target(TargetRef.of(diagnosis)), diagnosis)
    actor = reply.user or "unknown"
    recorded, failure = recording.record(deps, diagnosis, actor=actor)
    reply.update(text=diagnosis_text(diagnosis), blocks=_fit(diagnosis, recording.note(recorded, failure)))
    recording.link_thread(deps, reply, recorded, actor=actor, summary=diagnosis.summary)


def _fit(diagnosis, extra: list[dict]) -> list[dict]:
    """The diagnosis plus the incident note, within Slack's 50 blocks (fewer findings if need be)."""
    for max_findings in (5, 4, 3, 2, 1):
        blocks = diagnosis_blocks(diagnosis, max_findings=max_findings) + extra
        if len(blocks) <= MAX_BLOCKS:
            return blocks
    return diagnosis_blocks(diagnosis, max_findings=1)


def explain(reply: Reply, deps: Deps, *, text: str, private: bool) -> None:
    try:
        diagnosis = deps.service.explain(text.encode("utf-8"), source="pasted log")
    except GpubotError as exc:
        reply.error(str(exc))
        return
    answer = {"text": diagnosis_text(diagnosis), "blocks": diagnosis_blocks(diagnosis)}
    reply.private(**answer) if private else reply.post(**answer)
