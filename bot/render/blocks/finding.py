"""A finding: severity marker, title and detail, then its code and confidence as context."""
from __future__ import annotations

from bot.render.blocks import kit
from bot.render.blocks.text import ELLIPSIS, clean
from playbooks.model import SEVERITIES, Finding

MARKERS = {"critical": ":red_circle:", "error": ":large_orange_circle:",
           "warning": ":large_yellow_circle:", "info": ":white_circle:"}
TITLE_LIMIT = 300


def finding_blocks(finding: Finding, *, number: int, detail_limit: int, note: str = "") -> list[dict]:
    """Section (marker, number, title, detail) and a context line (code, severity, confidence)."""
    title = f"{MARKERS[finding.severity]} *{number}. {clean(finding.title, TITLE_LIMIT)}*"
    detail = clean(finding.detail, detail_limit) if finding.detail.strip() else ""
    facts = [f"`{clean(finding.code, 100)}`", finding.severity, f"confidence {finding.confidence}"]
    if note:
        facts.append(note)
    return [kit.section(f"{title}\n{detail}".rstrip()), kit.context(" · ".join(facts))]


def info_line(findings: list[tuple[int, Finding]], *, limit: int = 1000) -> dict:
    """Info-level findings, collapsed into one context line of at most ``limit`` characters."""
    text = f"{MARKERS['info']} Also noted: "
    for n, (_, f) in enumerate(findings):
        part = f"{'; ' if n else ''}{clean(f.title, 200)} (`{clean(f.code, 100)}`)"
        if len(text) + len(part) + len(f"; {ELLIPSIS}") > limit:
            return kit.context(f"{text}; {ELLIPSIS}")
        text += part
    return kit.context(text)


def worst_severity(findings: list[Finding]) -> str | None:
    return min((f.severity for f in findings), key=SEVERITIES.index, default=None)
