"""Block and element constructors. Short single-line texts (headers, context, button labels) are cut
to their limit here; section text must arrive within its limit, because cutting it could leave a
code fence open: the block renderers split it first (text.py), and an oversized one is a bug."""
from __future__ import annotations

from bot.render.blocks import limits
from bot.render.blocks.text import cut


def mrkdwn(text: str) -> dict:
    # verbatim: Slack must not turn bare URLs, #channels or @here in log text into links or mentions.
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def plain(text: str) -> dict:
    return {"type": "plain_text", "text": text, "emoji": True}


def header(text: str) -> dict:
    return {"type": "header", "text": plain(cut(text, limits.HEADER_TEXT))}


def section(text: str) -> dict:
    if not text.strip() or len(text) > limits.SECTION_TEXT:
        raise ValueError(f"section text of {len(text)} characters: split it before building the block")
    return {"type": "section", "text": mrkdwn(text)}


def fields_section(fields: list[str], *, text: str | None = None) -> dict:
    if not 0 < len(fields) <= limits.SECTION_FIELDS:
        raise ValueError(f"{len(fields)} fields: a section holds 1-{limits.SECTION_FIELDS}")
    block = section(text) if text else {"type": "section"}
    block["fields"] = [mrkdwn(cut(f, limits.FIELD_TEXT)) for f in fields]
    return block


def context(*texts: str) -> dict:
    texts = tuple(t for t in texts if t.strip())[: limits.CONTEXT_ELEMENTS]
    if not texts:
        raise ValueError("a context block needs some text")
    return {"type": "context", "elements": [mrkdwn(cut(t, limits.CONTEXT_TEXT)) for t in texts]}


def divider() -> dict:
    return {"type": "divider"}


def button(label: str, *, action_id: str, value: str, style: str | None = None) -> dict:
    element = {"type": "button", "text": plain(cut(label, limits.BUTTON_TEXT)), "action_id": action_id, "value": value}
    if style:
        element["style"] = style
    return element


def actions(elements: list[dict]) -> list[dict]:
    """Buttons in as many actions blocks as needed: an action_id may appear once per block (Slack
    rejects duplicates with invalid_blocks), and a block holds at most 25 elements."""
    blocks: list[list[dict]] = []
    for element in elements:
        home = next((b for b in blocks if len(b) < limits.ACTIONS_ELEMENTS
                     and all(e["action_id"] != element["action_id"] for e in b)), None)
        if home is None:
            blocks.append(home := [])
        home.append(element)
    return [{"type": "actions", "elements": b} for b in blocks]
