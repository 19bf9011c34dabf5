"""An approval request as Slack shows it: what would change (the diff), who asked and why, until
when, and the buttons its state allows: Approve / Reject while pending (or failed, to retry), Undo
once applied. The same message is updated in place at every step, wherever it was posted."""
from __future__ import annotations

from bot.payloads import ACTION_APPROVE, ACTION_REJECT, ACTION_UNDO, encode_proposal
from bot.render.blocks import kit, limits
from bot.render.blocks.incidents import mention, slack_date
from bot.render.blocks.text import clean, escape, fenced_chunks
from bot.render.wording import APPROVE, REJECT, REMEDIATION_LABELS, UNDO

MAX_DIFF_SECTIONS = 2  # with the results, within Slack's 12,000 characters per message
MAX_RESULTS = 10
STATE_LINES = {
    "pending": ":hourglass_flowing_sand: Waiting for approval",
    "approved": ":gear: Approved: applying",
    "applied": ":white_check_mark: Applied",
    "rejected": ":no_entry_sign: Rejected",
    "expired": ":alarm_clock: Expired: request it again from a fresh diagnosis",
    "failed": ":x: Failed: nothing more was written; approve again to retry",
    "undone": ":leftwards_arrow_with_hook: Undone",
}


STALE_LINE = (":warning: Stopped: the target changed since this was proposed, so it cannot be applied as shown; "
              "request a fresh proposal from a new diagnosis")


def _stale(p) -> bool:
    """Stopped because what it would change moved since the proposal: approving again cannot help."""
    last = (p.results or [{}])[-1]
    return p.state == "failed" and last.get("result") == "stopped" and "changed since the proposal" in str(
        last.get("reason", ""))


def proposal_text(p) -> str:
    return f"Change #{p.id} {p.state}: {_action(p)} on {escape(p.target)}"


def _action(p) -> str:
    """The change in plain words ("Protect from disruption"); its kind stays in the context line."""
    return REMEDIATION_LABELS.get(p.kind, p.kind)


def proposal_blocks(p, *, note: str | None = None) -> list[dict]:
    """``p``: a ProposalView (bot.store.proposals)."""
    summary = (p.plan or {}).get("summary") or f"{p.kind} on {p.target}"
    blocks = [
        kit.section(f":lock: *Change #{p.id}: {clean(_action(p), 80)}* on `{clean(p.target, 300)}` in "
                    f"`{clean(p.cluster, 100)}`\n{clean(summary, 500)}"),
        kit.context(f"Requested by {mention(p.requested_by)}", f"Reason: {clean(p.reason, 300)}",
                    f"Expires {slack_date(p.expires_at)}", f"`{clean(p.kind, 60)}`"),
    ]
    preview = (p.plan or {}).get("preview") or ""
    chunks = fenced_chunks(preview, limit=limits.SECTION_TEXT - 100) if preview.strip() else []
    blocks += [kit.section(chunk) for chunk in chunks[:MAX_DIFF_SECTIONS]]
    if len(chunks) > MAX_DIFF_SECTIONS:
        blocks.append(kit.context(f"and {len(chunks) - MAX_DIFF_SECTIONS} more parts of the diff"))
    stale = _stale(p)
    state = STALE_LINE if stale else STATE_LINES.get(p.state, p.state)
    who = []
    if p.approvals:
        who.append("approved by " + ", ".join(mention(a) for a in p.approvals))
    if p.state == "rejected" and p.decided_by:
        who.append(f"rejected by {mention(p.decided_by)}")
    if p.state == "undone" and p.undone_by:
        who.append(f"undone by {mention(p.undone_by)}")
    blocks.append(kit.section(f"*{state}*" + (f" ({'; '.join(who)})" if who else "")))
    if p.results:
        blocks.append(kit.section(_results(p.results)))
    if note:
        blocks.append(kit.context(clean(note, 500)))
    value = encode_proposal(p.id)
    if p.state == "failed" and stale:
        blocks += kit.actions([kit.button(REJECT, action_id=ACTION_REJECT, value=value)])
    elif p.state in ("pending", "failed"):
        blocks += kit.actions([kit.button(APPROVE, action_id=ACTION_APPROVE, value=value, style="primary"),
                               kit.button(REJECT, action_id=ACTION_REJECT, value=value, style="danger")])
    elif p.state == "applied" and p.undo:
        blocks += kit.actions([kit.button(UNDO, action_id=ACTION_UNDO, value=value)])
    return blocks


def _results(results: list[dict]) -> str:
    """One line per object, as many as fit, then how many more."""
    budget = 2000
    lines: list[str] = []
    for i, r in enumerate(results[:MAX_RESULTS]):
        line = (f"• `{clean(str(r.get('object', '')), 200)}`: {clean(str(r.get('result', '')), 60)}"
                + (f" ({clean(str(r['reason']), 300)})" if r.get("reason") else ""))
        if sum(len(x) + 1 for x in lines) + len(line) > budget:
            break
        lines.append(line)
    if len(lines) < len(results):
        lines.append(f"and {len(results) - len(lines)} more")
    return "\n".join(lines)
