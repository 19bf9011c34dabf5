"""A finding: severity marker, title and detail in the text; its code, severity and confidence only
in a context line underneath."""
from __future__ import annotations

from bot.render.blocks import kit
from bot.render.blocks.text import clean
from playbooks.model import SEVERITIES, Finding

MARKERS = {"critical": ":red_circle:", "error": ":large_orange_circle:",
           "warning": ":large_yellow_circle:", "info": ":white_circle:"}
TITLE_LIMIT = 300


def finding_blocks(finding: Finding, *, detail_limit: int, note: str = "", title: bool = True) -> list[dict]:
    """Section (marker, title, detail) and the context line (code, severity, confidence). Without
    ``title`` the section holds the detail alone (the header already said the title)."""
    head = f"{MARKERS[finding.severity]} *{clean(finding.title, TITLE_LIMIT)}*" if title else ""
    detail = clean(finding.detail, detail_limit) if finding.detail.strip() and detail_limit > 0 else ""
    text = f"{head}\n{detail}".strip()
    return ([kit.section(text)] if text else []) + [code_context(finding, note=note)]


def code_context(finding: Finding, *, note: str = "", extra: tuple[str, ...] = ()) -> dict:
    facts = [f"`{clean(finding.code, 100)}`", finding.severity, f"confidence {finding.confidence}", *extra]
    if note:
        facts.append(note)
    return kit.context(" · ".join(facts))


def title_list(findings: list[Finding], *, limit: int = 2500, each: int = 300) -> str:
    """One bullet per finding (marker and title), as many as fit in ``limit`` characters."""
    lines: list[str] = []
    for n, f in enumerate(findings):
        line = f"• {MARKERS[f.severity]} {clean(f.title, each)}"
        if sum(len(x) + 1 for x in lines) + len(line) + 40 > limit:
            lines.append(f"• and {len(findings) - n} more")
            break
        lines.append(line)
    return "\n".join(lines)


def worst_severity(findings: list[Finding]) -> str | None:
    return min((f.severity for f in findings), key=SEVERITIES.index, default=None)

