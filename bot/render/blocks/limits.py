"""Slack's Block Kit limits, and a structural check that every rendered message respects them.

Slack rejects a whole message (``invalid_blocks``, ``msg_blocks_too_long``) for one field over its
limit, so the renderers stay under these numbers by construction and the tests run ``check`` on
everything they render. Limits from the Block Kit reference (docs.slack.dev/reference/block-kit).
"""
from __future__ import annotations

from typing import Any

MAX_BLOCKS = {"message": 50, "modal": 100, "home": 100}
SECTION_TEXT = 3000
SECTION_FIELDS = 10
FIELD_TEXT = 2000
HEADER_TEXT = 150
CONTEXT_ELEMENTS = 10
CONTEXT_TEXT = 2000
ACTIONS_ELEMENTS = 25
BUTTON_TEXT = 75
BUTTON_VALUE = 2000
ACTION_ID = 255
BLOCK_ID = 255
INPUT_LABEL = 2000
INPUT_MAX_LENGTH = 3000
MODAL_TITLE = 24
MODAL_BUTTON = 24
PRIVATE_METADATA = 3000
CALLBACK_ID = 255
# chat.postMessage also caps the text of all blocks together: undocumented, observed near 12,000
# characters (slackapi/bolt-js#2509, #2867: "msg_blocks_too_long"). Renderers aim for TEXT_BUDGET.
MESSAGE_TEXT_TOTAL = 12000
TEXT_BUDGET = 10000
FALLBACK_TEXT = 3000  # top-level `text`: Slack truncates at 40,000; notifications want it short

_BLOCK_KEYS = {
    "section": {"type", "block_id", "text", "fields", "accessory", "expand"},
    "context": {"type", "block_id", "elements"},
    "actions": {"type", "block_id", "elements"},
    "header": {"type", "block_id", "text"},
    "divider": {"type", "block_id"},
    "input": {"type", "block_id", "label", "element", "hint", "optional", "dispatch_action"},
}
_SURFACE_TYPES = {"message": {"section", "context", "actions", "header", "divider"},
                  "modal": {"section", "context", "actions", "header", "divider", "input"},
                  "home": {"section", "context", "actions", "header", "divider", "input"}}
_TEXT_KEYS = {"mrkdwn": {"type", "text", "verbatim"}, "plain_text": {"type", "text", "emoji"}}
_BUTTON_KEYS = {"type", "text", "action_id", "value", "style", "url", "confirm", "accessibility_label"}


def check(blocks: list[dict], *, surface: str = "message") -> list[str]:
    """Every way ``blocks`` would be rejected by Slack on ``surface``; empty when they are valid."""
    if surface not in MAX_BLOCKS:
        raise ValueError(f"unknown surface {surface!r}: use one of {', '.join(MAX_BLOCKS)}")
    if not isinstance(blocks, list) or not blocks:
        return ["blocks must be a non-empty list"]
    problems = []
    if len(blocks) > MAX_BLOCKS[surface]:
        problems.append(f"{len(blocks)} blocks, over the {surface} limit of {MAX_BLOCKS[surface]}")
    block_ids: set[str] = set()
    for i, block in enumerate(blocks):
        problems += [f"blocks[{i}]: {p}" for p in _block(block, surface=surface, block_ids=block_ids)]
    total = text_size(blocks)
    if surface == "message" and total > MESSAGE_TEXT_TOTAL:
        problems.append(f"{total} characters of text in all blocks, over {MESSAGE_TEXT_TOTAL}")
    return problems


def check_modal(view: dict) -> list[str]:
    problems = []
    if view.get("type") != "modal":
        problems.append("view type must be modal")
    problems += [f"title: {p}" for p in _text(view.get("title"), MODAL_TITLE, plain_only=True)]
    for key in ("submit", "close"):
        if key in view:
            problems += [f"{key}: {p}" for p in _text(view[key], MODAL_BUTTON, plain_only=True)]
    if len(view.get("private_metadata", "")) > PRIVATE_METADATA:
        problems.append(f"private_metadata over {PRIVATE_METADATA} characters")
    if len(view.get("callback_id", "")) > CALLBACK_ID:
        problems.append(f"callback_id over {CALLBACK_ID} characters")
    return problems + check(view.get("blocks"), surface="modal")


def text_size(blocks: list[dict]) -> int:
    """Characters of text in blocks, button values included: what counts towards the per-message total
    (Slack does not say exactly what it counts, so this errs on the side of counting more)."""
    return sum(_text_chars(b) for b in blocks)


def _text_chars(node: Any) -> int:
    if isinstance(node, list):
        return sum(_text_chars(v) for v in node)
    if not isinstance(node, dict):
        return 0
    own = len(node["text"]) if node.get("type") in _TEXT_KEYS and isinstance(node.get("text"), str) else 0
    own += len(node["value"]) if node.get("type") == "button" and isinstance(node.get("value"), str) else 0
    return own + sum(_text_chars(v) for v in node.values() if not isinstance(v, str))


