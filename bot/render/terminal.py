"""A diagnosis as people read it in a terminal, answer first: the target, its state and the cause in one
line, what to do, then the findings (the cause first, what followed from it folded under it), evidence
quoted, fixes ready to copy; warnings and info last, as one line each."""
from __future__ import annotations

import textwrap

from bot.render.answer import answer, headline, place, what_to_do
from bot.render.wording import remediation_label
from playbooks.model import Diagnosis, Finding

MARKS = {"critical": "CRITICAL", "error": "ERROR", "warning": "WARNING", "info": "info"}
COLORS = {"critical": "\033[1;31m", "error": "\033[31m", "warning": "\033[33m", "info": "\033[2m"}
RESET, BOLD, DIM = "\033[0m", "\033[1m", "\033[2m"
WIDTH = 100


def render(diagnosis: Diagnosis, *, color: bool = False) -> str:
    paint = (lambda code, s: f"{code}{s}{RESET}") if color else (lambda code, s: s)
    a = answer(diagnosis)
    where = place(diagnosis)
    lines = [paint(BOLD, headline(diagnosis)) + (f"  ({where})" if where else "")]
    todo = what_to_do(diagnosis)
    lines += [f"What to do: {todo}", ""] if todo else [""]
    if a.lead is None and diagnosis.summary.strip():
        lines += [diagnosis.summary, ""]
    number = 0
    for index in ([a.lead] if a.lead is not None else []) + a.causes:
        number += 1
        lines += _finding(number, diagnosis.findings[index], paint, lead=index == a.lead)
        if index == a.lead and a.consequences:
            lines.append("   What followed from it (not causes of their own):")
            lines += [f"     - {diagnosis.findings[i].title}" + paint(DIM, f"  ({diagnosis.findings[i].code})")
                      for i in a.consequences]
            lines.append("")
    if a.secondary:
        lines.append("Also noted (not the cause; gpubot diagnose ... --json has their evidence):"
                     if a.lead is not None else "Noted:")
        for i in a.secondary:
            f = diagnosis.findings[i]
            lines.append(f"  - {paint(COLORS[f.severity], f'[{MARKS[f.severity]}]')} {f.title}" + paint(DIM, f"  ({f.code})"))
        lines.append("")
    if diagnosis.gaps:
        lines.append(paint(DIM, "Not checked:"))
        lines += [paint(DIM, f"  - {gap}") for gap in diagnosis.gaps]
    return "\n".join(lines).rstrip() + "\n"


def _finding(index: int, finding: Finding, paint, *, lead: bool = False) -> list[str]:
    """The lead's title and fix summary are the headline and What to do above: not said twice."""
    mark = paint(COLORS[finding.severity], f"[{MARKS[finding.severity]}]")
    out = [f"{index}. {mark} " + (paint(BOLD, "The cause, as above") if lead else paint(BOLD, finding.title)),
           paint(DIM, f"   {finding.code} · confidence {finding.confidence}")]
    out += textwrap.wrap(finding.detail, WIDTH, initial_indent="   ", subsequent_indent="   ")
    if finding.evidence:
        out.append("   Evidence:")
        for item in finding.evidence:
            text = item.text if len(item.text) <= 300 else item.text[:297] + "..."
            out.append(f"     > {text}")
            out.append(paint(DIM, f"       ({item.source})"))
    if finding.fix:
        out.append("   The fix:" if lead else f"   What to do: {finding.fix.summary}")
        out += [f"     | {line}" for line in finding.fix.snippet.rstrip("\n").splitlines()]
    for rem in finding.remediations:
        out.append(f"   In Slack, {remediation_label(rem.kind)!r} asks on-call to approve: {rem.kind} on {rem.target}")
    out.append("")
    return out
