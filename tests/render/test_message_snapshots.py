"""Every kind of message gpubot sends, rendered and compared with its golden file under
tests/render/snapshots/ (``UPDATE_SNAPSHOTS=1`` rewrites them), and each held to the rules of
docs/messages.md (tests/render/rules.py).

Diagnoses are real: the seed scenarios served by the simulated cluster, read by the real engine over
HTTP. A golden file shows a reviewer what changed in a message; the rules say whether it is still right.
"""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from bot.render import terminal
from bot.render.answer import answer, headline
from bot.render.blocks import (diagnosis_blocks, diagnosis_text, error_blocks, evidence_messages, help_blocks,
                               progress_blocks, queued_blocks)
from bot.render.blocks.proposal import proposal_blocks, proposal_text
from bot.render.wording import REMEDIATION_LABELS
from playbooks.model import Diagnosis, Target
from playbooks.remediations.registry import DEFINITIONS
from tests.render.helpers import alltext, buttons
from tests.render.rules import rule_problems

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("UPDATE_SNAPSHOTS") == "1"
# (name, target, namespace): one cause; a cause with its consequences (a rank's view and the job's);
# two errors of one failure.
REAL = (
    ("diagnosis_one_cause", "pod/bert-finetune-5", "ml-training"),
    ("diagnosis_cause_and_consequences", "pod/llama-3-8b-node-0-0", "llm-train"),
    ("diagnosis_job_cause_and_consequences", "pytorchjob/llama-3-8b-fsdp", "llm-consolidation"),
    ("diagnosis_two_errors", "pod/tokenize-worker-0", "crash-loop"),
)


def snapshot(name: str, rendered: dict | str) -> None:
    """Compare with (or, with UPDATE_SNAPSHOTS=1, write) tests/render/snapshots/<name>.json|.txt."""
    text = rendered if isinstance(rendered, str) else json.dumps(rendered, indent=1, ensure_ascii=False) + "\n"
    path = SNAPSHOTS / f"{name}.{'txt' if isinstance(rendered, str) else 'json'}"
    if UPDATE or not path.exists():
        if not UPDATE:
            pytest.fail(f"no golden file {path.name}: run with UPDATE_SNAPSHOTS=1 and review it")
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{path.name} changed: review the diff, then UPDATE_SNAPSHOTS=1"


@pytest.fixture(scope="module")
def diagnoses(seed_sim):
    from bot.service import DiagnosisService
    from bot.settings import load_settings

    svc = DiagnosisService(load_settings({"KUBECONFIG": str(seed_sim.kubeconfig), "AWS_ACCESS_KEY_ID": "testing",
                                          "AWS_SECRET_ACCESS_KEY": "testing"}))
    try:
        yield {name: svc.diagnose(target, namespace=ns) for name, target, ns in REAL}
    finally:
        svc.close()


def message(d: Diagnosis) -> dict:
    return {"text": diagnosis_text(d), "blocks": diagnosis_blocks(d)}


@pytest.mark.parametrize("name", [r[0] for r in REAL])
def test_real_diagnosis(name, diagnoses):
    d = diagnoses[name]
    rendered = message(d)
    assert rule_problems(rendered, diagnosis=d) == []
    snapshot(name, rendered)


def test_the_cause_leads_and_its_consequences_fold_under_it(diagnoses):
    d = diagnoses["diagnosis_cause_and_consequences"]
    a = answer(d)
    assert d.findings[a.lead].code == "karpenter.disruption"
    assert {d.findings[i].code for i in a.consequences} == {"nccl.peer_unresponsive", "training.terminated"}
    blocks = diagnosis_blocks(d)
    assert blocks[0]["text"]["text"] == ":large_orange_circle: Pod llama-3-8b-node-0-0 stopped"
    [followed] = [b for b in blocks if b["type"] == "section" and b["text"]["text"].startswith("*What followed")]
    assert "NCCL peer stopped answering" in followed["text"]["text"]
    # the slow image pull of the job's pods is noted, not quoted: no snippet, no evidence in this message
    [noted] = [b for b in blocks if b["type"] == "section" and b["text"]["text"].startswith("*Also noted")]
    assert "Image pull took" in noted["text"]["text"] and "Successfully pulled image" not in alltext(blocks)
    assert [b["text"]["text"] for b in buttons(blocks)] == [
        "Protect from disruption", "Show evidence", "Let consolidation wait", "Re-run", "Show evidence"]
    assert diagnosis_text(d).startswith(headline(d) + ". What to do: Protect Job llm-train/llama-3-8b")


