"""The top of a diagnosis: the answer as the header ("Job llama-70b can't start: NodePool gpu-training-32
has used all 32 GPUs"); a cause too long for a header (150 characters) follows it as a bold line."""
from __future__ import annotations

from bot.render.answer import headline_parts
from bot.render.blocks import kit, limits
from bot.render.blocks.finding import MARKERS, worst_severity
from bot.render.blocks.text import clean
from bot.targets import KINDS
from playbooks.model import Diagnosis

HEADLINE_LIMIT = 1000
ALL_CLEAR = ":large_green_circle:"


def header_blocks(d: Diagnosis) -> list[dict]:
    serious = [f for f in d.findings if f.consequence_of is None]
    severity = worst_severity(serious)
    marker = ALL_CLEAR if severity in (None, "info") else MARKERS[severity]
    lead_in, cause = headline_parts(d)
    sentence = f"{marker} {lead_in}: {cause}"
    if len(sentence) <= limits.HEADER_TEXT:
        return [kit.header(sentence)]
    # too long for a header: the header keeps the target and its state, the cause follows whole
    return [kit.header(f"{marker} {lead_in}"), kit.section(f"*{clean(cause, HEADLINE_LIMIT)}*")]


def where(d: Diagnosis) -> list[str]:
    """Context elements: namespace and cluster."""
    return [p for p in (f"namespace `{clean(d.target.namespace, 100)}`" if d.target.namespace else "",
                        f"cluster `{clean(d.cluster, 200)}`" if d.cluster else "") if p]


def json_command(d: Diagnosis) -> str:
    """The CLI command that prints the whole diagnosis: where everything the message leaves out is."""
    t = d.target
    if t.kind not in KINDS:
        return "`gpubot explain FILE --json`"
    args = [f"gpubot diagnose {t.kind}/{t.name}"]
    if t.namespace:
        args.append(f"-n {t.namespace}")
    if d.cluster:
        args.append(f"--context {d.cluster}")
    return f"`{clean(' '.join(args), 500)} --json`"
