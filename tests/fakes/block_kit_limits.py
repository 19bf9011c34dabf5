"""Block Kit limits, checked the way Slack checks them.

``problems(blocks)`` returns Slack's own wording, one line per problem, each ending in the JSON pointer
of the offending field, as Slack puts them in ``response_metadata.messages`` of an ``invalid_blocks``
(messages) or ``invalid_arguments`` (views) answer, e.g.
``[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/text/text]``.

Limits are those of the Block Kit reference (docs.slack.dev/reference/block-kit): only the block and
element types gpubot uses are accepted, so an unexpected one fails here as it would fail in Slack's
schema check.
"""
from __future__ import annotations

from typing import Any

MAX_BLOCKS = {"message": 50, "modal": 100, "home": 100}

BLOCK_TYPES = frozenset({"section", "context", "divider", "header", "actions", "rich_text", "image", "input"})
ACTION_ELEMENTS = frozenset({"button", "static_select", "overflow", "datepicker"})
ACCESSORY_ELEMENTS = ACTION_ELEMENTS | {"image"}
INPUT_ELEMENTS = frozenset({"plain_text_input", "static_select", "multi_static_select", "datepicker", "checkboxes",
                            "radio_buttons", "number_input"})
CONTEXT_ELEMENTS = frozenset({"mrkdwn", "plain_text", "image"})
TEXT_TYPES = frozenset({"mrkdwn", "plain_text"})

SECTION_TEXT = 3000
FIELD_TEXT = 2000
MAX_FIELDS = 10
HEADER_TEXT = 150
CONTEXT_TEXT = 2000
MAX_CONTEXT_ELEMENTS = 10
MAX_ACTION_ELEMENTS = 25
BUTTON_TEXT = 75
BUTTON_VALUE = 2000
BUTTON_URL = 3000
ACTION_ID = 255
BLOCK_ID = 255
OPTION_TEXT = 75
OPTION_VALUE = 150
MAX_OPTIONS = 100
OVERFLOW_OPTIONS = (1, 5)
INPUT_LABEL = 2000
CONFIRM_TITLE = 100
CONFIRM_TEXT = 300
CONFIRM_BUTTON = 30
IMAGE_URL = 3000
ALT_TEXT = 2000


def problems(blocks: Any, *, surface: str = "message", pointer: str = "/blocks") -> list[str]:
    """Every reason Slack would refuse ``blocks`` on ``surface`` ("message", "modal" or "home")."""
    if not isinstance(blocks, list):
        return [_error("must be an array", pointer)]
    found: list[str] = []
    limit = MAX_BLOCKS[surface]
    if len(blocks) > limit:
        found.append(_error(f"no more than {limit} items allowed", pointer))
    for index, block in enumerate(blocks):
        found += _block(block, f"{pointer}/{index}")
    return found


def _error(what: str, pointer: str) -> str:
    return f"[ERROR] {what} [json-pointer:{pointer}]"


def _block(block: Any, at: str) -> list[str]:
    if not isinstance(block, dict):
        return [_error("must be an object", at)]
    kind = block.get("type")
    if kind not in BLOCK_TYPES:
        return [_error(f"unsupported type: {kind}", f"{at}/type")]
    found = _id(block, "block_id", BLOCK_ID, at)
    found += _BLOCK_CHECKS[kind](block, at)
    return found


def _id(obj: dict, key: str, limit: int, at: str) -> list[str]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, str):
        return [_error("must be a string", f"{at}/{key}")]
    return _length(value, limit, f"{at}/{key}")


def _length(value: str, limit: int, at: str, *, minimum: int = 0) -> list[str]:
    if len(value) > limit:
        return [_error(f"must be less than {limit + 1} characters", at)]
    if len(value) < minimum:
        return [_error(f"must be more than {minimum - 1} characters", at)]
    return []


def _text(obj: Any, limit: int, at: str, *, types: frozenset[str] = TEXT_TYPES) -> list[str]:
    """A text object: ``{"type": "mrkdwn"|"plain_text", "text": "..."}`` with 1..limit characters."""
    if not isinstance(obj, dict):
        return [_error("must be an object", at)]
    if obj.get("type") not in types:
        return [_error(f"must be one of {sorted(types)}", f"{at}/type")]
    text = obj.get("text")
    if not isinstance(text, str):
        return [_error("missing required field: text", at)]
    return _length(text, limit, f"{at}/text", minimum=1)


