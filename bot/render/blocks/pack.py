"""Packing groups of blocks into messages that each stay within the block and text limits."""
from __future__ import annotations

from bot.render.blocks import limits


def fits(blocks: list[dict], *, max_blocks: int = limits.MAX_BLOCKS["message"],
         max_text: int = limits.TEXT_BUDGET) -> bool:
    return len(blocks) <= max_blocks and limits.text_size(blocks) <= max_text


def pack(groups: list[list[dict]], *, continued: list[dict], max_blocks: int, max_text: int) -> list[list[dict]]:
    """Groups in order, a new message whenever the next group would not fit; each new message starts
    with the ``continued`` blocks. A group is never split across messages."""
    messages: list[list[dict]] = [[]]
    for group in groups:
        if messages[-1] and not fits(messages[-1] + group, max_blocks=max_blocks, max_text=max_text):
            messages.append(list(continued))
        messages[-1].extend(group)
    return messages
