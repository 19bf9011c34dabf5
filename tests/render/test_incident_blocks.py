"""Incident views: valid for Slack (our check and the fake Slack's), bounded however many incidents there
are, buttons that decode and follow the status, and nothing from the data parsed as a mention or link."""
from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from bot.payloads import ACTION_ACKNOWLEDGE, ACTION_RESOLVE, decode_incident
from bot.render.blocks import (check, home_view, incident_action_blocks, incident_detail_blocks, incident_list_blocks,
                               incident_note_blocks)
from bot.render.blocks import limits
from bot.store.incidents import FindingView, History, IncidentDetail, IncidentView, Recorded, TimelineView
from tests.fakes.block_kit_limits import problems, view_problems
from tests.render.helpers import alltext, buttons, texts

NOW = datetime(2026, 11, 20, 9, 30, tzinfo=timezone.utc)
HOSTILE = "<!channel> <@U123> <https://evil.example|click> & @here"
# The only "<…>" we send on purpose: mentions of real-looking user ids and date tokens.
OURS = re.compile(r"<@[UW][A-Z0-9]{2,}>|<!date\^\d+\^\{[a-z_]+\}(?: \{time\})?\|[0-9: UTC-]+>")


def incident(id=12, *, status="open", severity="critical", target_name="llama-3-8b-fsdp", resolution=None,
             code="karpenter.disruption", cluster="prod-use1", **changes) -> IncidentView:
    resolved = status == "resolved"
    view = IncidentView(
        id=id, fingerprint="f" * 32, cluster=cluster, namespace="ml", target_kind="pytorchjob",
        target_name=target_name, code=code, status=status, severity=severity, title="Karpenter disrupted the job",
        occurrences=3, opened_at=NOW - timedelta(days=2), updated_at=NOW - timedelta(minutes=id),
        resolved_at=NOW if resolved else None, slack_channel="C1", slack_ts="1.2",
        acknowledged_by="U01ALICE" if status != "open" else None, resolved_by="U02BOB" if resolved else None,
        resolution=resolution if resolution is not None else ("annotated do-not-disrupt" if resolved else None))
    return replace(view, **changes)


def recorded(view: IncidentView | None = None, *, created=False, seen=3, last: IncidentView | None = None,
             fix="annotated do-not-disrupt") -> Recorded:
    return Recorded(incident=view or incident(), created=created,
                    history=History(seen_this_week=seen, last_resolved=last, last_fix=fix if last else None))


def detail(view: IncidentView | None = None, *, findings=None, timeline=None) -> IncidentDetail:
    if findings is None:
        findings = [FindingView("karpenter.disruption", "critical", "high", "Karpenter consolidated the node",
                                [{"source": "event node/ip-10-0-1-2", "text": "Disrupting node: Underutilized"}])]
    if timeline is None:
        timeline = [TimelineView(NOW - timedelta(days=2), "diagnosis", "U01ALICE", "slash: pods evicted"),
                    TimelineView(NOW - timedelta(days=1), "remediation_proposed", "gpubot", "annotate-do-not-disrupt"),
                    TimelineView(NOW, "acknowledged", "U01ALICE", "")]
    return IncidentDetail(incident=view or incident(), timeline=timeline, findings=findings)


# --- helpers --------------------------------------------------------------------------------------

def assert_valid(blocks: list[dict], *, surface: str = "message") -> None:
    assert check(blocks, surface=surface) == []
    assert problems(blocks, surface=surface) == []
    for t in texts(blocks):
        if t["type"] == "mrkdwn":
            unquoted = "\n".join(line.removeprefix("> ") for line in t["text"].split("\n"))
            assert t.get("verbatim") is True and not re.search("[<>]", OURS.sub("", unquoted)), t
    for button in buttons(blocks):
        assert button["action_id"] in (ACTION_ACKNOWLEDGE, ACTION_RESOLVE)
        decode_incident(button["value"])


def timeline_text(blocks: list[dict]) -> str:
    start = next(i for i, b in enumerate(blocks) if b.get("text", {}).get("text", "").startswith("*Timeline*"))
    return "\n".join(b["text"]["text"] for b in blocks[start:] if b["type"] == "section")


def actions_of(blocks: list[dict]) -> list[str]:
    return [b["action_id"] for b in buttons(blocks)]


# --- the note under a diagnosis -------------------------------------------------------------------

def test_note_says_how_often_and_how_it_was_last_fixed():
    last = incident(7, status="resolved")
    blocks = incident_note_blocks(recorded(seen=3, last=last))
    assert_valid(blocks)
    line = blocks[0]["elements"][0]["text"]
    assert "Incident #12" in line and "· open ·" in line and "seen 3 times this week" in line
    assert "last resolved by <@U02BOB> on <!date^" in line and line.endswith(": annotated do-not-disrupt")
    assert actions_of(blocks) == [ACTION_ACKNOWLEDGE, ACTION_RESOLVE]
    assert {decode_incident(b["value"]) for b in buttons(blocks)} == {12}