def _section(block: dict, at: str) -> list[str]:
    found: list[str] = []
    if "text" not in block and "fields" not in block:
        found.append(_error("must provide either text or fields", at))
    if "text" in block:
        found += _text(block["text"], SECTION_TEXT, f"{at}/text")
    if "fields" in block:
        fields = block["fields"]
        if not isinstance(fields, list):
            return found + [_error("must be an array", f"{at}/fields")]
        if len(fields) > MAX_FIELDS:
            found.append(_error(f"no more than {MAX_FIELDS} items allowed", f"{at}/fields"))
        for index, field in enumerate(fields):
            found += _text(field, FIELD_TEXT, f"{at}/fields/{index}")
    if "accessory" in block:
        found += _element(block["accessory"], f"{at}/accessory", ACCESSORY_ELEMENTS)
    return found


def _header(block: dict, at: str) -> list[str]:
    return _text(block.get("text"), HEADER_TEXT, f"{at}/text", types=frozenset({"plain_text"}))


def _context(block: dict, at: str) -> list[str]:
    elements = block.get("elements")
    if not isinstance(elements, list) or not elements:
        return [_error("must provide at least 1 item", f"{at}/elements")]
    found = []
    if len(elements) > MAX_CONTEXT_ELEMENTS:
        found.append(_error(f"no more than {MAX_CONTEXT_ELEMENTS} items allowed", f"{at}/elements"))
    for index, element in enumerate(elements):
        where = f"{at}/elements/{index}"
        kind = element.get("type") if isinstance(element, dict) else None
        if kind not in CONTEXT_ELEMENTS:
            found.append(_error(f"unsupported type: {kind}", f"{where}/type"))
        elif kind == "image":
            found += _image_element(element, where)
        else:
            found += _text(element, CONTEXT_TEXT, where)
    return found


def _actions(block: dict, at: str) -> list[str]:
    elements = block.get("elements")
    if not isinstance(elements, list) or not elements:
        return [_error("must provide at least 1 item", f"{at}/elements")]
    found = []
    if len(elements) > MAX_ACTION_ELEMENTS:
        found.append(_error(f"no more than {MAX_ACTION_ELEMENTS} items allowed", f"{at}/elements"))
    for index, element in enumerate(elements):
        found += _element(element, f"{at}/elements/{index}", ACTION_ELEMENTS)
    return found


def _divider(block: dict, at: str) -> list[str]:
    return []


def _rich_text(block: dict, at: str) -> list[str]:
    if not isinstance(block.get("elements"), list):
        return [_error("missing required field: elements", at)]
    return []


def _image(block: dict, at: str) -> list[str]:
    found = _image_element(block, at)
    if "title" in block:
        found += _text(block["title"], INPUT_LABEL, f"{at}/title", types=frozenset({"plain_text"}))
    return found


def _input(block: dict, at: str) -> list[str]:
    found = _text(block.get("label"), INPUT_LABEL, f"{at}/label", types=frozenset({"plain_text"}))
    return found + _element(block.get("element"), f"{at}/element", INPUT_ELEMENTS)


_BLOCK_CHECKS = {
    "section": _section, "header": _header, "context": _context, "actions": _actions, "divider": _divider,
    "rich_text": _rich_text, "image": _image, "input": _input,
}


def _image_element(element: dict, at: str) -> list[str]:
    # An image comes from image_url or slack_file (a Slack file object with url or id), never both
    # (docs.slack.dev/reference/block-kit/blocks/image-block, .../composition-objects/slack-file-object).
    if "slack_file" in element:
        ref = element["slack_file"]
        found = [] if "image_url" not in element else [_error("only one of image_url, slack_file", at)]
        if not isinstance(ref, dict) or len({"url", "id"} & set(ref)) != 1:
            found.append(_error("slack_file needs exactly one of url, id", f"{at}/slack_file"))
        value = element.get("alt_text")
        return found + ([_error("missing required field: alt_text", at)] if not isinstance(value, str)
                        else _length(value, ALT_TEXT, f"{at}/alt_text", minimum=1))
    found = []
    for key, limit in (("image_url", IMAGE_URL), ("alt_text", ALT_TEXT)):
        value = element.get(key)
        if not isinstance(value, str):
            found.append(_error(f"missing required field: {key}", at))
        else:
            found += _length(value, limit, f"{at}/{key}", minimum=1)
    return found


