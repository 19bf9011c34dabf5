"""mrkdwn text from untrusted strings: escaped, trimmed and split without ever exceeding a limit.

Log lines and event messages are written by whoever runs the job, so ``<@U123>``, ``<!channel>`` or
``<https://x|y>`` in them must reach Slack as text, never as a mention or a link: escape ``&``,
``<`` and ``>`` (the only characters Slack parses, api.slack.com "Escaping text"), and set
``verbatim`` on every mrkdwn object (kit.mrkdwn) so bare ``@here`` and ``#channel`` stay text too.
Code is split into pieces that are each fenced on their own, so a piece never ends inside a fence.
"""
from __future__ import annotations

import re

ELLIPSIS = "…"
FENCE = "```"
_FENCE_OVERHEAD = len(FENCE + "\n" + "\n" + FENCE)
# A cut must not leave half an entity (``&am``) behind: Slack would show it literally.
_PARTIAL_ENTITY = re.compile(r"&[a-z]{0,3}$")
_BACKTICK_RUN = re.compile(r"`{3,}")


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def defuse_fences(text: str) -> str:
    """A ``` inside a quote or a snippet would open or close a code block: break every run of three
    or more backticks up with zero-width spaces."""
    return _BACKTICK_RUN.sub(lambda m: "\u200b".join(m.group(0)), text)


def cut(text: str, limit: int, *, marker: str = ELLIPSIS) -> str:
    """``text`` if it fits, else its start (at a line or word break when one is near) plus ``marker``."""
    if len(text) <= limit:
        return text
    room = limit - len(marker)
    if room <= 0:
        return marker[:limit]
    head = text[:room]
    for sep in ("\n", " "):
        at = head.rfind(sep)
        if at >= room * 0.8:
            head = head[:at]
            break
    return _PARTIAL_ENTITY.sub("", head).rstrip() + marker


def clean(text: str, limit: int) -> str:
    """Untrusted text for mrkdwn: escaped, fences defused, then cut to ``limit``."""
    return cut(escape(defuse_fences(text)), limit)


def hard_split(line: str, width: int) -> list[str]:
    """An escaped line in pieces of at most ``width`` characters, never splitting an entity."""
    pieces = []
    while len(line) > width:
        piece = _PARTIAL_ENTITY.sub("", line[:width]) or line[:width]
        pieces.append(piece)
        line = line[len(piece):]
    return pieces + [line]


def fenced_chunks(code: str, *, limit: int) -> list[str]:
    """``code`` as code blocks, each at most ``limit`` characters with its fences, split between lines."""
    width = limit - _FENCE_OVERHEAD
    lines = [piece for line in escape(defuse_fences(code.rstrip("\n"))).split("\n")
             for piece in hard_split(line, width)]
    chunks: list[list[str]] = [[]]
    size = 0
    for line in lines:
        if chunks[-1] and size + 1 + len(line) > width:
            chunks.append([])
            size = 0
        size += len(line) + (1 if chunks[-1] else 0)
        chunks[-1].append(line)
    return [f"{FENCE}\n" + "\n".join(chunk) + f"\n{FENCE}" for chunk in chunks]


def quote_chunks(text: str, *, limit: int) -> list[str]:
    """``text`` as "> " quoted lines, in pieces of at most ``limit`` characters, split between lines."""
    width = limit - 2
    lines = [piece for line in escape(defuse_fences(text.rstrip("\n") or " ")).split("\n")
             for piece in hard_split(line, width)]
    chunks: list[list[str]] = [[]]
    size = 0
    for line in lines:
        quoted = f"> {line}"
        if chunks[-1] and size + 1 + len(quoted) > limit:
            chunks.append([])
            size = 0
        size += len(quoted) + (1 if chunks[-1] else 0)
        chunks[-1].append(quoted)
    return ["\n".join(chunk) for chunk in chunks]


def quote(text: str, *, limit: int, max_lines: int = 12) -> str:
    """The start of ``text`` quoted, at most ``limit`` characters and ``max_lines`` lines."""
    chunks = quote_chunks(text, limit=limit)
    lines = chunks[0].split("\n")
    more = len(chunks) > 1 or len(lines) > max_lines
    lines = lines[:max_lines]
    if more:
        while lines and len("\n".join(lines)) + len(ELLIPSIS) > limit:
            lines.pop()
        if lines:
            lines[-1] += ELLIPSIS
        else:
            lines = [f"> {ELLIPSIS}"]
    return "\n".join(lines)


def split_mrkdwn(text: str, *, limit: int) -> list[str]:
    """mrkdwn in pieces of at most ``limit`` characters, split between lines; a piece that ends inside
    a ``` fence is closed and the next one reopens it, so no piece is left with an open fence."""
    width = limit - _FENCE_OVERHEAD
    pieces: list[str] = []
    current: list[str] = []
    in_fence = False
    for line in text.split("\n"):
        for part in hard_split(line, width - len(FENCE) - 1):
            if current and len("\n".join(current + [part])) > width:
                pieces.append("\n".join(current) + (f"\n{FENCE}" if in_fence else ""))
                current = [FENCE] if in_fence else []
            current.append(part)
        if line.count(FENCE) % 2:
            in_fence = not in_fence
    if current:
        pieces.append("\n".join(current) + (f"\n{FENCE}" if in_fence else ""))
    return [p for p in pieces if p.strip()]
