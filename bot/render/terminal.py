"""A diagnosis as people read it in a terminal: findings first, evidence quoted, fixes ready to copy."""
from __future__ import annotations

import textwrap

from playbooks.model import Diagnosis, Finding

MARKS = {"critical": "CRITICAL", "error": "ERROR", "warning": "WARNING", "info": "info"}
COLORS = {"critical": "\033[1;31m", "error": "\033[31m", "warning": "\033[33m", "info": "\033[2m"}
RESET, BOLD, DIM = "\033[0m", "\033[1m", "\033[2m"
WIDTH = 100


def render(diagnosis: Diagnosis, *, color: bool = False) -> str:
    paint = (lambda code, s: f"{code}{s}{RESET}") if color else (lambda code, s: s)
    target = diagnosis.target
    where = ", ".join(x for x in (f"namespace {target.namespace}" if target.namespace else "",
                                  f"cluster {diagnosis.cluster}" if diagnosis.cluster else "") if x)
    lines = [paint(BOLD, f"{target}") + (f"  ({where})" if where else ""), diagnosis.summary, ""]
    for i, finding in enumerate(diagnosis.findings, 1):
        lines += _finding(i, finding, paint)
    if diagnosis.gaps:
        lines.append(paint(DIM, "Not checked:"))
        lines += [paint(DIM, f"  - {gap}") for gap in diagnosis.gaps]
    return "\n".join(lines).rstrip() + "\n"


def _finding(index: int, finding: Finding, paint) -> list[str]:
    mark = paint(COLORS[finding.severity], f"[{MARKS[finding.severity]}]")
    out = [f"{index}. {mark} {paint(BOLD, finding.title)}",
           paint(DIM, f"   {finding.code} · confidence {finding.confidence}")]
    out += textwrap.wrap(finding.detail, WIDTH, initial_indent="   ", subsequent_indent="   ")
    if finding.evidence:
        out.append("   Evidence:")
        for item in finding.evidence:
            text = item.text if len(item.text) <= 300 else item.text[:297] + "..."
            out.append(f"     > {text}")
            out.append(paint(DIM, f"       ({item.source})"))
    if finding.fix:
        out.append(f"   Fix: {finding.fix.summary}")
        out += [f"     | {line}" for line in finding.fix.snippet.rstrip("\n").splitlines()]
    for rem in finding.remediations:
        out.append(f"   Remediation available: {rem.kind} on {rem.target} (needs on-call approval in Slack)")
    out.append("")
    return out
