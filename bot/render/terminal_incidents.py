"""Incidents in the terminal: a list, and one incident with its timeline."""
from __future__ import annotations

from bot.store.incidents import IncidentDetail, IncidentView


def _when(value) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "-"


def render_list(incidents: list[IncidentView]) -> str:
    if not incidents:
        return "No incidents.\n"
    lines = [f"{'ID':>5}  {'STATUS':<12} {'SEVERITY':<8} {'CODE':<40} {'TARGET':<45} {'SEEN':>4}  UPDATED"]
    for i in incidents:
        target = f"{i.target} -n {i.namespace}" if i.namespace else i.target
        lines.append(f"{i.id:>5}  {i.status:<12} {i.severity:<8} {i.code:<40} {target:<45} {i.occurrences:>4}  {_when(i.updated_at)}")
    return "\n".join(lines) + "\n"


def render_detail(detail: IncidentDetail) -> str:
    i = detail.incident
    lines = [f"#{i.id} {i.code} on {i.target}" + (f" -n {i.namespace}" if i.namespace else "") + f" ({i.cluster})",
             f"{i.title}",
             f"status {i.status}, severity {i.severity}, seen {i.occurrences} times; opened {_when(i.opened_at)}, "
             f"updated {_when(i.updated_at)}"]
    if i.acknowledged_by:
        lines.append(f"acknowledged by {i.acknowledged_by}")
    if i.resolved_at:
        lines.append(f"resolved by {i.resolved_by} at {_when(i.resolved_at)}" + (f": {i.resolution}" if i.resolution else ""))
    lines += ["", "Timeline:"]
    lines += [f"  {_when(e.at)}  {e.kind:<22} {e.actor:<12} {e.detail}" for e in detail.timeline]
    if detail.findings:
        lines += ["", "Latest findings:"]
        lines += [f"  [{f.severity}] {f.code}: {f.title}" for f in detail.findings]
    return "\n".join(lines) + "\n"
