"""Alert messages (bot.render.blocks.alert, the alerts' own renderer) held to the same rules as every other
message (docs/messages.md, tests/render/rules.py): a storm of 20 pods on one NodePool limit, a lone
problem, a resolved group, a group this channel may not read, and a digest.

These checks judge another module's output: a failure here names the rule its message breaks."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from bot.render.blocks.alert import alert_blocks, alert_text, digest_blocks, digest_text
from bot.render.blocks.alert_masking import Closed
from bot.store.alerts import AlertView, GroupView
from tests.render.rules import rule_problems

NOW = datetime(2026, 11, 23, 3, 0, tzinfo=timezone.utc)
LIMIT_LINE = ('Failed to schedule pod, all available instance types exceed limits for nodepool: "gpu-training-32"')


def member(i: int, *, job: str, code="karpenter.nodepool_limit_reached", severity="error", pods=1) -> AlertView:
    return AlertView(
        id=i, group_id=1, fingerprint=f"sha256:{i:064x}", group_key="limit:gpu-training-32", source="sweep",
        code=code, severity=severity, cluster="prod", namespace="llm", target_kind="pytorchjob", target_name=job,
        nodepool="gpu-training-32", title="NodePool gpu-training-32 is at its nvidia.com/gpu limit (32/32)",
        evidence=((f"event pod/llm/{job}-worker-0 FailedScheduling", LIMIT_LINE),), count=pods,
        first_seen=NOW - timedelta(minutes=20), last_seen=NOW, status="firing", resolved_reason=None,
        resolved_at=None, incident_id=None, incident_state="open", pods=pods)


def group(*, members, status="firing", cause=("limit", "gpu-training-32"), count=None, **extra) -> GroupView:
    first = members[0]
    fields = dict(
        id=1, group_key=first.group_key, source="sweep", cluster="prod", namespace="llm", code=first.code,
        severity=first.severity, title=first.title, count=count if count is not None else sum(m.count for m in members),
        status=status, resolved_reason="the pods were scheduled" if status == "resolved" else None,
        first_seen=first.first_seen, last_seen=NOW, resolved_at=NOW if status == "resolved" else None,
        channel="C1", ts="1.0", in_digest=False, shown=None, acknowledged_by=None, acknowledged_at=None,
        snoozed_by=None, snoozed_until=None, snoozed_until_resolved=False, cause_kind=cause[0] if cause else None,
        cause_name=cause[1] if cause else None, members=tuple(members))
    fields.update(extra)
    return GroupView(**fields)


STORM = group(members=[member(i, job=f"llama-70b-{i % 4}", pods=5) for i in range(4)], count=20,
              cause_usage={"resource_type": "nvidia.com/gpu", "used": "32", "limit": "32"})
LONE = group(members=[member(1, job="bert-large", code="gpu.xid_error", severity="critical")], cause=None)
RESOLVED = group(members=STORM.members, status="resolved", count=20)
LLM_CLOSED = Closed(frozenset({("prod", "llm")}))  # a channel whose grant opens nodes and NodePools, no namespace


@pytest.mark.parametrize("name, rendered", [
    ("storm of 20 pods on one NodePool limit", lambda: (alert_text(STORM), alert_blocks(STORM, now=NOW))),
    ("a lone problem", lambda: (alert_text(LONE), alert_blocks(LONE, now=NOW))),
    ("resolved", lambda: (alert_text(RESOLVED), alert_blocks(RESOLVED, now=NOW))),
    ("held back from this channel", lambda: (alert_text(STORM, masked=True), alert_blocks(STORM, now=NOW, masked=True))),
    ("pods held back, the NodePool shown", lambda: (alert_text(STORM, closed=LLM_CLOSED),
                                                    alert_blocks(STORM, now=NOW, closed=LLM_CLOSED))),
    ("digest", lambda: (digest_text([STORM, LONE, RESOLVED]), digest_blocks([STORM, LONE, RESOLVED], now=NOW))),
])
def test_alert_messages_follow_the_message_rules(name, rendered):
    text, blocks = rendered()
    assert rule_problems({"text": text, "blocks": blocks}) == []


def test_the_storm_says_what_is_used_up_and_the_codes_are_context():
    assert alert_text(STORM) == "[error] NodePool gpu-training-32 has used all 32 of its GPUs: 20 pods of 4 jobs wait on it"
    masked = alert_blocks(STORM, now=NOW, masked=True)
    assert masked[0]["text"]["text"].endswith("*A NodePool at its limits: 4 pytorchjobs in a namespace this channel cannot read*")
    assert any(b["type"] == "context" and "`karpenter.nodepool_limit_reached`" in b["elements"][0]["text"] for b in masked)
    digest = digest_blocks([STORM, LONE, RESOLVED], now=NOW)
    [codes] = [b for b in digest if b["type"] == "context" and b["elements"][0]["text"].startswith("By code")]
    assert "`gpu.xid_error` critical: 1" in codes["elements"][0]["text"]


def test_a_channel_that_reads_the_nodepool_but_not_the_pods_sees_the_nodepool_and_counts():
    text, blocks = alert_text(STORM, closed=LLM_CLOSED), alert_blocks(STORM, now=NOW, closed=LLM_CLOSED)
    assert text == ("[error] NodePool gpu-training-32 has used all 32 of its GPUs: "
                    "20 pods of 1 namespace this channel cannot read")
    said = str(blocks)
    assert "`nodepool/gpu-training-32`" in said and "20 pods held back" in said
    assert "llama-70b" not in said and "/llm" not in said and "prod / llm" not in said
