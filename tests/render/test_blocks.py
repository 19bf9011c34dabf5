"""Slack Block Kit rendering: every message valid for Slack (limits.check), every button value
decodable, untrusted text escaped, and real diagnoses from the simulated cluster rendered whole."""
from __future__ import annotations

import json

import pytest

from bot.payloads import (ACTION_APPROVAL, ACTION_EVIDENCE, ACTION_RERUN, TargetRef, decode_approval, decode_evidence,
                          decode_target)
from bot.render.blocks import (check, check_modal, diagnosis_blocks, diagnosis_text,
                               error_blocks, evidence_blocks, evidence_messages, explain_modal, help_blocks,
                               nodepools_blocks, nodes_blocks, progress_blocks)
from bot.render.blocks import limits
from bot.render.blocks.text import cut, escape, fenced_chunks, quote, split_mrkdwn
from bot.render.answer import answer
from sim.scenarios import list_scenarios
from playbooks.fleet import nodepools_report, nodes_report
from playbooks.model import Diagnosis, Evidence, Finding, Fix, Target
from playbooks.remediations import annotate_do_not_disrupt, nodepool_consolidation
from tests.render.helpers import alltext, buttons, texts

SCENARIOS = list_scenarios()
DECODERS = {ACTION_RERUN: decode_target, ACTION_EVIDENCE: decode_evidence, ACTION_APPROVAL: decode_approval}
HOSTILE = "NCCL WARN from <@U123ABC> <!channel> <!here> <https://evil.example|click me> & @here #general"


# --- helpers --------------------------------------------------------------------------------------

def assert_valid(blocks: list[dict], *, surface: str = "message") -> None:
    assert check(blocks, surface=surface) == []
    for t in texts(blocks):
        if t["type"] == "mrkdwn":
            # We never send links or mentions: every "<" from any source arrives escaped.
            unquoted = "\n".join(line.removeprefix("> ") for line in t["text"].split("\n"))
            assert t.get("verbatim") is True and "<" not in unquoted and ">" not in unquoted, t
    for b in blocks:
        if b["type"] == "section" and "text" in b:
            assert b["text"]["text"].count("```") % 2 == 0, "a section ends inside a code fence"
    for button in buttons(blocks):
        DECODERS[button["action_id"]](button["value"])


def finding(code="training.cuda_oom", severity="error", *, evidence=None, fix=None, remediations=None, title=None,
            detail="The process ran out of GPU memory.") -> Finding:
    if evidence is None:
        evidence = [Evidence(source="log pod/ml/x", text="CUDA out of memory")]
    return Finding(code=code, severity=severity, confidence="high", title=title or f"{code} happened", detail=detail,
                   evidence=evidence, fix=fix, remediations=remediations or [])


def diagnosis(*findings: Finding, gaps=None, kind="pytorchjob") -> Diagnosis:
    return Diagnosis(target=Target(kind=kind, name="llama-3-8b-fsdp", namespace="ml"), summary="Something broke",
                     findings=list(findings), gaps=gaps or [], cluster="prod-use1")


# --- diagnosis message ----------------------------------------------------------------------------