def test_note_for_a_new_incident():
    blocks = incident_note_blocks(recorded(created=True, seen=1))
    assert_valid(blocks)
    line = blocks[0]["elements"][0]["text"]
    assert "new incident" in line and "seen" not in line and "last resolved" not in line


def test_note_buttons_follow_the_status():
    acknowledged = incident_note_blocks(recorded(incident(status="acknowledged")))
    resolved = incident_note_blocks(recorded(incident(status="resolved")))
    assert_valid(acknowledged)
    assert_valid(resolved)
    assert actions_of(acknowledged) == [ACTION_RESOLVE]
    assert buttons(resolved) == [] and [b["type"] for b in resolved] == ["context"]


def test_note_when_not_recorded():
    assert incident_note_blocks(None) == []
    blocks = incident_note_blocks(recorded(), failure="the incident database did not answer (<!channel>)")
    assert_valid(blocks)
    assert len(blocks) == 1 and buttons(blocks) == []
    assert blocks[0]["elements"][0]["text"].startswith(":warning: Not recorded as an incident: the incident database")


def test_note_escapes_the_last_fix_and_odd_actors_and_stays_small():
    last = incident(7, status="resolved", resolved_by="cli:<!here>")
    blocks = incident_note_blocks(recorded(last=last, fix=HOSTILE * 50))
    assert_valid(blocks)
    line = blocks[0]["elements"][0]["text"]
    assert "&lt;!channel&gt;" in line and "cli:&lt;!here&gt;" in line
    assert limits.text_size(blocks) < 1000


# --- /gpu incidents -------------------------------------------------------------------------------

def test_list_layout():
    views = [incident(1), incident(2, severity="warning", status="acknowledged")]
    blocks = incident_list_blocks(views, title="Open incidents")
    assert_valid(blocks)
    assert blocks[0] == {"type": "header", "text": {"type": "plain_text", "text": "Open incidents", "emoji": True}}
    first = blocks[1]["text"]["text"]
    assert first.startswith(":red_circle: *#1* `karpenter.disruption` on `pytorchjob/llama-3-8b-fsdp` · open · 3×")
    epoch = int(views[0].updated_at.timestamp())
    assert f"<!date^{epoch}^{{date_short_pretty}} {{time}}|2026-11-20 09:29 UTC>" in first
    assert "acknowledged" in blocks[2]["text"]["text"] and len(blocks) == 3


def test_empty_list_is_friendly():
    blocks = incident_list_blocks([], title="Open incidents")
    assert_valid(blocks)
    assert "No open incidents" in blocks[1]["text"]["text"]


def test_long_list_is_cut_with_a_count():
    blocks = incident_list_blocks([incident(i, target_name="x" * 300) for i in range(1, 201)], title="All")
    assert_valid(blocks)
    assert len(blocks) == 22 and blocks[-1]["elements"][0]["text"].startswith("and 180 more")


def test_list_escapes_targets():
    blocks = incident_list_blocks([incident(target_name=HOSTILE, cluster="<!everyone>")], title="Open")
    assert_valid(blocks)
    text = alltext(blocks)
    assert "&lt;!channel&gt; &lt;@U123&gt;" in text and "&lt;!everyone&gt;" in text


# --- /gpu incident <id> ---------------------------------------------------------------------------

def test_detail_layout():
    blocks = incident_detail_blocks(detail(incident(status="acknowledged")))
    assert_valid(blocks)
    assert blocks[0]["text"]["text"] == "#12 karpenter.disruption on pytorchjob/llama-3-8b-fsdp"
    fields = "\n".join(f["text"] for f in blocks[1]["fields"])
    for expected in ("*Cluster*\nprod-use1", "*Namespace*\nml", "*Status*\nacknowledged", "*Severity*\n:red_circle:",
                     "*Opened*\n<!date^", "*Acknowledged by*\n<@U01ALICE>", "*Resolved by*\nnot yet"):
        assert expected in fields
    text = alltext(blocks)
    assert "Karpenter consolidated the node · `karpenter.disruption`\n> Disrupting node: Underutilized" in text
    lines = timeline_text(blocks).split("\n")[1:]
    assert [line.split(" · ")[1] for line in lines] == ["*diagnosis*", "*remediation proposed*", "*acknowledged*"]
    assert lines[0].endswith("· <@U01ALICE> · slash: pods evicted") and "· gpubot ·" in lines[1]
    assert actions_of(blocks) == [ACTION_RESOLVE]


def test_detail_timeline_is_oldest_first_and_bounded():
    entries = [TimelineView(NOW - timedelta(hours=h), "diagnosis", "U01ALICE", HOSTILE * 10) for h in range(40)]
    blocks = incident_detail_blocks(detail(timeline=entries))
    assert_valid(blocks)
    timeline = timeline_text(blocks)
    assert timeline.startswith("*Timeline* (the last 15 of 40 entries)")
    stamps = [int(m) for m in re.findall(r"<!date\^(\d+)\^", timeline)]
    assert len(stamps) == 15 and stamps == sorted(stamps) and stamps[-1] == int(NOW.timestamp())


