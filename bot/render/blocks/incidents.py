"""Incidents: the note under a diagnosis, /gpu incidents, /gpu incident <id>, and the confirmation of
an Acknowledge or Resolve click.

Two kinds of ``<…>`` are ours and left for Slack to parse: user mentions built by ``mention`` from an
id that looks like one, and date tokens built by ``slack_date``. Everything else (targets, codes,
titles, resolutions, timeline details) is escaped, so a ``<!channel>`` in it reaches Slack as text.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from bot.payloads import ACTION_ACKNOWLEDGE, ACTION_RESOLVE, encode_incident
from bot.render.blocks import kit, limits
from bot.render.blocks.finding import MARKERS
from bot.render.blocks.text import clean, escape, quote, split_mrkdwn

if TYPE_CHECKING:  # the store speaks SQL; rendering needs only its plain dataclasses' attributes
    from bot.store.incidents import FindingView, IncidentDetail, IncidentView, Recorded, TimelineView

USER_ID = re.compile(r"^[UW][A-Z0-9]{2,}$")
# A permalink as chat.getPermalink gives it; anything else (a character that would end the mrkdwn link
# early) is shown without a link rather than trusted.
SLACK_URL = re.compile(r"^https://[A-Za-z0-9.-]+\.slack\.com/[^\s<>|]{1,500}$")
_MENTION = re.compile(r"<@([UW][A-Z0-9]{2,})>")
MAX_LISTED = 20
MAX_FINDINGS = 4
MAX_TIMELINE = 15
TARGET_LIMIT = 200
CODE_LIMIT = 64
TITLE_LIMIT = 300
FIX_LIMIT = 300
RESOLUTION_LIMIT = 500
QUOTE_LIMIT = 300
DETAIL_LIMIT = 120
MESSAGE_LIMIT = 1000


def mention(actor: str | None, *, none: str = "nobody") -> str:
    """``<@U123>`` for what looks like a Slack user id; anything else (``gpubot``, ``cli:alice``) as text."""
    if not actor:
        return none
    return f"<@{actor}>" if USER_ID.match(actor) else clean(actor, 100)


def slack_date(at: datetime, *, fmt: str = "{date_short_pretty} {time}") -> str:
    """A date token each reader sees in their own time zone; the fallback is UTC."""
    at = at if at.tzinfo else at.replace(tzinfo=timezone.utc)
    fallback = at.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC" if "{time}" in fmt else "%Y-%m-%d")
    return f"<!date^{int(at.timestamp())}^{fmt}|{fallback}>"


def marker(severity: str) -> str:
    return MARKERS.get(severity, MARKERS["info"])


def incident_buttons(incident: IncidentView) -> list[dict]:
    """Acknowledge (unless it already is) and Resolve; none once it is resolved."""
    if incident.status == "resolved":
        return []
    value = encode_incident(incident.id)
    buttons = [] if incident.status == "acknowledged" else [
        kit.button("Acknowledge", action_id=ACTION_ACKNOWLEDGE, value=value, style="primary")]
    return kit.actions(buttons + [kit.button("Resolve", action_id=ACTION_RESOLVE, value=value)])


# --- under a diagnosis ----------------------------------------------------------------------------

def incident_note_blocks(recorded: Recorded | None, *, failure: str | None = None) -> list[dict]:
    """A context line (incident number, how often seen, how it was last fixed) and its buttons; at most
    about 700 characters, so a diagnosis message within its budget stays within Slack's total."""
    if failure is not None:
        return [kit.context(f":warning: Not recorded as an incident: {clean(failure, 500) or 'unknown error'}")]
    if recorded is None:
        return []
    incident, history = recorded.incident, recorded.history
    parts = [f"{marker(incident.severity)} Incident #{incident.id}",
             "new incident" if recorded.created else clean(incident.status, 30)]
    if history.seen_this_week > 1:
        parts.append(f"seen {history.seen_this_week} times this week")
    last = history.last_resolved
    if last is not None and last.resolved_at is not None:
        on = slack_date(last.resolved_at, fmt="{date_short}")
        text = f"last resolved by {mention(last.resolved_by, none='someone')} on {on}"
        parts.append(text + (f": {clean(history.last_fix, FIX_LIMIT)}" if history.last_fix else ""))
    return [kit.context(" · ".join(parts)), *incident_buttons(incident)]


def action_text(message: str) -> str:
    """``message`` for a text field: well-formed user mentions in it stay mentions, the rest is text."""
    pieces = _MENTION.split(message)  # text, id, text, id, …, text
    return "".join(f"<@{p}>" if i % 2 else escape(p) for i, p in enumerate(pieces))


def incident_action_blocks(message: str) -> list[dict]:
    """One confirmation line; well-formed user mentions in ``message`` stay mentions, the rest is text."""
    text = action_text(message)
    if len(text) > MESSAGE_LIMIT:
        text = clean(message, MESSAGE_LIMIT)
    return [kit.context(text or "Done.")]


# --- /gpu incidents -------------------------------------------------------------------------------