def test_small_diagnosis_layout_and_buttons():
    rems = [annotate_do_not_disrupt(kind="pytorchjob", namespace="ml", name="llama-3-8b-fsdp"),
            nodepool_consolidation(nodepool="gpu-training")]
    d = diagnosis(finding("karpenter.disruption", "critical", remediations=rems,
                          fix=Fix(summary="Protect the job", snippet="metadata:\n  annotations: {}\n",
                                  language="yaml")),
                  finding("image.slow_pull", "warning"),
                  finding("gpu.benign", "info", title="GPUs listed"),
                  gaps=["EC2 facts were not checked: no AWS credentials found."])
    blocks = diagnosis_blocks(d)
    assert_valid(blocks)
    assert blocks[0]["type"] == "header"
    assert blocks[0]["text"]["text"] == ":red_circle: PyTorchJob llama-3-8b-fsdp stopped: karpenter.disruption happened"
    codes = [b for b in blocks if b["type"] == "context" and "`karpenter.disruption`" in b["elements"][0]["text"]]
    assert codes and "cluster `prod-use1`" in codes[0]["elements"][0]["text"]
    everything = alltext(blocks)
    assert "*What to do:* Protect the job\n```\nmetadata:\n  annotations: {}\n```" in everything
    # Warnings and info: one list of titles behind Show evidence, no section, evidence or fix of their own.
    [noted] = [b for b in blocks if b["type"] == "section" and "Also noted" in b["text"]["text"]]
    assert ":large_yellow_circle: image.slow_pull happened" in noted["text"]["text"]
    assert ":white_circle: GPUs listed" in noted["text"]["text"]
    assert decode_evidence(noted["accessory"]["value"]).finding == 1
    assert everything.count("CUDA out of memory") == 1  # only the cause's quote
    assert any(b["type"] == "context" and "Not checked" in json.dumps(b) for b in blocks)

    by_action = {}
    for button in buttons(blocks):
        by_action.setdefault(button["action_id"], []).append(button)
    assert decode_target(by_action[ACTION_RERUN][0]["value"]) == TargetRef.of(d)
    refs = [decode_evidence(b["value"]) for b in by_action[ACTION_EVIDENCE]]
    assert [(r.finding, r.code) for r in refs] == [(0, "karpenter.disruption"), (1, "image.slow_pull")]
    approvals = [decode_approval(b["value"]) for b in by_action[ACTION_APPROVAL]]
    assert [a.remediation for a in approvals] == rems
    assert all(a.code == "karpenter.disruption" and a.target == TargetRef.of(d) for a in approvals)
    assert [b["text"]["text"] for b in by_action[ACTION_APPROVAL]] == [
        "Protect from disruption", "Let consolidation wait"]
    styled = [b for b in buttons(blocks) if b.get("style")]
    assert [b["style"] for b in styled] == ["primary"]


def test_user_text_cannot_mention_or_link():
    d = diagnosis(finding(title=f"title {HOSTILE}", detail=f"detail {HOSTILE}",
                          evidence=[Evidence(source=f"log {HOSTILE}", text=f"line 1\n{HOSTILE}\n```\nend")],
                          fix=Fix(summary=HOSTILE, snippet=f"echo '{HOSTILE}'\n```", language="shell")),
                  gaps=[HOSTILE])
    d.summary = HOSTILE
    rendered = [diagnosis_blocks(d), *evidence_messages(d, 0), progress_blocks(HOSTILE, HOSTILE), error_blocks(HOSTILE)]
    for blocks in rendered:
        assert_valid(blocks)
        for t in texts(blocks):
            if t["type"] == "mrkdwn":
                assert "<@" not in t["text"] and "<!" not in t["text"] and "<http" not in t["text"], t["text"]
    everything = json.dumps(rendered)
    assert "&lt;@U123ABC&gt;" in everything and "&lt;!channel&gt;" in everything and "&amp; @here" in everything
    fallback = diagnosis_text(d)
    assert "<@" not in fallback and "<!" not in fallback and len(fallback) <= limits.FALLBACK_TEXT


def test_huge_diagnosis_still_fits_and_says_what_is_left_out():
    snippet = "\n".join(f"  - key: example.com/label-{i}\n    operator: In\n    values: ['{'x' * 40}']"
                        for i in range(200))
    assert len(snippet) > 20000
    evidence = [Evidence(source=f"log pod/ml/worker-{j} container pytorch " + "s" * 400,
                         text="\n".join(f"[rank{j}] NCCL WARN <@U{j}> line {k} " + "y" * 150 for k in range(40)))
                for j in range(10)]
    findings = [finding(f"nccl.peer_unresponsive_{i}", ("critical", "error", "warning")[i % 3], evidence=evidence,
                        title="T" * 500, detail="D " * 3000,
                        fix=Fix(summary="S" * 800, snippet=snippet, language="yaml"),
                        remediations=[annotate_do_not_disrupt(kind="pytorchjob", namespace="ml", name=f"job-{i}")])
                for i in range(40)]
    d = diagnosis(*findings, gaps=[f"gap {i} " + "g" * 500 for i in range(30)])
    blocks = diagnosis_blocks(d)
    assert_valid(blocks)
    assert len(blocks) <= limits.MAX_BLOCKS["message"]
    assert limits.text_size(blocks) <= limits.TEXT_BUDGET
    codes = [b for b in blocks if b["type"] == "context" and b["elements"][0]["text"].startswith("`")]
    assert codes[0]["elements"][0]["text"].startswith("`nccl.peer_unresponsive_0`")
    closing = [b for b in blocks if b["type"] == "context" and "more possible causes" in b["elements"][0]["text"]]
    assert len(closing) == 1
    assert "--json" in closing[0]["elements"][0]["text"] and "Show evidence" in closing[0]["elements"][0]["text"]
    causes = [f for f in findings if f.severity != "warning"]
    shown = [b for b in blocks if b["type"] == "section" and b["text"]["text"].startswith(":")]
    assert closing[0]["elements"][0]["text"].startswith(f"{len(causes) - 1 - len(shown)} more possible causes")
    assert any(b["text"]["text"] == "Re-run" for b in buttons(blocks))

    for max_findings in (0, 1, 40):
        assert_valid(diagnosis_blocks(d, max_findings=max_findings, evidence_per_finding=10))

    messages = evidence_messages(d, 0)
    assert 1 < len(messages) <= 5
    for message in messages:
        assert_valid(message)
    assert "The rest is not shown here" in json.dumps(messages[-1])
    nxt = decode_evidence(buttons(messages[-1])[-1]["value"])
    assert (nxt.finding, nxt.code) == (1, "nccl.peer_unresponsive_1")
    assert evidence_blocks(d, 0) == messages[0]


