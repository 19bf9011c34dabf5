"""What a Request approval click proposes: the change, the exact merge patch, and that nothing has
been written yet."""
from __future__ import annotations

from bot.payloads import ApprovalRequest
from bot.render.blocks import kit, limits
from bot.render.blocks.text import clean, fenced_chunks

MAX_PATCH_SECTIONS = 3


def approval_preview_blocks(request: ApprovalRequest, patch: str) -> list[dict]:
    """``patch``: the JSON merge patch as text (playbooks.remediations.merge_patch, dumped)."""
    rem = request.remediation
    blocks = [kit.section(f":lock: *Change proposed:* `{clean(rem.kind, 100)}` on `{clean(rem.target, 300)}`"),
              kit.context(f"For finding `{clean(request.code, 100)}` on {clean(request.target.text, 300)}"
                          + (f" in cluster `{clean(request.target.cluster, 200)}`" if request.target.cluster else ""))]
    chunks = fenced_chunks(patch, limit=limits.SECTION_TEXT - 100) if patch.strip() else []
    blocks += [kit.section(chunk) for chunk in chunks[:MAX_PATCH_SECTIONS]]
    if len(chunks) > MAX_PATCH_SECTIONS:
        blocks.append(kit.context(f"and {len(chunks) - MAX_PATCH_SECTIONS} more parts of the patch"))
    return blocks + [kit.context("Nothing has been changed: this merge patch is written only after an on-call "
                                 "approval.")]
