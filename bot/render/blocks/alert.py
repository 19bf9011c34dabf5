"""Alert messages: one per problem group (firing, then resolved, updated in place), and a digest for a
burst of new groups.

Everything quoted (titles, targets, evidence) comes from the cluster or Alertmanager and is escaped;
the only ``<…>`` we write are user mentions and date tokens (bot.render.blocks.incidents). Sizes are
bounded by construction: at most MAX_EVIDENCE quoted lines and MAX_MEMBERS listed problems, each cut,
so a message stays well within Slack's 50 blocks and 12,000 characters whatever the storm.
"""
from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING, Mapping, Sequence

from bot.alerts.buttons import SNOOZES, encode_alert
from bot.payloads import ACTION_ALERT_ACKNOWLEDGE
from bot.render.blocks import kit, limits
from bot.render.blocks.alert_masking import Closed, held_back_count, held_noun
from bot.render.blocks.incidents import marker, mention, slack_date
from bot.render.blocks.text import clean, cut, quote

if TYPE_CHECKING:  # the store speaks SQL; rendering needs only its plain dataclasses
    from bot.store.alerts import AlertView, GroupView

TITLE_LIMIT = 300
TARGET_LIMIT = 200
MAX_EVIDENCE = 6
EVIDENCE_LIMIT = 1500
MAX_MEMBERS = 10
MAX_DIGEST_CODES = 15
MAX_DIGEST_ITEMS = 15


def headline(group: "GroupView") -> str:
    """One line for the group, in plain words: its cause and who waits on it ("NodePool gpu-training-32 has
    used all 32 of its GPUs: 16 pods of 3 jobs wait on it"), else its problem's title, or what the storm is
    ("64 pods of pytorchjob/llm/x: …"). Codes and fingerprints stay out of it (they are in a context line)."""
    told = cause_headline(group)
    if told:
        return told
    members = group.members
    if group.count <= 1 or not members:
        return group.title
    targets = list(dict.fromkeys(m.target for m in members))
    if len(targets) == 1:
        return f"{group.title} ({group.count} times)"
    kinds = {m.target_kind for m in members}
    noun = f"{next(iter(kinds))}s" if len(kinds) == 1 else "objects"
    # A producer's storm key is "<code>@<owner>" or "<owner>"; only the owner is words a reader knows.
    owner = group.group_key.rpartition("@")[2]
    return f"{len(targets)} {noun} of {owner}: {group.title}" if not owner.startswith("sha256:") else (
        f"{len(targets)} {noun}: {group.title}")


def cause_headline(group: "GroupView") -> str:
    """The cause in plain words, with who waits on it; "" for a group without a cause."""
    said, name = cause_said(group), group.cause_name or ""
    if not said:
        return ""
    waiting = waiting_on(group)
    if waiting:
        return f"{said}: {waiting}"
    if len(group.members) == 1:  # a lone problem's title names its object already, in more detail
        return group.title if name in group.title else f"{said}: {group.title}"
    return f"{said} ({len(group.members)} problems)"


def cause_said(group: "GroupView") -> str:
    """What the cause's own object is doing ("NodePool gpu-training-32 has used all 32 of its GPUs"): it is
    cluster-scoped, so a channel that reads the cluster reads this even where the waiting pods are closed
    to it; "" for a group without a cause."""
    kind, name = group.cause_kind, group.cause_name or ""
    if kind == "limit":
        blocked = bool(waiting_on(group)) or any(m.severity in ("critical", "error") for m in group.members)
        return f"NodePool {name} {used_up(group.cause_usage, blocked=blocked)}"
    if kind == "offering":
        instance_type, _, rest = name.partition("/")
        zone, _, capacity = rest.partition("/")
        return f"EC2 has no {capacity} capacity for {instance_type} in {zone}"
    if kind == "gpu":
        return f"Node {name} has a failing GPU"
    if kind == "nodeclass":
        return f"NodeClass {name} is not ready, so Karpenter launches nothing from it"
    return ""


def used_up(usage: dict[str, str] | None, *, blocked: bool) -> str:
    """What a NodePool has used of its limit, from the limit finding's structured fields ("has used all 32
    of its GPUs", "has used 15 of its 16 GPUs, too many for another node", "has used all its memory: 2Ti of
    2Ti"); without them, only whether it is at its limits."""
    if not usage:
        return "is at its limits" if blocked else "is near its limits"
    resource, used, limit = (clean(usage[k], 64) for k in ("resource_type", "used", "limit"))
    gpus = resource.endswith("/gpu")  # nvidia.com/gpu, amd.com/gpu: the device plugins' GPU resources
    if blocked and used == limit:
        return f"has used all {limit} of its GPUs" if gpus else f"has used all its {resource}: {used} of {limit}"
    said = f"has used {used} of its {limit} GPUs" if gpus else f"has used {used} of its {limit} {resource}"
    # Blocked short of the limit: the smallest node that fits the pods would take it past (scheduler.go).
    return f"{said}, too many for another node" if blocked else said