def test_more_findings_than_max_are_counted():
    d = diagnosis(*[finding(f"code.n{i}") for i in range(8)])
    blocks = diagnosis_blocks(d, max_findings=3)
    assert_valid(blocks)
    text = json.dumps(blocks)
    assert "5 more possible causes not shown here" in text and "`code.n3`" in text
    more = [b for b in buttons(blocks) if b["text"]["text"] == "Show evidence"]
    assert decode_evidence(more[-1]["value"]).finding == 3


def test_evidence_thread_quotes_everything_verbatim():
    items = [Evidence(source=f"event pod/ml/x FailedScheduling #{i}", text=f"0/3 nodes are available: reason {i}")
             for i in range(6)]
    d = diagnosis(finding(evidence=items, fix=Fix(summary="s", snippet="a: 1", language="yaml")), finding("second.one"))
    messages = evidence_messages(d, 0)
    assert len(messages) == 1
    text = alltext(messages[0])
    for item in items:
        assert f"> {item.text}" in text and item.source in text
    with pytest.raises(IndexError):
        evidence_messages(d, 5)


def test_pasted_text_diagnosis_has_no_buttons():
    d = Diagnosis(target=Target(kind="text", name="pasted text"), summary="CUDA OOM",
                  findings=[finding(), finding("b.c")])
    blocks = diagnosis_blocks(d, max_findings=1)
    assert_valid(blocks)
    assert buttons(blocks) == []
    assert "gpubot explain FILE --json" in json.dumps(blocks)
    for message in evidence_messages(d, 0):
        assert_valid(message)
        assert buttons(message) == []


def test_no_findings():
    d = diagnosis(gaps=["Karpenter logs absent on Auto Mode"])
    d.summary = "No known problem found: 4 pods Running."
    blocks = diagnosis_blocks(d)
    assert_valid(blocks)
    assert blocks[0]["text"]["text"] == ":large_green_circle: PyTorchJob llama-3-8b-fsdp: no known problem found"
    assert diagnosis_text(d) == ("PyTorchJob llama-3-8b-fsdp: no known problem found. "
                                 "(in namespace ml on cluster prod-use1)")


# --- real diagnoses from the simulated cluster ----------------------------------------------------

@pytest.fixture
def service(sim_env):
    from bot.service import DiagnosisService
    from bot.settings import load_settings

    svc = DiagnosisService(load_settings({"KUBECONFIG": str(sim_env.kubeconfig), "AWS_ACCESS_KEY_ID": "testing",
                                          "AWS_SECRET_ACCESS_KEY": "testing"}))
    yield svc
    svc.close()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_seed_scenario_renders(scenario, service):
    d = service.diagnose(scenario.target, namespace=scenario.namespace)
    blocks = diagnosis_blocks(d)
    assert_valid(blocks)
    lead = answer(d).lead
    codes = [b for b in blocks if b["type"] == "context" and b["elements"][0]["text"].startswith("`")]
    if lead is not None:
        assert f"`{d.findings[lead].code}`" in codes[0]["elements"][0]["text"]
    assert "left out" not in json.dumps(blocks) and "more possible cause" not in json.dumps(blocks), "fits whole"
    assert len(diagnosis_text(d)) <= limits.FALLBACK_TEXT
    for index in range(len(d.findings)):
        for message in evidence_messages(d, index):
            assert_valid(message)


# --- fleet ----------------------------------------------------------------------------------------