def test_only_slack_user_ids_become_mentions():
    timeline = [TimelineView(NOW, "acknowledged", actor, "") for actor in ("U1", "u01alice", "W0BOT", "cli:<@U01X>")]
    text = timeline_text(incident_detail_blocks(detail(timeline=timeline)))
    assert "· U1\n" in text and "· u01alice\n" in text and "· <@W0BOT>\n" in text
    assert text.endswith("· cli:&lt;@U01X&gt;")


def test_resolved_detail_has_no_buttons_and_escapes_the_resolution():
    view = incident(status="resolved", resolution=f"restarted after {HOSTILE}", target_name=HOSTILE)
    blocks = incident_detail_blocks(detail(view))
    assert_valid(blocks)
    assert buttons(blocks) == []
    fields = "\n".join(f["text"] for f in blocks[1]["fields"])
    assert "*Resolved by*\n<@U02BOB> on <!date^" in fields
    assert "restarted after &lt;!channel&gt; &lt;@U123&gt; &lt;https://evil.example|click&gt; &amp; @here" in fields


def test_worst_case_detail_fits_a_message():
    huge = "<@U01ALICE>" * 2000
    view = incident(target_name=huge, code=huge, cluster=huge, namespace=huge, title=huge, resolution=huge,
                    acknowledged_by=huge, status="acknowledged")
    findings = [FindingView(huge, "error", "high", huge, [{"source": huge, "text": huge}]) for _ in range(30)]
    timeline = [TimelineView(NOW, huge, huge, huge) for _ in range(200)]
    blocks = incident_detail_blocks(detail(view, findings=findings, timeline=timeline))
    assert_valid(blocks)
    assert limits.text_size(blocks) <= limits.TEXT_BUDGET


def test_findings_without_evidence():
    findings = [FindingView("a.b", "warning", "low", "No evidence", []),
                FindingView("c.d", "info", "low", "Odd evidence", [{"source": "x"}])]
    blocks = incident_detail_blocks(detail(findings=findings, timeline=[]))
    assert_valid(blocks)
    assert "*Timeline*" not in alltext(blocks)


# --- App Home -------------------------------------------------------------------------------------

def home_blocks(view: dict) -> list[dict]:
    assert view["type"] == "home" and view_problems(view) == []
    assert_valid(view["blocks"], surface="home")
    return view["blocks"]


def test_home_groups_open_incidents_by_severity():
    views = [incident(1, severity="critical"), incident(2, severity="warning"), incident(3, severity="critical")]
    blocks = home_blocks(home_view(open_incidents=views, counts={"training.cuda_oom": 2, "karpenter.disruption": 9}))
    text = alltext(blocks)
    assert "*3 open incidents*: 2 critical · 1 warning" in text
    assert text.index("*Critical* (2)") < text.index("*Warning* (1)") and "*Error*" not in text
    table = next(t["text"] for t in texts(blocks) if t["text"].startswith("*Last 7 days by finding code*"))
    assert table.index("9  karpenter.disruption") < table.index("2  training.cuda_oom")
    assert "/gpu help" in text


def test_home_with_200_incidents_and_60_codes_fits():
    severities = ["critical", "error", "warning", "info"]
    views = [incident(i, severity=severities[i % 4], target_name=HOSTILE * 20) for i in range(1, 201)]
    counts = {f"code.{i:02d}." + "x" * 80: i for i in range(60)}
    blocks = home_blocks(home_view(open_incidents=views, counts=counts))
    text = alltext(blocks)
    assert "*200 open incidents*" in text and text.count("and 45 more") == 4
    assert "and 40 more codes" in text and "code.59" in text and "code.00" not in text


def test_home_when_empty_and_when_the_database_is_down():
    empty = alltext(home_blocks(home_view(open_incidents=[], counts={})))
    assert "No open incidents" in empty and "No diagnoses" in empty
    down = alltext(home_blocks(home_view(open_incidents=[], counts={}, failure="could not connect <!channel>")))
    assert ":warning: The incident database is unavailable" in down and "&lt;!channel&gt;" in down
    assert "No open incidents" not in down


# --- confirmations --------------------------------------------------------------------------------

def test_action_confirmation_keeps_mentions_and_escapes_the_rest():
    blocks = incident_action_blocks("Incident #12 resolved by <@U01ALICE>: restarted <!channel> <@U999|x>")
    assert_valid(blocks)
    assert blocks[0]["elements"][0]["text"] == \
        "Incident #12 resolved by <@U01ALICE>: restarted &lt;!channel&gt; &lt;@U999|x&gt;"
    assert_valid(incident_action_blocks("x" * 5000))


def test_resolve_modal_is_a_valid_view():
    from bot.render.blocks import check_modal, resolve_modal
    from tests.fakes.block_kit_limits import view_problems

    view = resolve_modal(incident_id=12345, title="karpenter.disruption on pytorchjob/x: <!channel> " + "t" * 3000,
                         channel_id="C0TRAIN", thread_ts="1767225600.000100")
    assert check_modal(view) == [] and view_problems(view) == []
    assert "<!channel>" not in str(view)
