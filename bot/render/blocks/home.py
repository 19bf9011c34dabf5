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
CHART_TITLE = "Incidents by finding code, week by week"


def home_view(*, open_incidents: list[IncidentView], counts: dict[str, int], failure: str | None = None,
              links: dict[int, str] | None = None, chart_file_id: str | None = None) -> dict:
    """A views.publish view; ``counts``: diagnoses per finding code over the last 7 days; ``links``:
    incident id -> its thread's URL; ``chart_file_id``: the uploaded chart of incidents by code, week
    by week (an image block needs a public URL or a Slack file: the file)."""
    blocks = [kit.header("GPU incidents")]
    if failure is not None:
        blocks.append(kit.section(":warning: The incident database is unavailable, so incidents are not shown: "
                                  f"{clean(failure, 500) or 'unknown error'}"))
    else:
        blocks += _open(open_incidents, links or {})
    if chart_file_id is not None:
        blocks += [kit.divider(), _chart(chart_file_id)]
    blocks += [kit.divider(), *_codes(counts), kit.divider(),
               kit.context(f"`/gpu help` for commands · `/gpu incidents` · `/gpu incident {escape('<id>')}`")]
    return {"type": "home", "blocks": blocks}


def _chart(file_id: str) -> dict:
    return {"type": "image", "slack_file": {"id": file_id}, "title": kit.plain(CHART_TITLE),
            "alt_text": "Stacked bars: incidents opened each week of the last weeks, one colour per finding code."}


def _open(incidents: list[IncidentView], links: dict[int, str]) -> list[dict]:
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
        lines = [f"*{severity.capitalize()}* ({len(group)})", *(incident_line(i, link=links.get(i.id)) for i in group[:TOP_PER_SEVERITY])]
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
