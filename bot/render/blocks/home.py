"""The App Home tab: open incidents by severity, the week's diagnoses by finding code, where to start.

Bounded whatever the store holds: a few incidents per severity and the most frequent codes, each
list closed by "and N more", so the view stays far below the 100 blocks of a Home tab.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from bot.render.blocks import kit, limits
from bot.render.blocks.incidents import incident_line
from bot.render.blocks.text import clean, escape, fenced_chunks
from playbooks.model import SEVERITIES

if TYPE_CHECKING:
    from bot.store.incidents import IncidentView

TOP_PER_SEVERITY = 5
MAX_CODES = 20
CODE_WIDTH = 60


def home_view(*, open_incidents: list[IncidentView], counts: dict[str, int], failure: str | None = None) -> dict:
    """A views.publish view; ``counts``: diagnoses per finding code over the last 7 days."""
    blocks = [kit.header("GPU incidents")]
    if failure is not None:
        blocks.append(kit.section(":warning: The incident database is unavailable, so incidents are not shown: "
                                  f"{clean(failure, 500) or 'unknown error'}"))
    else:
        blocks += _open(open_incidents)
    blocks += [kit.divider(), *_codes(counts), kit.divider(),
               kit.context(f"`/gpu help` for commands · `/gpu incidents` · `/gpu incident {escape('<id>')}`")]
    return {"type": "home", "blocks": blocks}


def _open(incidents: list[IncidentView]) -> list[dict]:
    if not incidents:
        return [kit.section(":large_green_circle: No open incidents.")]
    by_severity = {s: [i for i in incidents if i.severity == s] for s in SEVERITIES}
    by_severity["info"] += [i for i in incidents if i.severity not in SEVERITIES]
    n = len(incidents)
    summary = " · ".join(f"{len(group)} {s}" for s, group in by_severity.items() if group)
    blocks = [kit.section(f"*{n} open incident{'' if n == 1 else 's'}*: {summary}")]
    for severity, group in by_severity.items():
        if not group:
            continue
        lines = [f"*{severity.capitalize()}* ({len(group)})", *(incident_line(i) for i in group[:TOP_PER_SEVERITY])]
        if len(group) > TOP_PER_SEVERITY:
            lines.append(f"and {len(group) - TOP_PER_SEVERITY} more")
        blocks.append(kit.section("\n".join(lines)))
    return blocks


def _codes(counts: dict[str, int]) -> list[dict]:
    title = "*Last 7 days by finding code*"
    if not counts:
        return [kit.section(f"{title}\nNo diagnoses.")]
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    rows = "\n".join(f"{count:>5}  {code[:CODE_WIDTH]}" for code, count in ranked[:MAX_CODES])
    blocks = [kit.section(f"{title}\n{fenced_chunks(rows, limit=limits.SECTION_TEXT - len(title) - 1)[0]}")]
    if len(ranked) > MAX_CODES:
        rest = ranked[MAX_CODES:]
        blocks.append(kit.context(f"and {len(rest)} more codes ({sum(c for _, c in rest)} diagnoses)"))
    return blocks
