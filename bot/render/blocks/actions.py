"""Buttons. Values are typed and validated (bot.payloads); a target that cannot be looked up again
(pasted text) gets no buttons, since its click could not be answered."""
from __future__ import annotations

from bot.payloads import (ACTION_APPROVAL, ACTION_EVIDENCE, ACTION_RERUN, ACTION_SHARE, ApprovalRequest, EvidenceRef,
                          TargetRef, encode_approval, encode_evidence, encode_share, encode_target)
from bot.render.blocks import kit
from bot.render.wording import RERUN, SHARE, SHOW_EVIDENCE, remediation_label
from bot.targets import KINDS
from playbooks.model import Diagnosis


def actionable(d: Diagnosis) -> bool:
    return d.target.kind in KINDS


def rerun_button(d: Diagnosis) -> dict:
    return kit.button(RERUN, action_id=ACTION_RERUN, value=encode_target(TargetRef.of(d)))


def evidence_button(d: Diagnosis, index: int, *, label: str = SHOW_EVIDENCE) -> dict:
    ref = EvidenceRef(target=TargetRef.of(d), finding=index, code=d.findings[index].code)
    return kit.button(label, action_id=ACTION_EVIDENCE, value=encode_evidence(ref))


def approval_buttons(d: Diagnosis, index: int, *, primary: bool = False) -> list[dict]:
    code, target = d.findings[index].code, TargetRef.of(d)
    return [kit.button(remediation_label(rem.kind), action_id=ACTION_APPROVAL,
                       value=encode_approval(ApprovalRequest(remediation=rem, target=target, code=code)),
                       style="primary" if primary and i == 0 else None)
            for i, rem in enumerate(d.findings[index].remediations)]


def finding_actions(d: Diagnosis, index: int, *, primary: bool = False) -> list[dict]:
    """One button per remediation (each asks for approval), then Show evidence, in actions blocks."""
    if not actionable(d):
        return []
    finding = d.findings[index]
    buttons = [evidence_button(d, index)] if finding.evidence or finding.fix else []
    return kit.actions(approval_buttons(d, index, primary=primary) + buttons)


def share_blocks(token: str) -> list[dict]:
    """Under a private explanation: share it (its findings and the lines quoted as evidence) in the channel."""
    return [kit.context("Only you can see this explanation of the text you pasted."),
            *kit.actions([kit.button(SHARE, action_id=ACTION_SHARE, value=encode_share(token))])]


def shared_note_blocks(user: str) -> list[dict]:
    return [kit.context(f"<@{user}> shared this explanation of a log they pasted privately.")]