# Members that are a workload waiting on a cause, not the cause's own object.
_NOT_WORKLOADS = ("pod", "node", "nodepool", "nodeclaim", "alert")


def waiting_on(group: "GroupView") -> str:
    """"16 pods of 3 jobs wait on it", "1 pod waits on it", "2 jobs wait on it"; "" when nothing waits."""
    return _waiting(group.members)


def _waiting(members: Sequence["AlertView"]) -> str:
    jobs = len({m.target for m in members if m.target_kind not in _NOT_WORKLOADS})
    # Counted pods only: an alert scraped from a pod (Karpenter's controller) names that pod, which waits on nothing.
    pods = sum(m.pods for m in members)
    if pods and jobs:
        return f"{_n(pods, 'pod')} of {_n(jobs, 'job')} wait on it"
    if pods:
        return f"{_n(pods, 'pod')} {'waits' if pods == 1 else 'wait'} on it"
    if jobs:
        return f"{_n(jobs, 'job')} {'waits' if jobs == 1 else 'wait'} on it"
    return ""


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


_CAUSE_OBJECTS = {"limit": "nodepool", "offering": "offering", "gpu": "node", "nodeclass": "nodeclass"}


def alert_text(group: "GroupView", *, masked: bool = False, closed: Closed | None = None) -> str:
    """The notification text (and what screen readers say): escaped like every other text field, since
    Slack parses ``<!channel>`` and ``<url|label>`` in the top-level text as well."""
    state = "Resolved: " if group.status == "resolved" else ""
    shown = shown_headline(group, closed_to(group, masked=masked, closed=closed))
    return clean(f"{state}[{group.severity}] {shown}", limits.FALLBACK_TEXT)


def closed_to(group: "GroupView", *, masked: bool = False, closed: Closed | None = None) -> Closed:
    """What the channel may not read: ``closed`` where the caller knows it scope by scope; else all of
    it when ``masked``, since a bare "masked" says nothing of which objects stay open."""
    if closed is not None:
        return closed
    return Closed.everything(group) if masked else Closed()


def shown_headline(group: "GroupView", closed: Closed) -> str:
    if not closed:
        return headline(group)
    return partial_headline(group, closed) if closed.cause_open(group) else masked_headline(group)


def partial_headline(group: "GroupView", closed: Closed) -> str:
    """The cause and its usage as in full, who waits on it as far as this channel may read, the rest
    counted: "NodePool gpu-training-32 has used all 32 of its GPUs: 3 pods of 1 namespace this channel
    cannot read"."""
    shown, held = closed.split(group.members)
    told = [_waiting(shown)] if _waiting(shown) else []
    if held:
        told.append(held_back_count(held))
    said = cause_said(group)
    return f"{said}: {', and '.join(told)}" if told else said


# A cause's kind in words that name no object: what a channel that may not read the alert is told.
_CAUSE_KINDS = {"limit": "A NodePool at its limits", "offering": "No EC2 capacity", "gpu": "A failing GPU",
                "nodeclass": "A NodeClass that is not ready"}


def masked_headline(group: "GroupView") -> str:
    """The group told by the kind of its cause and counts alone, for a channel that may not read what it
    is about (its code is in the context line)."""
    return f"{_CAUSE_KINDS.get(group.cause_kind or '', 'An alert')}: {held_back(group)}"


def held_back(group: "GroupView") -> str:
    """``a pod in a namespace this channel cannot read``, ``3 pods in ...``: kinds and counts only."""
    targets = list(dict.fromkeys(m.target for m in group.members)) or [group.group_key]
    kinds = {m.target_kind for m in group.members}
    kind = next(iter(kinds)) if len(kinds) == 1 else "object"
    if len(targets) == 1:
        noun = f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind}"
    else:
        noun = f"{len(targets)} {kind}s"
    where = "a namespace" if any(ns for _, ns in group.scopes) else "a cluster"
    return f"{noun} in {where} this channel cannot read"


