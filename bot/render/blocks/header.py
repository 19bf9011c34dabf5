"""The top of a diagnosis: the target as a header, the one-line summary, where it was looked at."""
from __future__ import annotations

from bot.render.blocks import kit
from bot.render.blocks.finding import MARKERS, worst_severity
from bot.render.blocks.text import clean
from bot.targets import KINDS
from playbooks.model import Diagnosis

SUMMARY_LIMIT = 1000
ALL_CLEAR = ":large_green_circle:"


def header_blocks(d: Diagnosis) -> list[dict]:
    severity = worst_severity(d.findings)
    marker = MARKERS[severity] if severity else ALL_CLEAR
    return [kit.header(f"{marker} {d.target}"),
            kit.section(clean(d.summary, SUMMARY_LIMIT) if d.summary.strip() else "No summary."),
            kit.context(where(d))]


def where(d: Diagnosis) -> str:
    n = len(d.findings)
    parts = [f"namespace `{clean(d.target.namespace, 100)}`" if d.target.namespace else "",
             f"cluster `{clean(d.cluster, 200)}`" if d.cluster else "",
             f"{n} finding{'' if n == 1 else 's'}"]
    return " · ".join(p for p in parts if p)


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