def _element(element: Any, at: str, allowed: frozenset[str]) -> list[str]:
    if not isinstance(element, dict):
        return [_error("must be an object", at)]
    kind = element.get("type")
    if kind not in allowed:
        return [_error(f"unsupported type: {kind}", f"{at}/type")]
    if kind == "image":
        return _image_element(element, at)
    found = _id(element, "action_id", ACTION_ID, at)
    if "confirm" in element:
        found += _confirm(element["confirm"], f"{at}/confirm")
    if kind == "button":
        found += _button(element, at)
    elif kind in ("static_select", "multi_static_select", "overflow", "checkboxes", "radio_buttons"):
        found += _options(element, at, overflow=kind == "overflow")
    return found


def _confirm(dialog: Any, at: str) -> list[str]:
    """A confirmation dialog: title 100, text 300, confirm and deny 30 characters."""
    if not isinstance(dialog, dict):
        return [_error("must be an object", at)]
    plain = frozenset({"plain_text"})
    found = _text(dialog.get("title"), CONFIRM_TITLE, f"{at}/title", types=plain)
    found += _text(dialog.get("text"), CONFIRM_TEXT, f"{at}/text")
    found += _text(dialog.get("confirm"), CONFIRM_BUTTON, f"{at}/confirm", types=plain)
    found += _text(dialog.get("deny"), CONFIRM_BUTTON, f"{at}/deny", types=plain)
    if dialog.get("style") not in (None, "primary", "danger"):
        found.append(_error("must be one of ['danger', 'primary']", f"{at}/style"))
    return found


def _button(element: dict, at: str) -> list[str]:
    found = _text(element.get("text"), BUTTON_TEXT, f"{at}/text", types=frozenset({"plain_text"}))
    if "value" in element:
        found += _length(str(element["value"]), BUTTON_VALUE, f"{at}/value")
    if "url" in element:
        found += _length(str(element["url"]), BUTTON_URL, f"{at}/url")
    if element.get("style") not in (None, "primary", "danger"):
        found.append(_error("must be one of ['danger', 'primary']", f"{at}/style"))
    return found


def _options(element: dict, at: str, *, overflow: bool) -> list[str]:
    if "option_groups" in element:
        return []
    options = element.get("options")
    if not isinstance(options, list) or not options:
        return [_error("must provide at least 1 item", f"{at}/options")]
    found = []
    most = OVERFLOW_OPTIONS[1] if overflow else MAX_OPTIONS
    if len(options) > most:
        found.append(_error(f"no more than {most} items allowed", f"{at}/options"))
    for index, option in enumerate(options):
        where = f"{at}/options/{index}"
        found += _text(option.get("text") if isinstance(option, dict) else None, OPTION_TEXT, f"{where}/text")
        value = option.get("value") if isinstance(option, dict) else None
        if value is not None:
            found += _length(str(value), OPTION_VALUE, f"{where}/value")
    return found


VIEW_TITLE = 24
VIEW_BUTTON = 24
PRIVATE_METADATA = 3000
CALLBACK_ID = 255
VIEW_TYPES = {"modal": "modal", "home": "home"}


def view_problems(view: Any, *, pointer: str = "/view") -> list[str]:
    """Every reason Slack would refuse ``view`` in ``views.open`` / ``views.update`` / ``views.publish``."""
    if not isinstance(view, dict):
        return [_error("must be an object", pointer)]
    kind = view.get("type")
    if kind not in VIEW_TYPES:
        return [_error(f"must be one of {sorted(VIEW_TYPES)}", f"{pointer}/type")]
    found = problems(view.get("blocks"), surface=VIEW_TYPES[kind], pointer=f"{pointer}/blocks")
    plain = frozenset({"plain_text"})
    if kind == "modal":
        found += _text(view.get("title"), VIEW_TITLE, f"{pointer}/title", types=plain)
        for key in ("submit", "close"):
            if key in view:
                found += _text(view[key], VIEW_BUTTON, f"{pointer}/{key}", types=plain)
        has_input = any(isinstance(b, dict) and b.get("type") == "input" for b in view.get("blocks") or [])
        if has_input and "submit" not in view:
            found.append(_error("must define `submit` to use an `input` block in modals", f"{pointer}/blocks"))
    for key, limit in (("private_metadata", PRIVATE_METADATA), ("callback_id", CALLBACK_ID)):
        found += _id(view, key, limit, pointer)
    return found
