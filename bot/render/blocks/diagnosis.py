"""The diagnosis message, answer first (docs/messages.md): the header says the target, its state and
the cause; then why (the cause's detail and its strongest quote), what to do (the fix and its buttons),
what followed from the cause (folded, one line each), the other possible causes (title and buttons:
their detail is behind Show evidence), and the
rest (warnings and info) as one list behind Show evidence; then what was not checked and Re-run.

Every part is added while the message stays within Slack's limits (50 blocks, the total text budget):
the cause in full, else shorter, else compact; other causes compact or counted in a closing line
that says where to see them. Room for the closing blocks is reserved first, so whatever the diagnosis
holds, the result is a valid message.
"""
from __future__ import annotations

from bot.render.answer import Answer, answer, headline, place, what_to_do
from bot.render.blocks import kit, limits
from bot.render.blocks.actions import actionable, approval_buttons, evidence_button, finding_actions, rerun_button
from bot.render.blocks.evidence import evidence_preview
from bot.render.blocks.finding import MARKERS, code_context, finding_blocks, title_list
from bot.render.blocks.fix import fix_blocks
from bot.render.blocks.header import header_blocks, json_command, where
from bot.render.blocks.pack import fits
from bot.render.blocks.text import clean, cut, escape
from playbooks.engine import NOTHING_FOUND
from playbooks.model import Diagnosis

# How much of the cause to show, most first: detail, evidence items and each quote, the snippet's first piece.
LEVELS = ({"detail": 1500, "items": 2, "evidence": 700, "snippet": 2900},
          {"detail": 700, "items": 1, "evidence": 350, "snippet": 1500},
          {"detail": 300, "items": 0, "evidence": 0, "snippet": 0})
SUMMARY_LIMIT = 1000
GAP_LIMIT = 250
MAX_GAPS = 5
MAX_CODES = 5
# The closing blocks as finally rendered may name other (longer) codes than the reserved worst case.
_CLOSING_SLACK = 400


def diagnosis_blocks(d: Diagnosis, *, max_findings: int = 5, evidence_per_finding: int = 2) -> list[dict]:
    a = answer(d)
    body = header_blocks(d)
    budget = limits.TEXT_BUDGET - _CLOSING_SLACK
    reserved = _secondary(d, a) + _closing(d, left_out=a.causes)
    if a.lead is None:
        return body + _healthy(d) + _secondary(d, a) + _closing(d, left_out=[])
    for level in LEVELS:
        lead = _lead(d, a, level={**level, "items": min(level["items"], max(evidence_per_finding, 0))})
        if fits(body + lead + reserved, max_text=budget):
            body += lead
            break
    else:
        body += _lead(d, a, level=LEVELS[-1])[:1]
    shown: list[int] = []
    for index in a.causes[:max(max_findings - 1, 0)]:
        blocks = [kit.divider(), *finding_blocks(d.findings[index], detail_limit=0), *finding_actions(d, index)]
        if not fits(body + blocks + reserved, max_text=budget):
            break
        body += blocks
        shown.append(index)
    left_out = [i for i in a.causes if i not in shown]
    return body + _secondary(d, a) + _closing(d, left_out=left_out)


def diagnosis_text(d: Diagnosis) -> str:
    """The message's plain fallback (notifications, screen readers), at most 3000 characters: the
    answer, then what to do, then where."""
    text = headline(d).rstrip(".") + "."
    todo = what_to_do(d)
    if todo:
        text += f" What to do: {todo}."
    where_ = place(d)
    if where_:
        text += f" ({where_})"
    return cut(escape(text), limits.FALLBACK_TEXT)