def test_cli_terminal_output(diagnoses):
    d = diagnoses["diagnosis_cause_and_consequences"]
    out = terminal.render(d)
    first, second = out.split("\n")[:2]
    assert first.startswith(headline(d)) and second.startswith("What to do: ")
    assert out.count(d.findings[answer(d).lead].title) == 1  # said once, in the first line
    assert out.index("karpenter.disruption") < out.index("nccl.peer_unresponsive")
    snapshot("cli_cause_and_consequences", out)


def test_thread_follow_ups(diagnoses):
    d = diagnoses["diagnosis_cause_and_consequences"]
    a = answer(d)
    for label, index in (("thread_evidence_of_the_cause", a.lead), ("thread_evidence_of_a_noted_finding",
                                                                    a.secondary[0])):
        messages = evidence_messages(d, index)
        for blocks in messages:
            assert rule_problems({"blocks": blocks}) == []
        snapshot(label, {"messages": messages})


def test_healthy_diagnosis():
    d = Diagnosis(target=Target(kind="pytorchjob", name="t5-small", namespace="nlp"),
                  summary="No known problem found: 4 pods Running.", cluster="prod-use1")
    rendered = message(d)
    assert rule_problems(rendered, diagnosis=d) == []
    assert rendered["blocks"][0]["text"]["text"] == ":large_green_circle: PyTorchJob t5-small: no known problem found"
    snapshot("diagnosis_healthy", rendered)


def _proposal(state: str, **extra):
    from bot.store.proposals import ProposalView

    fields = dict(id=7, kind="nodepool-consolidation", target="nodepool/gpu-training", cluster="prod", namespace="ml",
                  params={}, reason="karpenter.disruption on pytorchjob/ml/llama", finding_code="karpenter.disruption",
                  requested_by="U0ML", requested_at=datetime(2026, 11, 23, 12, tzinfo=timezone.utc),
                  expires_at=datetime(2026, 11, 23, 12, 30, tzinfo=timezone.utc), state=state, approvals=(),
                  decided_by=None, applied_at=None, undone_by=None, undone_at=None,
                  plan={"summary": "Set consolidationPolicy WhenEmpty and consolidateAfter 10m on NodePool gpu-training",
                        "preview": "--- nodepool/gpu-training\n+++ nodepool/gpu-training\n"
                                   "-  consolidationPolicy: WhenEmptyOrUnderutilized\n+  consolidationPolicy: WhenEmpty\n"},
                  results=[], undo=[], incident_id=None, messages=(), version=1)
    fields.update(extra)
    return ProposalView(**fields)


@pytest.mark.parametrize("name, proposal", [
    ("proposal_pending", _proposal("pending")),
    ("approval_result_applied", _proposal("applied", approvals=("U0ONCALL",),
                                          results=[{"object": "nodepool/gpu-training", "result": "applied"}],
                                          undo=[{"ref": {}, "patchType": "application/merge-patch+json", "patch": {}}])),
    ("approval_result_rejected", _proposal("rejected", decided_by="U0ONCALL")),
])
def test_proposal_and_approval_results(name, proposal):
    rendered = {"text": proposal_text(proposal), "blocks": proposal_blocks(proposal)}
    assert rule_problems(rendered) == []
    assert rendered["text"].startswith(f"Change #7 {proposal.state}: Let consolidation wait on ")
    snapshot(name, rendered)


@pytest.mark.parametrize("name, blocks", [
    ("status_progress", progress_blocks("pytorchjob/llama-3-8b-fsdp", "reading pods and events", elapsed=4.2)),
    ("status_queued", queued_blocks("Queued: 2 requests ahead of yours; the answer follows in this thread.")),
    ("error", error_blocks("cannot reach cluster prod (timeout after 10 s): check the kubeconfig context and retry")),
    ("help", help_blocks()),
])
def test_status_error_and_help(name, blocks):
    assert rule_problems({"blocks": blocks}) == []
    snapshot(name, {"blocks": blocks})


def test_every_remediation_has_plain_words():
    assert set(REMEDIATION_LABELS) == set(DEFINITIONS)
    assert all(label and "-" not in label and label not in DEFINITIONS for label in REMEDIATION_LABELS.values())
