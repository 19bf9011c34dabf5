"""What a diagnosis message says first, for every surface (Slack, terminal): the lead finding as one
sentence with the target ("Job llama-70b can't start: NodePool gpu-training-32 has used all 32 GPUs"),
the findings that follow from it, the other possible causes, and the rest (secondary: warnings and
info) that belongs behind Show evidence.

The parts come from the findings' structured fields: the engine's order (most likely cause first),
``consequence_of`` for what follows from a cause, the severity for what is secondary.
"""
from __future__ import annotations

from dataclasses import dataclass

from bot.render.wording import HEALTHY, KIND_NAMES, state
from playbooks.model import Diagnosis, Finding

# Not a problem, yet the answer to "why is it pending?": it leads when nothing serious was found.
WAITING_CODES = ("karpenter.provisioning",)


@dataclass(frozen=True)
class Answer:
    lead: int | None  # index into the diagnosis' findings
    consequences: list[int]  # follow from the lead
    causes: list[int]  # other possible causes (error and critical)
    secondary: list[int]  # warnings and info, not the cause


def answer(d: Diagnosis) -> Answer:
    indexed = list(enumerate(d.findings))
    serious = [i for i, f in indexed if f.severity in ("critical", "error") and f.consequence_of is None]
    waiting = [i for i, f in indexed if f.code in WAITING_CODES]
    warnings = [i for i, f in indexed if f.severity == "warning" and f.consequence_of is None]
    lead = (serious or warnings or waiting or [None])[0]
    if lead is None:
        return Answer(lead=None, consequences=[], causes=[], secondary=[i for i, _ in indexed])
    cause = d.findings[lead]
    consequences = [i for i, f in indexed if i != lead and f.consequence_of == cause.code]
    causes = [i for i in serious if i != lead]
    taken = {lead, *consequences, *causes}
    return Answer(lead=lead, consequences=consequences, causes=causes,
                  secondary=[i for i, _ in indexed if i not in taken])


def subject(d: Diagnosis) -> str:
    """"Job llama-70b", "Pod bert-finetune-5", "NodePool gpu-training-32"."""
    t = d.target
    kind = KIND_NAMES.get(t.kind, t.kind)
    return kind if t.kind == "text" else f"{kind} {t.name}"


def plain_title(d: Diagnosis, finding: Finding) -> str:
    """The finding's title as the second half of the headline: a leading "<target name>: " is dropped,
    and a title whose subject is the target's name speaks of it as "it"."""
    title, name = finding.title.strip(), d.target.name
    if title.startswith(f"{name}: "):
        return title[len(name) + 2:]
    if title.startswith(f"{name} "):
        return "it" + title[len(name):]
    return title


def headline(d: Diagnosis) -> str:
    """The answer in one sentence: the target, its state and the cause in plain words."""
    lead_in, cause = headline_parts(d)
    return f"{lead_in}: {cause}"


def headline_parts(d: Diagnosis) -> tuple[str, str]:
    """("Job llama-70b can't start", "NodePool gpu-training-32 has used all 32 GPUs")."""
    a = answer(d)
    if a.lead is None:
        return subject(d), HEALTHY
    lead = d.findings[a.lead]
    return f"{subject(d)} {state(d.target.kind, lead.code)}", plain_title(d, lead)


def place(d: Diagnosis) -> str:
    """"in namespace ml on cluster prod", or less where a part is not known."""
    t = d.target
    return " ".join(p for p in (f"in namespace {t.namespace}" if t.namespace else "",
                                f"on cluster {d.cluster}" if d.cluster else "") if p)


def what_to_do(d: Diagnosis) -> str:
    """The lead's fix in one line, or "" when it has none."""
    a = answer(d)
    if a.lead is None:
        return ""
    fix = d.findings[a.lead].fix
    return fix.summary.strip().rstrip(".") if fix and fix.summary.strip() else ""
