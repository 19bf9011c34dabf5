"""A fix, as "What to do": its summary, then the snippet in code blocks, one per section, each fenced on its own."""
from __future__ import annotations

from bot.render.blocks import kit, limits
from bot.render.blocks.text import clean, fenced_chunks
from playbooks.model import Fix

SUMMARY_LIMIT = 500
CHUNK_LIMIT = limits.SECTION_TEXT - 100


def fix_groups(fix: Fix, *, max_sections: int | None = None, chunk_limit: int = CHUNK_LIMIT,
               more_hint: str = "") -> list[list[dict]]:
    """Groups of blocks: summary with the first piece of the snippet, then one section per further
    piece. With ``max_sections``, the pieces past it are left out and a context line says how many
    lines are missing and where to find them (``more_hint``)."""
    summary = f"*What to do:* {clean(fix.summary, SUMMARY_LIMIT)}" if fix.summary.strip() else "*What to do:*"
    chunks = fenced_chunks(fix.snippet, limit=min(chunk_limit, CHUNK_LIMIT)) if fix.snippet.strip() else []
    shown = chunks if max_sections is None else chunks[:max_sections]
    if shown and len(summary) + 1 + len(shown[0]) <= limits.SECTION_TEXT:
        groups = [[kit.section(f"{summary}\n{shown[0]}")]] + [[kit.section(chunk)] for chunk in shown[1:]]
    else:
        groups = [[kit.section(summary)]] + [[kit.section(chunk)] for chunk in shown]
    missing = sum(chunk.count("\n") - 1 for chunk in chunks[len(shown):])
    if missing:
        groups[-1].append(kit.context(f"Snippet continues for {missing} more lines.{more_hint}"))
    return groups


def fix_blocks(fix: Fix, *, max_sections: int | None = None, chunk_limit: int = CHUNK_LIMIT,
               more_hint: str = "") -> list[dict]:
    groups = fix_groups(fix, max_sections=max_sections, chunk_limit=chunk_limit, more_hint=more_hint)
    return [block for group in groups for block in group]