def alert_blocks(group: "GroupView", *, now: datetime, masked: bool = False,
                 closed: Closed | None = None) -> list[dict]:
    """``closed``: the scopes this channel may not read (bot.render.blocks.alert_masking); ``masked``
    alone: none of it."""
    closed = closed_to(group, masked=masked, closed=closed)
    if closed and closed.cause_open(group):
        return _partial_blocks(group, closed, now=now)
    if closed:
        return _masked_blocks(group, now=now)
    resolved = group.status == "resolved"
    title = clean(headline(group), TITLE_LIMIT)
    lead = f"{':white_check_mark:' if resolved else marker(group.severity)} *{'Resolved: ' if resolved else ''}{title}*"
    blocks = [kit.section(lead), kit.fields_section(_facts(group)), kit.context(_codes(group))]
    if resolved:
        blocks.append(kit.context(f"Resolved {slack_date(group.resolved_at or now)}: "
                                  f"{clean(group.resolved_reason or 'cleared', 500)}"))
    listed = _members(group)
    if listed:
        blocks.append(kit.section(listed))
    evidence = _evidence(group.members)
    if evidence:
        blocks.append(kit.section(evidence))
    return blocks + _footer(group, now, resolved=resolved)


def _partial_blocks(group: "GroupView", closed: Closed, *, now: datetime) -> list[dict]:
    """The cause, its usage and every problem this channel may read, as in full; the problems of closed
    namespaces counted, with neither their targets, titles nor evidence."""
    resolved = group.status == "resolved"
    title = clean(partial_headline(group, closed), TITLE_LIMIT)
    lead = f"{':white_check_mark:' if resolved else marker(group.severity)} *{'Resolved: ' if resolved else ''}{title}*"
    blocks = [kit.section(lead), kit.fields_section(_facts(group, closed)), kit.context(_codes(group))]
    if resolved:
        blocks.append(kit.context(f"Resolved {slack_date(group.resolved_at or now)}"))
    listed = _members(group, closed)
    if listed:
        blocks.append(kit.section(listed))
    evidence = _evidence(closed.split(group.members)[0])
    if evidence:
        blocks.append(kit.section(evidence))
    blocks.append(kit.context(PARTIAL_NOTE))
    return blocks + _footer(group, now, resolved=resolved)


def _footer(group: "GroupView", now: datetime, *, resolved: bool) -> list[dict]:
    """Snooze / acknowledgement state, then the buttons while the alert still fires."""
    status = _status(group, now)
    return ([kit.context(status)] if status else []) + ([] if resolved else alert_buttons(group))


def _masked_blocks(group: "GroupView", *, now: datetime) -> list[dict]:
    """Codes, counts and times only: no target, namespace, title or evidence reaches this channel."""
    resolved = group.status == "resolved"
    lead = (f"{':white_check_mark:' if resolved else marker(group.severity)} "
            f"*{'Resolved: ' if resolved else ''}{clean(masked_headline(group), TITLE_LIMIT)}*")
    facts = [f"*Severity*\n{clean(group.severity, 20)}", f"*Problems*\n{group.count}",
             f"*First seen*\n{slack_date(group.first_seen)}", f"*Source*\n{clean(group.source, 20)}"]
    blocks = [kit.section(lead), kit.fields_section(facts), kit.context(f"Code: `{clean(group.code, 100)}`")]
    if resolved:
        blocks.append(kit.context(f"Resolved {slack_date(group.resolved_at or now)}"))
    blocks.append(kit.context(MASKED_NOTE))
    return blocks + _footer(group, now, resolved=resolved)


PARTIAL_NOTE = ("Some details held back: gpubot's policy does not open every namespace of this alert to this "
                "channel. `/gpu incidents` in a channel (or a DM) whose grant opens them shows them.")
MASKED_NOTE = ("Details held back: gpubot's policy does not open this alert's namespace to this channel. "
               "`/gpu incidents` in a channel (or a DM) whose grant opens it shows them.")


def alert_buttons(group: "GroupView") -> list[dict]:
    value = encode_alert(group.id)
    buttons = [kit.button(s.label, action_id=action, value=value) for action, s in SNOOZES.items()]
    if group.acknowledged_by is None:
        buttons.append(kit.button("Acknowledge", action_id=ACTION_ALERT_ACKNOWLEDGE, value=value, style="primary"))
    return kit.actions(buttons)


def _facts(group: "GroupView", closed: Closed = Closed()) -> list[str]:
    where = group.cluster or "(default cluster)"
    if group.namespace and (group.cluster, group.namespace) not in closed.scopes:
        where += f" / {group.namespace}"
    target = group.members[0].target if group.members else group.group_key
    label = "Target"
    if group.cause_kind in _CAUSE_OBJECTS:
        label, target = "Cause", f"{_CAUSE_OBJECTS[group.cause_kind]}/{group.cause_name}"
    return [f"*Severity*\n{clean(group.severity, 20)}", f"*{label}*\n`{clean(target, TARGET_LIMIT)}`",
            f"*Cluster*\n{clean(where, TARGET_LIMIT)}", f"*Problems*\n{group.count}",
            f"*First seen*\n{slack_date(group.first_seen)}", f"*Source*\n{clean(group.source, 20)}"]


