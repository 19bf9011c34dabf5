"""The one redaction step: secrets in gathered text never reach a finding, and so never Slack, the
terminal, JSON or the incident store.

Every Diagnosis leaves the engine (and the text explainer) through ``redact_diagnosis``; the store
redacts every text it writes as well. A secret's value is replaced and the rest of the line is kept,
so the evidence still reads: ``MLFLOW_TRACKING_URI=https://ci:[REDACTED]@mlflow.internal`` still says
which server was meant. The detectors live in ``playbooks.redaction``.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from playbooks.model import Diagnosis, Evidence, Finding, Fix
from playbooks.redaction import MASK, redact_text

__all__ = ["MASK", "redact", "redact_diagnosis", "rewrite_texts"]


def redact(text: str) -> str:
    """``text`` with every secret value replaced by [REDACTED]."""
    return redact_text(text)


def redact_diagnosis(diagnosis: Diagnosis) -> Diagnosis:
    """A copy of the diagnosis with every text field redacted."""
    return rewrite_texts(diagnosis, redact)


def rewrite_texts(diagnosis: Diagnosis, fn: Callable[[str], str]) -> Diagnosis:
    """A copy of the diagnosis with ``fn`` applied to every text people read (summary, gaps, titles,
    details, evidence, fix snippets)."""
    def finding(f: Finding) -> Finding:
        fix = f.fix
        return replace(
            f,
            title=fn(f.title),
            detail=fn(f.detail),
            evidence=[Evidence(source=fn(e.source), text=fn(e.text)) for e in f.evidence],
            fix=Fix(summary=fn(fix.summary), snippet=fn(fix.snippet), language=fix.language) if fix else None,
        )

    return replace(diagnosis, summary=fn(diagnosis.summary), findings=[finding(f) for f in diagnosis.findings],
                   gaps=[fn(g) for g in diagnosis.gaps])
