"""One problem per fingerprint: two detectors (or two conditions) that see the same problem on the
same target add up their evidence instead of raising it twice."""
from __future__ import annotations

from dataclasses import replace

from playbooks.model import SEVERITIES
from playbooks.problems import Problem

MAX_EVIDENCE = 8


def merge(problems: list[Problem]) -> list[Problem]:
    """Problems with the same fingerprint made one, in first-seen order: the most severe one's title and
    detail, everyone's evidence and remediations (no duplicates)."""
    merged: dict[str, Problem] = {}
    for problem in problems:
        seen = merged.get(problem.fingerprint)
        if seen is None:
            merged[problem.fingerprint] = problem
            continue
        worse = SEVERITIES.index(problem.severity) < SEVERITIES.index(seen.severity)
        lead, other = (problem, seen) if worse else (seen, problem)
        evidence = tuple(dict.fromkeys(lead.evidence + other.evidence))[:MAX_EVIDENCE]
        remediations = tuple({(r.kind, r.target): r for r in other.remediations + lead.remediations}.values())
        merged[problem.fingerprint] = replace(lead, evidence=evidence, remediations=remediations,
                                              nodepool=lead.nodepool or other.nodepool)
    return list(merged.values())
