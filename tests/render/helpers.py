"""Reading rendered Block Kit back in tests: text objects, all text, buttons."""
from __future__ import annotations


def texts(node) -> list[dict]:
    """Every text object in blocks."""
    if isinstance(node, list):
        return [t for item in node for t in texts(item)]
    if isinstance(node, dict):
        own = [node] if node.get("type") in ("mrkdwn", "plain_text") else []
        return own + [t for v in node.values() if isinstance(v, (dict, list)) for t in texts(v)]
    return []


def alltext(blocks) -> str:
    return "\n".join(t["text"] for t in texts(blocks))


def buttons(blocks: list[dict]) -> list[dict]:
    found = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    return found + [b["accessory"] for b in blocks if b.get("accessory")]
