"""Short status messages: work in progress, and errors people can act on."""
from __future__ import annotations

from bot.render.blocks import kit
from bot.render.blocks.text import clean

TARGET_LIMIT = 300
STEP_LIMIT = 300
ERROR_LIMIT = 2000


def progress_blocks(target_text: str, step: str, *, elapsed: float | None = None) -> list[dict]:
    """":hourglass_flowing_sand: Diagnosing pytorchjob/x … (reading pods and events) · 4 s"."""
    text = f":hourglass_flowing_sand: Diagnosing `{clean(target_text, TARGET_LIMIT)}` …"
    if step.strip():
        text += f" ({clean(step, STEP_LIMIT)})"
    if elapsed is not None:
        text += f" · {elapsed:.0f} s"
    return [kit.context(text)]


def error_blocks(message: str) -> list[dict]:
    """":warning: cannot reach cluster prod (timeout after 10 s)", as one section."""
    return [kit.section(f":warning: {clean(message, ERROR_LIMIT) or 'something went wrong'}")]


def queued_blocks(message: str) -> list[dict]:
    """":hourglass: Queued: 12 requests ahead of yours ...", as one context line."""
    return [kit.context(f":hourglass: {clean(message, ERROR_LIMIT)}")]