def node(i: int, *, gpus=8, allocatable=8, ready=True, pool="gpu-training") -> dict:
    return {"metadata": {"name": f"ip-10-0-{i // 250}-{i % 250}.ap-northeast-2.compute.internal",
                         "labels": {"karpenter.sh/nodepool": pool, "node.kubernetes.io/instance-type": "p4d.24xlarge",
                                    "topology.kubernetes.io/zone": "ap-northeast-2b"}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
            "status": {"capacity": {"nvidia.com/gpu": str(gpus)}, "allocatable": {"nvidia.com/gpu": str(allocatable)},
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                       "reason": "KubeletReady" if ready else "KubeletNotReady"}]}}


def test_nodes_report_of_500_nodes():
    nodes = [node(i, allocatable=6 if i % 50 == 0 else 8, ready=i % 97 != 5, pool=f"pool-{i % 30}")
             for i in range(500)]
    report = nodes_report(nodes, cluster="prod-use1", more=120)
    blocks = nodes_blocks(report)
    assert_valid(blocks)
    text = alltext(blocks)
    assert "500 (+120 not listed)" in text and "3980 / 4000" in text
    assert "20 on 10 nodes" in text and ":red_circle: 6 nodes" in text  # unhealthy GPUs; NotReady
    table = blocks[2]["text"]["text"].split("\n")
    assert table[2].startswith("NODE") and "NotReady" in table[3]  # worst first
    assert "and 480 more nodes" in text and "more NodePools" in text


def test_nodes_report_small_and_empty():
    assert_valid(nodes_blocks(nodes_report([node(1), node(2, allocatable=7)], cluster="c")))
    assert "No GPU nodes" in json.dumps(nodes_blocks(nodes_report([], cluster="c")))


