"""All the evidence of one finding, for a thread reply: every item quoted in full (split across
sections), the whole fix, and a button to the next finding, in as many messages as it takes."""
from __future__ import annotations

from bot.render.blocks import kit, limits
from bot.render.blocks.actions import actionable, evidence_button
from bot.render.blocks.evidence import evidence_groups
from bot.render.blocks.finding import MARKERS
from bot.render.blocks.fix import fix_groups
from bot.render.blocks.header import json_command
from bot.render.blocks.pack import pack
from bot.render.blocks.text import clean, split_mrkdwn
from bot.render.wording import NEXT_FINDING
from playbooks.model import Diagnosis

MAX_MESSAGES = 5
EVIDENCE_MAX_CHARS = 12000  # of one item; longer log text is cut and the rest counted
DETAIL_MAX_CHARS = 12000
FIX_MAX_SECTIONS = 20
# Room kept in every message for the closing note and buttons.
_RESERVED_BLOCKS = 3
_RESERVED_TEXT = 800


def evidence_messages(d: Diagnosis, finding_index: int) -> list[list[dict]]:
    """One or more messages (each a list of blocks, each within Slack's limits), to post in order."""
    if not 0 <= finding_index < len(d.findings):
        raise IndexError(f"finding {finding_index} does not exist: the diagnosis has {len(d.findings)}")
    finding = d.findings[finding_index]
    title = f"{MARKERS[finding.severity]} *Evidence: {clean(finding.title, 300)}*"
    groups = [[kit.section(title), kit.context(f"`{clean(finding.code, 100)}` · {clean(str(d.target), 300)}")]]
    groups += [[kit.section(piece)] for piece in split_mrkdwn(clean(finding.detail, DETAIL_MAX_CHARS),
                                                               limit=limits.SECTION_TEXT)]
    for item in finding.evidence:
        groups += evidence_groups(item, max_chars=EVIDENCE_MAX_CHARS)
    if not finding.evidence:
        groups.append([kit.context("_No evidence recorded for this finding._")])
    if finding.fix:
        groups += fix_groups(finding.fix, max_sections=FIX_MAX_SECTIONS, more_hint=f" Run {json_command(d)}")
    continued = [kit.context(f"_Evidence for `{clean(finding.code, 100)}`, continued_")]
    messages = pack(groups, continued=continued, max_blocks=limits.MAX_BLOCKS["message"] - _RESERVED_BLOCKS,
                    max_text=limits.TEXT_BUDGET - _RESERVED_TEXT)
    if len(messages) > MAX_MESSAGES:
        messages = messages[:MAX_MESSAGES]
        messages[-1].append(kit.context(f"The rest is not shown here: run {json_command(d)}"))
    messages[-1] += _next_button(d, finding_index)
    return messages


def evidence_blocks(d: Diagnosis, finding_index: int) -> list[dict]:
    """The first of ``evidence_messages``: enough when the finding's evidence fits one message."""
    return evidence_messages(d, finding_index)[0]


def _next_button(d: Diagnosis, finding_index: int) -> list[dict]:
    following = finding_index + 1
    if not actionable(d) or following >= len(d.findings):
        return []
    return kit.actions([evidence_button(d, following, label=NEXT_FINDING)])
