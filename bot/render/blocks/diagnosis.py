"""The diagnosis message: header, then each finding (most likely first) with the start of its
evidence, its fix and its buttons, then what was not checked and Re-run.

Findings are added in order while the message stays within Slack's limits (50 blocks, the total
text budget): in full, else with shorter detail, evidence and snippet, else compact (title, code,
buttons), else not at all; the ones left out are counted in a closing line that says where to see
them. Room for the closing blocks is reserved first (for the worst case: every finding left out),
so whatever the diagnosis holds, the result is a valid message.
"""
from __future__ import annotations

from functools import partial

from bot.render.blocks import kit, limits
from bot.render.blocks.actions import actionable, evidence_button, finding_actions, rerun_button
from bot.render.blocks.evidence import evidence_preview
from bot.render.blocks.finding import finding_blocks, info_line
from bot.render.blocks.fix import fix_blocks
from bot.render.blocks.header import header_blocks, json_command
from bot.render.blocks.pack import fits
from bot.render.blocks.text import clean, cut, escape
from playbooks.model import Diagnosis, Finding

# How much of a finding to show, most first: detail, each evidence quote, the snippet's first piece.
LEVELS = ({"detail": 1500, "evidence": 700, "snippet": 2900},
          {"detail": 700, "evidence": 350, "snippet": 1500})
COMPACT_DETAIL_LIMIT = 300
GAP_LIMIT = 250
MAX_GAPS = 5
MAX_CODES = 5
# The closing blocks as finally rendered may name other (longer) codes than the reserved worst case.
_CLOSING_SLACK = 400


def diagnosis_blocks(d: Diagnosis, *, max_findings: int = 5, evidence_per_finding: int = 2) -> list[dict]:
    head = header_blocks(d)
    ranked = [i for i, f in enumerate(d.findings) if f.severity != "info"]
    info = [(i, f) for i, f in enumerate(d.findings) if f.severity == "info"]
    reserved = _closing(d, info=info, left_out=ranked)
    body: list[dict] = []
    shown: list[int] = []
    for index in ranked[:max(max_findings, 0)]:
        primary = not any(b.get("style") for block in body if block["type"] == "actions" for b in block["elements"])
        renders = [partial(_full, level=level) for level in LEVELS] + [_compact]
        for render in renders:
            blocks = [kit.divider(), *render(d, index, evidence_per_finding=evidence_per_finding, primary=primary)]
            if fits(head + body + blocks + reserved, max_text=limits.TEXT_BUDGET - _CLOSING_SLACK):
                body += blocks
                shown.append(index)
                break
        else:
            break
    left_out = [i for i in ranked if i not in shown]
    return head + body + _closing(d, info=info, left_out=left_out)


def diagnosis_text(d: Diagnosis) -> str:
    """The message's plain fallback (notifications, screen readers), at most 3000 characters."""
    t = d.target
    place = "".join([f" in {t.namespace}" if t.namespace else "", f" on {d.cluster}" if d.cluster else ""])
    summary = d.summary.strip().rstrip(".")
    text = f"{t}{place}: {summary}." if summary else f"{t}{place}."
    first = next((f for f in d.findings if f.severity != "info"), None)
    if first:
        text += f" First finding: {first.code} ({first.severity}, confidence {first.confidence})."
    return cut(escape(text), limits.FALLBACK_TEXT)


def _full(d: Diagnosis, index: int, *, evidence_per_finding: int, primary: bool, level: dict) -> list[dict]:
    finding = d.findings[index]
    shown = finding.evidence[:max(evidence_per_finding, 0)]
    note = f"{len(shown)} of {len(finding.evidence)} evidence shown" if len(finding.evidence) > len(shown) else ""
    blocks = finding_blocks(finding, number=index + 1, detail_limit=level["detail"], note=note)
    for item in shown:
        blocks += evidence_preview(item, limit=level["evidence"])
    if finding.fix:
        blocks += fix_blocks(finding.fix, max_sections=1, chunk_limit=level["snippet"], more_hint=_more_hint(d))
    return blocks + finding_actions(d, index, primary=primary)


def _compact(d: Diagnosis, index: int, *, evidence_per_finding: int, primary: bool) -> list[dict]:
    finding = d.findings[index]
    blocks = finding_blocks(finding, number=index + 1, detail_limit=COMPACT_DETAIL_LIMIT, note=_contents(finding))
    return blocks + finding_actions(d, index, primary=primary)


def _contents(finding: Finding) -> str:
    parts = [f"{len(finding.evidence)} evidence"] if finding.evidence else []
    if finding.fix:
        parts.append("a fix")
    return f"{' and '.join(parts)} under Show evidence" if parts else ""


def _closing(d: Diagnosis, *, info: list[tuple[int, Finding]], left_out: list[int]) -> list[dict]:
    blocks = [kit.divider()] if d.findings else []
    if info:
        blocks.append(info_line(info))
    if d.gaps:
        gaps = [f"_{clean(g, GAP_LIMIT)}_" for g in d.gaps[:MAX_GAPS]]
        more = [f"and {len(d.gaps) - MAX_GAPS} more"] if len(d.gaps) > MAX_GAPS else []
        blocks.append(kit.context("*Not checked:*", *gaps, *more))
    if left_out:
        codes = ", ".join(f"#{i + 1} `{clean(d.findings[i].code, 64)}`" for i in left_out[:MAX_CODES])
        codes += ", …" if len(left_out) > MAX_CODES else ""
        n = len(left_out)
        blocks.append(kit.context(f"{n} more finding{'' if n == 1 else 's'} ({codes}):{_more_hint(d)}"))
    if actionable(d):
        buttons = [rerun_button(d)]
        if left_out:
            buttons.append(evidence_button(d, left_out[0], label=f"Show evidence: #{left_out[0] + 1}"))
        blocks += kit.actions(buttons)
    return blocks


def _more_hint(d: Diagnosis) -> str:
    return f" Show evidence, or {json_command(d)}" if actionable(d) else f" {json_command(d)}"
