"""Evidence quoted verbatim ("> " lines, escaped), its source in a context element underneath."""
from __future__ import annotations

from bot.render.blocks import kit, limits
from bot.render.blocks.text import clean, quote, quote_chunks
from playbooks.model import Evidence

SOURCE_LIMIT = 300
SECTION_ROOM = limits.SECTION_TEXT - 100


def evidence_preview(item: Evidence, *, limit: int, max_lines: int = 10) -> list[dict]:
    """The start of one evidence item (for the diagnosis message)."""
    return [kit.section(quote(item.text, limit=limit, max_lines=max_lines)), source_context(item)]


def evidence_groups(item: Evidence, *, max_chars: int) -> list[list[dict]]:
    """All of one evidence item (for a thread), as groups of blocks that belong together: one section
    per piece of the quote, the last piece with its source. Text past ``max_chars`` is left out."""
    text = item.text if len(item.text) <= max_chars else item.text[:max_chars]
    sections = [kit.section(chunk) for chunk in quote_chunks(text, limit=SECTION_ROOM)]
    tail = [source_context(item, omitted=len(item.text) - len(text))]
    return [[s] for s in sections[:-1]] + [[sections[-1], *tail]]


def source_context(item: Evidence, *, omitted: int = 0) -> dict:
    source = f"_{clean(item.source, SOURCE_LIMIT)}_" if item.source.strip() else "_(no source recorded)_"
    return kit.context(source + (f" · {omitted:,} more characters not shown" if omitted else ""))