def incident_line(incident: IncidentView, *, link: str | None = None) -> str:
    """``:red_circle: *#12* `karpenter.disruption` on `pytorchjob/x` · open · 3× · updated <date>``, the
    number linking to the incident's thread when ``link`` (its chat.getPermalink URL) is given."""
    number = f"#{incident.id}"
    if link is not None and SLACK_URL.match(link):
        number = f"<{link}|{number}>"
    return (f"{marker(incident.severity)} *{number}* `{clean(incident.code, CODE_LIMIT)}` on "
            f"`{clean(incident.target, TARGET_LIMIT)}` · {clean(incident.status, 30)} · "
            f"{incident.occurrences}× · updated {slack_date(incident.updated_at)}")


def incident_list_blocks(incidents: list[IncidentView], *, title: str, links: dict[int, str] | None = None) -> list[dict]:
    """A header, then one section per incident, in the order given (the store sorts worst first);
    ``links``: incident id -> its thread's URL."""
    blocks = [kit.header(title)]
    if not incidents:
        return blocks + [kit.section(":large_green_circle: No open incidents.")]
    links = links or {}
    for incident in incidents[:MAX_LISTED]:
        where = " · ".join(p for p in (_namespace(incident), f"cluster `{clean(incident.cluster, 100)}`"
                                       if incident.cluster else "") if p)
        line = incident_line(incident, link=links.get(incident.id))
        blocks.append(kit.section(line + (f"\n{where}" if where else "")))
    if len(incidents) > MAX_LISTED:
        blocks.append(kit.context(f"and {len(incidents) - MAX_LISTED} more: `/gpu incident ID` shows one"))
    return blocks


# --- /gpu incident <id> ---------------------------------------------------------------------------

def incident_detail_blocks(detail: IncidentDetail) -> list[dict]:
    """Header, the facts as fields, the latest diagnosis' findings, the timeline, the buttons."""
    incident = detail.incident
    blocks = [kit.header(f"#{incident.id} {incident.code} on {incident.target}"),
              kit.fields_section(_facts(incident), text=f"*{clean(incident.title, TITLE_LIMIT) or 'Untitled'}*")]
    if detail.findings:
        blocks += [kit.divider(), kit.section("*Latest findings*"),
                   *(kit.section(_finding(f)) for f in detail.findings[:MAX_FINDINGS])]
        if len(detail.findings) > MAX_FINDINGS:
            blocks.append(kit.context(f"and {len(detail.findings) - MAX_FINDINGS} more findings"))
    if detail.timeline:
        blocks += [kit.divider(), *_timeline(detail.timeline)]
    return blocks + incident_buttons(incident)


def _facts(incident: IncidentView) -> list[str]:
    resolved = mention(incident.resolved_by, none="not yet")
    if incident.resolved_at is not None:
        resolved += f" on {slack_date(incident.resolved_at)}"
    if incident.resolution:
        resolved += f"\n{clean(incident.resolution, RESOLUTION_LIMIT)}"
    return [f"*Cluster*\n{clean(incident.cluster, 100) or '-'}",
            f"*Namespace*\n{clean(incident.namespace or '', 100) or '-'}",
            f"*Status*\n{clean(incident.status, 30)}",
            f"*Severity*\n{marker(incident.severity)} {clean(incident.severity, 30)}",
            f"*Opened*\n{slack_date(incident.opened_at)}",
            f"*Updated*\n{slack_date(incident.updated_at)} · seen {incident.occurrences}×",
            f"*Acknowledged by*\n{mention(incident.acknowledged_by, none='not yet')}",
            f"*Resolved by*\n{resolved}"]


def _finding(finding: FindingView) -> str:
    line = f"{marker(finding.severity)} {clean(finding.title, TITLE_LIMIT)} · `{clean(finding.code, CODE_LIMIT)}`"
    first = next((e for e in finding.evidence if isinstance(e, dict) and str(e.get("text", "")).strip()), None)
    return line + (f"\n{quote(str(first['text']), limit=QUOTE_LIMIT, max_lines=4)}" if first else "")


def _timeline(entries: list[TimelineView]) -> list[dict]:
    ordered = sorted(entries, key=lambda e: e.at)
    shown = ordered[-MAX_TIMELINE:]
    heading = "*Timeline*"
    if len(ordered) > len(shown):
        heading += f" (the last {len(shown)} of {len(ordered)} entries)"
    lines = [heading] + [_entry(e) for e in shown]
    return [kit.section(piece) for piece in split_mrkdwn("\n".join(lines), limit=limits.SECTION_TEXT)]


def _entry(entry: TimelineView) -> str:
    line = f"{slack_date(entry.at)} · *{clean(entry.kind.replace('_', ' '), 40)}* · {mention(entry.actor)}"
    return line + (f" · {clean(entry.detail, DETAIL_LIMIT)}" if entry.detail.strip() else "")


def _namespace(incident: IncidentView) -> str:
    return f"namespace `{clean(incident.namespace, 100)}`" if incident.namespace else ""
