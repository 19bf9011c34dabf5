"""Messages broken over several lines by the terminal or the form they were pasted from.

A terminal wraps at its width, mid-word: every piece but the last is exactly as long as the widest line.
A form or an editor wraps at word boundaries: a piece ends without the punctuation that ends a message and
the next one continues it. Either way a rule that knows the message sees only fragments, so the pieces are
joined again and the joined line is read as well (never instead of the pieces).

Only pastes are rejoined (``MAX_CHARS``): a log file written by a program has its own line ends.
"""
from __future__ import annotations

from collections.abc import Iterator

from playbooks import linear

MAX_CHARS = 512 * 1024
MAX_PIECES = 12
MIN_PIECE = 40  # a shorter line ended where its writer ended it
_ENDS = (".", ":", ";", "!", "?", ")", "]", "}", "\"", "'")
# The next line starts a new record: a timestamp, a log level header, a rank tag, an indented field.
# (NCCL's host:pid:tid and libfabric's prov:pid:time prefixes among them: a log writes those, not a person).
_NEW_RECORD = linear.compile(
    r"^(?:\d{4}-\d{2}-\d{2}|[IWEF]\d{4} |\[|\{|\s{2,}\S|[\w.-]{1,253}:\d{1,10}[:\s]|[A-Z][a-z]{2} \d{1,2} "
    r"|Traceback|File \")")


def _width(lines: list[str]) -> int:
    """The terminal width, if some lines run exactly to it (at least two, all of the same length)."""
    longest = max((len(line) for line in lines), default=0)
    at_width = sum(1 for line in lines if len(line) == longest)
    return longest if longest >= 60 and at_width >= 1 and any(len(line) < longest for line in lines) else 0


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, joined text) for each run of 2 to MAX_PIECES lines one message was broken into.

    A piece exactly as long as the widest line may be a terminal's mid-word break or a form's break that
    happened to fill the line; both readings are given (joined as is, and with a space)."""
    if len(text) > MAX_CHARS or "\n" not in text:
        return
    lines = [line.rstrip("\r") for line in text.split("\n")]
    width = _width(lines)
    i = 0
    while i < len(lines):
        pieces, tight, spaced = 1, lines[i], lines[i]
        while pieces < MAX_PIECES and i + pieces < len(lines):
            previous, following = lines[i + pieces - 1], lines[i + pieces]
            if not following.strip() or len(previous) < MIN_PIECE:
                break
            if width and len(previous) == width:
                tight += following  # the terminal broke it mid-word at its width
                spaced += " " + following.strip()
            elif not previous.rstrip().endswith(_ENDS) and not _NEW_RECORD.match(following):
                tight += " " + following.strip()  # a form broke it at a word boundary
                spaced += " " + following.strip()
            else:
                break
            pieces += 1
        if pieces > 1:
            yield i + 1, tight
            if spaced != tight:
                yield i + 1, spaced
        i += pieces


def unwrap(text: str) -> list[str]:
    """The text with each broken message joined back, for the readers of whole documents: one text per
    reading of the breaks (as they are, and with a space where a full-width piece may end a word); empty
    when nothing was broken."""
    readings: dict[int, list[str]] = {}
    for lineno, line in logical_lines(text):
        readings.setdefault(lineno, []).append(line)
    if not readings:
        return []
    lines = text.split("\n")
    texts = []
    for reading in (0, 1):
        out, i = [], 0
        for start in sorted(readings):
            joined = readings[start][min(reading, len(readings[start]) - 1)]
            out.extend(lines[i:start - 1])
            out.append(joined)
            i = start - 1 + _pieces(lines, start - 1, joined)
        out.extend(lines[i:])
        texts.append("\n".join(out))
    return texts if texts[0] != texts[1] else texts[:1]


def _pieces(lines: list[str], first: int, joined: str) -> int:
    """How many physical lines, from ``first``, make up ``joined``."""
    size, n = 0, 0
    target = len(joined.replace(" ", ""))
    while first + n < len(lines) and size < target:
        size += len(lines[first + n].strip().replace(" ", ""))
        n += 1
    return max(n, 2)
