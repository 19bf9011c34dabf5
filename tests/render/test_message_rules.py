"""The rule checks of tests/render/rules.py catch what they are meant to: each rule broken on purpose,
in the shape the old messages had, is reported; the same message told the new way passes."""
from __future__ import annotations

from bot.render.blocks import kit
from playbooks.model import Diagnosis, Finding, Target
from tests.render.rules import rule_problems

DIAGNOSIS = Diagnosis(
    target=Target(kind="job", name="llama-70b", namespace="llm"), summary="", cluster="prod",
    findings=[Finding(code="karpenter.nodepool_limit_reached", severity="error", confidence="high",
                      title="NodePool gpu-training-32 has used all 32 GPUs", detail="A new node needs 8 more.")])
GOOD = {"text": "Job llama-70b can't start: NodePool gpu-training-32 has used all 32 GPUs.",
        "blocks": [kit.header(":large_orange_circle: Job llama-70b can't start: NodePool gpu-training-32 has used all "
                              "32 GPUs"),
                   kit.section("A new node needs 8 more."),
                   kit.context("`karpenter.nodepool_limit_reached` · error · confidence high")]}


def broken(*blocks, text=GOOD["text"]) -> dict:
    return {"text": text, "blocks": list(blocks)}


def test_the_good_message_passes():
    assert rule_problems(GOOD, diagnosis=DIAGNOSIS) == []


def test_a_header_that_is_the_target_id():
    problems = rule_problems(broken(kit.header(":large_orange_circle: job/llama-70b"), *GOOD["blocks"][1:]),
                             diagnosis=DIAGNOSIS)
    assert any("does not name the target" in p for p in problems)
    assert any("does not say the cause" in p for p in problems)


def test_a_notification_text_that_is_not_the_answer():
    problems = rule_problems(broken(*GOOD["blocks"], text="job/llama-70b in llm: First finding: x"), diagnosis=DIAGNOSIS)
    assert any("notification text does not lead with the answer" in p for p in problems)


def test_a_summary_repeated_by_the_first_finding():
    title = "NodePool gpu-training-32 has used all 32 GPUs"
    problems = rule_problems(broken(*GOOD["blocks"], kit.section(f"*1. {title}*\nA new node needs 8 more.")))
    assert any(p.startswith("repeated in the section") for p in problems), problems


def test_codes_and_fingerprints_in_prose():
    problems = rule_problems(broken(
        kit.section("16 pods of karpenter.nodepool_limit_reached@pytorchjob/llm/llama-70b"),
        kit.section("Its consequences: nccl.peer_unresponsive (rank 0 lost its peer)")))
    assert any("internal name 'nccl.peer_unresponsive'" in p for p in problems)
    assert any("fingerprint 'karpenter.nodepool_limit_reached@pytorchjob/llm/llama-70b'" in p for p in problems)


def test_codes_in_a_context_line_quote_or_snippet_are_fine():
    message = broken(*GOOD["blocks"], kit.section("> log: nccl.timeout after 600 s\n```\ncode: nccl.timeout\n```"))
    assert rule_problems(message) == []


def test_an_error_listed_for_completeness():
    problems = rule_problems(broken(kit.section(":large_orange_circle: *No instance type fits*\nKarpenter reported "
                                                "this for NodePool system; it is listed for completeness.")))
    assert "an error-level message calls a finding 'listed for completeness'" in problems


def test_buttons_in_internal_words():
    problems = rule_problems(broken(*GOOD["blocks"], *kit.actions([kit.button(
        "Request approval: annotate-do-not-disrupt", action_id="a", value="v")])))
    assert "button label not in plain words: 'Request approval: annotate-do-not-disrupt'" in problems


def test_what_slack_refuses():
    problems = rule_problems(broken({"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}))
    assert any(p.startswith("Slack would refuse it") for p in problems)