def _codes(group: "GroupView") -> str:
    """The finding codes, for whoever looks them up (docs/findings.md): here, never in the headline."""
    codes = list(dict.fromkeys([group.code] + [m.code for m in group.members]))[:MAX_MEMBERS]
    return "Codes: " + ", ".join(f"`{clean(code, 64)}`" for code in codes)


def _members(group: "GroupView", closed: Closed = Closed()) -> str:
    """The problems of a storm, most severe first (a lone problem is the headline already); those of
    namespaces ``closed`` to the channel as one count, last."""
    if len(group.members) <= 1:
        return ""
    shown, held = closed.split(group.members)
    lines = [f"{marker(m.severity)} `{clean(m.target, 120)}` {_member_says(group, m)}"
             + (f" ({m.count}×)" if m.count > 1 else "") for m in shown[:MAX_MEMBERS]]
    more = len(shown) - MAX_MEMBERS
    if more > 0:
        lines.append(f"… and {more} more")
    if held:
        lines.append(f"{marker(_worst(held))} {held_noun(held)} held back")
    return cut("\n".join(lines), limits.SECTION_TEXT)


def _member_says(group: "GroupView", member) -> str:
    """A waiting workload under its cause is told by its count (the headline told the cause already);
    anything else by its title."""
    if group.cause_kind and member.pods:
        return f"{_n(member.pods, 'pod')} waiting"
    return clean(member.title, 160)


def _evidence(members: Sequence["AlertView"]) -> str:
    lines = list(dict.fromkeys(text for m in members[:MAX_MEMBERS] for _, text in m.evidence))[:MAX_EVIDENCE]
    if not lines:
        return ""
    return "*Evidence*\n" + quote("\n".join(lines), limit=EVIDENCE_LIMIT, max_lines=MAX_EVIDENCE)


def _status(group: "GroupView", now: datetime) -> str:
    parts = []
    if group.acknowledged_by:
        parts.append(f"Acknowledged by {mention(group.acknowledged_by)}")
    if group.snoozed(now):
        until = "until it resolves" if group.snoozed_until_resolved else f"until {slack_date(group.snoozed_until)}"
        parts.append(f":zzz: Snoozed {until} by {mention(group.snoozed_by)}")
    return " · ".join(parts)


# --- a burst of new problems ---------------------------------------------------------------------------

def digest_text(groups: Sequence["GroupView"]) -> str:
    firing = sum(1 for g in groups if g.status == "firing")
    return f"{len(groups)} new alerts ({firing} still firing)"


def digest_blocks(groups: Sequence["GroupView"], *, now: datetime, masked: frozenset[int] = frozenset(),
                  closed: Mapping[int, Closed] | None = None) -> list[dict]:
    """Counts per code and severity, and the most severe items: one message instead of hundreds.
    ``closed``: by group id, what this channel may not read of it; ``masked``: ids of groups it may
    read nothing of."""
    closed = closed or {}
    firing = [g for g in groups if g.status == "firing"]
    head = (f"{marker(_worst(groups))} *{len(groups)} new alerts at once* — {len(firing)} still firing, "
            f"{len(groups) - len(firing)} resolved")
    by_code = Counter((g.severity, g.code) for g in firing)
    ranked = sorted(by_code.items(), key=lambda item: (_rank(item[0][0]), -item[1], item[0][1]))
    rows = [f"{marker(sev)} `{clean(code, 64)}` {sev}: {n}" for (sev, code), n in ranked[:MAX_DIGEST_CODES]]
    if len(ranked) > MAX_DIGEST_CODES:
        rows.append(f"… and {len(ranked) - MAX_DIGEST_CODES} more codes")
    blocks = [kit.section(head)]
    top = sorted(firing, key=lambda g: (_rank(g.severity), -g.count, g.id))[:MAX_DIGEST_ITEMS]
    if top:
        items = [f"{marker(g.severity)} "
                 f"{clean(shown_headline(g, closed_to(g, masked=g.id in masked, closed=closed.get(g.id))), 180)}"
                 for g in top]
        blocks.append(kit.section(cut("*Most severe*\n" + "\n".join(items), limits.SECTION_TEXT)))
    if rows:  # codes are for looking up (docs/findings.md): a context line, never the prose
        blocks.append(kit.context("By code: " + " · ".join(rows)))
    blocks.append(kit.context(f"Updated {slack_date(now)} · each alert is tracked and resolved on its own; "
                              "`/gpu incidents` lists them"))
    return blocks


def _rank(severity: str) -> int:
    order = ("critical", "error", "warning", "info")
    return order.index(severity) if severity in order else len(order)


def _worst(groups: Sequence["GroupView | AlertView"]) -> str:
    return min((g.severity for g in groups), key=_rank, default="info")