def nodepool(i: int, *, used=8, limit=64, policy="WhenEmptyOrUnderutilized") -> dict:
    return {"metadata": {"name": f"gpu-{i}"},
            "spec": {"limits": {"nvidia.com/gpu": str(limit)},
                     "disruption": {"consolidationPolicy": policy, "consolidateAfter": "30s",
                                    "budgets": [{"nodes": "10%"}, {"nodes": "0", "schedule": "0 9 * * mon-fri",
                                                                   "duration": "8h", "reasons": ["Underutilized"]}]},
                     "template": {"spec": {"requirements": [
                         {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p4d"]}]}}},
            "status": {"resources": {"nvidia.com/gpu": str(used)},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def test_nodepools_report():
    pools = [nodepool(i, used=64 if i == 7 else 8, policy="WhenEmpty" if i % 2 else "WhenEmptyOrUnderutilized")
             for i in range(40)]
    blocks = nodepools_blocks(nodepools_report(pools, cluster="prod-use1"))
    assert_valid(blocks)
    text = alltext(blocks)
    assert "40 GPU NodePools: 1 at the GPU limit, 20 consolidate" in text
    assert "gpu-7" in blocks[2]["text"]["text"] and "64 / 64 (100%)" in alltext([blocks[2]])
    assert "schedule='0 9 * * mon-fri' for 8h" in text and "and 28 more NodePools" in text
    assert "No GPU NodePools" in json.dumps(nodepools_blocks(nodepools_report([], cluster="c")))


# --- small messages, help, modal ------------------------------------------------------------------

def test_progress_and_error():
    blocks = progress_blocks("pytorchjob/pytorch-dist-job", "reading pods and events", elapsed=3.4)
    assert_valid(blocks)
    assert blocks[0]["elements"][0]["text"] == (
        ":hourglass_flowing_sand: Diagnosing `pytorchjob/pytorch-dist-job` … (reading pods and events) · 3 s")
    blocks = error_blocks("cannot reach cluster prod (timeout after 10 s)")
    assert_valid(blocks)
    assert blocks[0]["text"]["text"] == ":warning: cannot reach cluster prod (timeout after 10 s)"
    assert_valid(error_blocks("x" * 10000))
    assert_valid(progress_blocks("y" * 10000, "z" * 10000))


def test_help():
    blocks = help_blocks()
    assert_valid(blocks)
    text = alltext(blocks)
    assert "<" not in text
    for word in ("why-pending &lt;job&gt;", "diagnose &lt;target&gt;", "explain [text]", "nodes", "nodepools", "help",
                 "-n NS", "--cluster NAME", "@gpubot", "thread"):
        assert word in text


def test_help_with_a_lead_line():
    blocks = help_blocks(prefix="Which job should I look at? Pending in ml: <job-a>, pod/x")
    assert_valid(blocks)
    assert blocks[0]["text"]["text"] == "Which job should I look at? Pending in ml: &lt;job-a&gt;, pod/x"
    assert blocks[1]["type"] == "header"


def _proposal(state: str, **extra):
    from datetime import datetime, timezone

    from bot.store.proposals import ProposalView

    fields = dict(id=7, kind="nodepool-consolidation", target="nodepool/gpu-training", cluster="prod", namespace="ml",
                  params={}, reason="karpenter.disruption on pytorchjob/j", finding_code="karpenter.disruption",
                  requested_by="U0ML", requested_at=datetime(2026, 11, 23, 12, tzinfo=timezone.utc),
                  expires_at=datetime(2026, 11, 23, 12, 30, tzinfo=timezone.utc), state=state, approvals=(),
                  decided_by=None, applied_at=None, undone_by=None, undone_at=None,
                  plan={"summary": "set consolidationPolicy WhenEmpty", "preview": "--- a\n+++ b\n" + "-x\n+y\n" * 3},
                  results=[], undo=[], incident_id=None, messages=(), version=1)
    fields.update(extra)
    return ProposalView(**fields)


@pytest.mark.parametrize("state, buttons", [
    ("pending", ["Approve", "Reject"]), ("failed", ["Approve", "Reject"]), ("applied", ["Undo"]),
    ("rejected", []), ("expired", []), ("undone", []),
])
def test_proposal_message_offers_what_its_state_allows(state, buttons):
    from bot.render.blocks.proposal import proposal_blocks

    undo = [{"ref": {}, "patchType": "application/json-patch+json", "patch": []}] if state == "applied" else []
    blocks = proposal_blocks(_proposal(state, undo=undo, approvals=("U0ONCALL",) if state == "applied" else ()))
    assert check(blocks) == []  # mentions (<@U...>) are meant here: people are named
    labels = [e["text"]["text"] for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert labels == buttons
    text = alltext(blocks)
    assert "*Change #7: Let consolidation wait* on `nodepool/gpu-training`" in text and "<@U0ML>" in text
    assert "`nodepool-consolidation`" in json.dumps([b for b in blocks if b["type"] == "context"])
    assert "```" in text  # the diff


def test_a_huge_diff_and_many_results_stay_within_slack_limits():
    from bot.render.blocks.proposal import proposal_blocks

    results = [{"object": f"Pod ml/p-{i}", "result": "applied", "reason": "r" * 400} for i in range(300)]
    blocks = proposal_blocks(_proposal("failed", plan={"summary": "s", "preview": "+line\n" * 20000}, results=results))
    assert check(blocks) == []
    [listing] = [b["text"]["text"] for b in blocks if b["type"] == "section" and "Pod ml/p-0" in b["text"]["text"]]
    shown = listing.count("• ")
    assert 0 < shown <= 10 and listing.endswith(f"and {300 - shown} more")


def test_explain_modal():
    view = explain_modal(channel_id="C0123")
    assert check_modal(view) == []
    assert view["callback_id"] == "gpubot.explain"
    assert json.loads(view["private_metadata"]) == {"channel": "C0123"}
    block = next(b for b in view["blocks"] if b["type"] == "input")
    assert block["block_id"] == "log"
    assert block["element"] == {**block["element"], "type": "plain_text_input", "action_id": "text",
                                "multiline": True, "max_length": 3000}


# --- the validator and the text helpers -----------------------------------------------------------

def test_check_catches_what_slack_rejects():
    section = {"type": "section", "text": {"type": "mrkdwn", "text": "x"}}
    button = {"type": "button", "text": {"type": "plain_text", "text": "b"}, "action_id": "a", "value": "v"}
    assert check([section] * 50) == []
    assert "51 blocks" in check([section] * 51)[0]
    assert check([section] * 51, surface="modal") == []
    cases = [
        ({"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}, "over 3000"),
        ({"type": "section", "text": {"type": "mrkdwn", "text": ""}}, "non-empty"),
        ({"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}, "over 150"),
        ({"type": "header", "text": {"type": "mrkdwn", "text": "h"}}, "plain_text"),
        ({"type": "context", "elements": [{"type": "mrkdwn", "text": "c"}] * 11}, "1-10 elements"),
        ({"type": "context", "elements": [{"type": "mrkdwn", "text": "c" * 2001}]}, "over 2000"),
        ({"type": "actions", "elements": [button, button]}, "duplicate action_id"),
        ({"type": "actions", "elements": [{**button, "value": "v" * 2001}]}, "2000"),
        ({"type": "actions", "elements": [{**button, "action_id": "a" * 256}]}, "action_id"),
        ({"type": "actions", "elements": [{**button, "text": {"type": "plain_text", "text": "t" * 76}}]}, "over 75"),
        ({"type": "actions", "elements": [{**button, "style": "green"}]}, "style"),
        ({"type": "image", "image_url": "x"}, "not used"),
        ({"type": "section", "text": {"type": "mrkdwn", "text": "x"}, "colour": 1}, "unexpected key"),
        ({"type": "input", "label": {"type": "plain_text", "text": "l"},
          "element": {"type": "plain_text_input", "action_id": "t"}}, "not used on a message"),
    ]
    for block, expected in cases:
        problems = check([block])
        assert problems and expected in problems[0], (block, problems)
    many = [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3000}}] * 5
    assert "over 12000" in check(many)[-1]
    assert "duplicate block_id" in check([{**section, "block_id": "b"}, {**section, "block_id": "b"}])[0]
    long_title = {**explain_modal(channel_id="C1"), "title": {"type": "plain_text", "text": "t" * 25}}
    assert "title" in check_modal(long_title)[0]


def test_fenced_chunks_split_between_lines_within_the_limit():
    code = "\n".join(f"line {i} <&> " + "z" * (i % 300) for i in range(500)) + "\n" + "w" * 7000
    chunks = fenced_chunks(code, limit=1000)
    assert all(len(c) <= 1000 and c.startswith("```\n") and c.endswith("\n```") for c in chunks)
    joined = "".join(c[4:-4] for c in chunks)
    assert joined.replace("\n", "") == escape(code).replace("\n", "")
    assert not any("&am\n" in c or c.endswith("&\n```") for c in chunks)


def test_split_mrkdwn_reopens_fences():
    text = "intro\n```\n" + "\n".join(f"code {i}" for i in range(400)) + "\n```\noutro " + "o" * 5000
    pieces = split_mrkdwn(text, limit=500)
    assert all(len(p) <= 500 for p in pieces)
    assert all(p.count("```") % 2 == 0 for p in pieces)
    assert pieces[0].startswith("intro") and pieces[-1].endswith("o")


def test_cut_and_quote():
    assert cut("short", 10) == "short"
    assert len(cut("word " * 100, 50)) <= 50 and cut("word " * 100, 50).endswith("…")
    assert cut(escape("a" * 8 + "<<<"), 12) == "aaaaaaaa…"  # no half "&lt;" left behind
    q = quote("\n".join(f"l{i}" for i in range(30)), limit=100, max_lines=5)
    assert q.split("\n") == ["> l0", "> l1", "> l2", "> l3", "> l4…"]
    assert len(quote("x" * 5000, limit=300)) <= 300


def test_random_diagnoses_always_render_valid_messages():
    import random

    rng = random.Random(7)
    alphabet = ["a", "Z", " ", "\n", "&", "<", ">", "`", "```", "*", "_", "é", "🔥", "<@U1>", "&amp;", "x" * 80]

    def junk(n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, n)))

    for _ in range(60):
        findings = [Finding(code=f"c.{i}", severity=rng.choice(("critical", "error", "warning", "info")),
                            confidence="low", title=junk(80) or "t", detail=junk(400),
                            evidence=[Evidence(source=junk(30), text=junk(600)) for _ in range(rng.randint(0, 6))],
                            fix=Fix(summary=junk(40), snippet=junk(3000), language="yaml") if rng.random() < .7
                            else None)
                    for i in range(rng.randint(0, 12))]
        d = Diagnosis(target=Target(kind=rng.choice(("pod", "text")), name="p", namespace="ns"), summary=junk(300),
                      findings=findings, gaps=[junk(300) for _ in range(rng.randint(0, 12))], cluster="c")
        assert_valid(diagnosis_blocks(d, max_findings=rng.randint(0, 8), evidence_per_finding=rng.randint(0, 4)))
        assert len(diagnosis_text(d)) <= limits.FALLBACK_TEXT
        for index in range(len(findings)):
            for message in evidence_messages(d, index):
                assert_valid(message)


def test_many_info_findings_collapse_into_one_line():
    d = diagnosis(finding("a.real"), *[finding(f"info.n{i}", "info", title="I" * 150) for i in range(30)])
    blocks = diagnosis_blocks(d)
    assert_valid(blocks)
    info = [b for b in blocks if b["type"] == "section" and "Also noted" in b["text"]["text"]]
    assert len(info) == 1 and len(info[0]["text"]["text"]) <= 1600
    assert info[0]["text"]["text"].endswith("more")