def _block(block: Any, *, surface: str, block_ids: set[str]) -> list[str]:
    if not isinstance(block, dict):
        return ["a block must be an object"]
    kind = block.get("type")
    if kind not in _SURFACE_TYPES[surface]:
        return [f"block type {kind!r} is not used on a {surface}"]
    problems = [f"unexpected key {k!r}" for k in sorted(set(block) - _BLOCK_KEYS[kind])]
    block_id = block.get("block_id")
    if block_id is not None:
        if not isinstance(block_id, str) or not 0 < len(block_id) <= BLOCK_ID:
            problems.append(f"block_id must be 1-{BLOCK_ID} characters")
        elif block_id in block_ids:
            problems.append(f"duplicate block_id {block_id!r}")
        block_ids.add(block_id)
    return problems + _CHECKS[kind](block)


def _section(block: dict) -> list[str]:
    if "text" not in block and "fields" not in block:
        return ["a section needs text or fields"]
    problems = _text(block["text"], SECTION_TEXT) if "text" in block else []
    fields = block.get("fields", [])
    if not isinstance(fields, list) or len(fields) > SECTION_FIELDS or ("fields" in block and not fields):
        problems.append(f"fields must be a list of 1-{SECTION_FIELDS} text objects")
    else:
        for j, field in enumerate(fields):
            problems += [f"fields[{j}]: {p}" for p in _text(field, FIELD_TEXT)]
    if "accessory" in block:
        problems += [f"accessory: {p}" for p in _button(block["accessory"])]
    return problems


def _context(block: dict) -> list[str]:
    elements = block.get("elements")
    if not isinstance(elements, list) or not 0 < len(elements) <= CONTEXT_ELEMENTS:
        return [f"context needs 1-{CONTEXT_ELEMENTS} elements"]
    return [f"elements[{j}]: {p}" for j, e in enumerate(elements) for p in _text(e, CONTEXT_TEXT)]


def _actions(block: dict) -> list[str]:
    elements = block.get("elements")
    if not isinstance(elements, list) or not 0 < len(elements) <= ACTIONS_ELEMENTS:
        return [f"actions needs 1-{ACTIONS_ELEMENTS} elements"]
    problems = [f"elements[{j}]: {p}" for j, e in enumerate(elements) for p in _button(e)]
    ids = [e.get("action_id") for e in elements if isinstance(e, dict)]
    problems += [f"duplicate action_id {a!r} in one block" for a in sorted({a for a in ids if ids.count(a) > 1})]
    return problems


def _header(block: dict) -> list[str]:
    return _text(block.get("text"), HEADER_TEXT, plain_only=True)


def _divider(block: dict) -> list[str]:
    return []


def _input(block: dict) -> list[str]:
    problems = [f"label: {p}" for p in _text(block.get("label"), INPUT_LABEL, plain_only=True)]
    element = block.get("element")
    if not isinstance(element, dict) or element.get("type") != "plain_text_input":
        return problems + ["input element must be a plain_text_input"]
    if not isinstance(element.get("action_id"), str) or not 0 < len(element["action_id"]) <= ACTION_ID:
        problems.append(f"action_id must be 1-{ACTION_ID} characters")
    if not 0 < element.get("max_length", INPUT_MAX_LENGTH) <= INPUT_MAX_LENGTH:
        problems.append(f"max_length must be at most {INPUT_MAX_LENGTH}")
    return problems


def _button(element: Any) -> list[str]:
    if not isinstance(element, dict) or element.get("type") != "button":
        return ["only buttons are used as interactive elements"]
    problems = [f"unexpected key {k!r}" for k in sorted(set(element) - _BUTTON_KEYS)]
    problems += [f"text: {p}" for p in _text(element.get("text"), BUTTON_TEXT, plain_only=True)]
    action_id = element.get("action_id")
    if not isinstance(action_id, str) or not 0 < len(action_id) <= ACTION_ID:
        problems.append(f"action_id must be 1-{ACTION_ID} characters")
    if not isinstance(element.get("value", ""), str) or len(element.get("value", "")) > BUTTON_VALUE:
        problems.append(f"value must be a string of at most {BUTTON_VALUE} characters")
    if element.get("style", "primary") not in ("primary", "danger"):
        problems.append("style must be primary or danger")
    return problems


def _text(obj: Any, limit: int, *, plain_only: bool = False) -> list[str]:
    if not isinstance(obj, dict) or obj.get("type") not in _TEXT_KEYS:
        return ["a text object must have type mrkdwn or plain_text"]
    if plain_only and obj["type"] != "plain_text":
        return ["must be plain_text"]
    problems = [f"unexpected key {k!r}" for k in sorted(set(obj) - _TEXT_KEYS[obj["type"]])]
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        problems.append("text must be a non-empty string")
    elif len(text) > limit:
        problems.append(f"text of {len(text)} characters, over {limit}")
    return problems


_CHECKS = {"section": _section, "context": _context, "actions": _actions, "header": _header,
           "divider": _divider, "input": _input}