def _lead(d: Diagnosis, a: Answer, *, level: dict) -> list[dict]:
    """Why (detail, quotes), what to do (fix, buttons), the codes, and what followed from the cause."""
    finding = d.findings[a.lead]
    blocks = finding_blocks(finding, detail_limit=level["detail"], title=False)
    context = blocks.pop()  # the codes go under the buttons, with where it was looked at
    for item in finding.evidence[:level["items"]]:
        blocks += evidence_preview(item, limit=level["evidence"], max_lines=6)
    if finding.fix:
        blocks += fix_blocks(finding.fix, max_sections=1 if level["snippet"] else 0,
                             chunk_limit=max(level["snippet"], 200), more_hint=_more_hint(d))
    blocks += finding_actions(d, a.lead, primary=True)
    shown = min(level["items"], len(finding.evidence))
    note = f"{shown} of {len(finding.evidence)} quotes shown" if len(finding.evidence) > shown else ""
    context["elements"][0]["text"] = code_context(finding, note=note, extra=tuple(where(d)))["elements"][0]["text"]
    blocks.append(context)
    if a.consequences:
        followers = [d.findings[i] for i in a.consequences]
        blocks += [kit.section("*What followed from it* (not causes of their own):\n" + title_list(followers)),
                   kit.context(_codes(followers))]
    return blocks


def _healthy(d: Diagnosis) -> list[dict]:
    """The header said no known problem was found: the summary adds what the engine saw besides (the
    pods' phases, a message it did not recognise), without saying it again."""
    summary = d.summary.strip()
    if summary.startswith(NOTHING_FOUND):
        summary = summary[len(NOTHING_FOUND):].lstrip(":. ")
    blocks = [kit.section(clean(summary[:1].upper() + summary[1:], SUMMARY_LIMIT))] if summary else []
    facts = where(d)
    return blocks + ([kit.context(" · ".join(facts))] if facts else [])


def _secondary(d: Diagnosis, a: Answer) -> list[dict]:
    """Warnings and info that are not the cause: their titles, one line each, behind Show evidence."""
    if not a.secondary:
        return []
    findings = [d.findings[i] for i in a.secondary]
    label = "*Also noted* (not the cause):" if a.lead is not None else "*Noted:*"
    section = kit.section(f"{label}\n{title_list(findings, limit=1500, each=200)}")
    if actionable(d):
        section["accessory"] = evidence_button(d, a.secondary[0])
    blocks = [kit.divider(), section, kit.context(_codes(findings))]
    buttons = [b for i in a.secondary for b in approval_buttons(d, i)] if actionable(d) else []
    return blocks + (kit.actions(buttons) if buttons else [])


def _codes(findings: list) -> str:
    return ", ".join(f"`{clean(f.code, 64)}`" for f in findings[:MAX_CODES]) + (", …" if len(findings) > MAX_CODES else "")


def _closing(d: Diagnosis, *, left_out: list[int]) -> list[dict]:
    blocks = [kit.divider()] if d.findings else []
    if d.gaps:
        gaps = [f"_{clean(g, GAP_LIMIT)}_" for g in d.gaps[:MAX_GAPS]]
        more = [f"and {len(d.gaps) - MAX_GAPS} more"] if len(d.gaps) > MAX_GAPS else []
        blocks.append(kit.context("*Not checked:*", *gaps, *more))
    if left_out:
        n = len(left_out)
        titles = "; ".join(f"{MARKERS[d.findings[i].severity]} {clean(d.findings[i].title, 120)}" for i in left_out[:3])
        codes = ", ".join(f"`{clean(d.findings[i].code, 64)}`" for i in left_out[:MAX_CODES])
        blocks.append(kit.context(f"{n} more possible cause{'' if n == 1 else 's'} not shown here: {titles}"
                                  f"{'; …' if n > 3 else ''} ({codes}).{_more_hint(d)}"))
    if actionable(d):
        buttons = [rerun_button(d)]
        if left_out:
            buttons.append(evidence_button(d, left_out[0]))
        blocks += kit.actions(buttons)
    return blocks


def _more_hint(d: Diagnosis) -> str:
    return f" Show evidence, or {json_command(d)}" if actionable(d) else f" {json_command(d)}"
