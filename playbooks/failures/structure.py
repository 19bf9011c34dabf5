"""What only the lines around a failure say: the detail on the line after ``Last error:`` or ``what():``,
and a message that a terminal or a form wrapped over several lines.

PyTorch prints NCCL's own reason for a failed call on the line after ``Last error:``
(pytorch/pytorch torch/csrc/distributed/c10d/NCCLUtils.cpp ``getNcclErrorDetailStr``: ``"\\nLast error:\\n" +
ncclGetLastError(comm)``), so with NCCL_DEBUG unset that line is the only place the cause appears; the C++
runtime prints an uncaught exception's message on the line after ``terminate called after throwing an
instance of '...'`` (libstdc++ ``__gnu_cxx::__verbose_terminate_handler``: ``  what():  %s``).

A Python traceback ends with its exception (CPython Lib/traceback.py ``TracebackException.format``: the
``Traceback (most recent call last):`` header, indented frames, then ``<qualified type>: <message>`` at the
start of a line), whatever the exception is called: the line after the frames is read as an exception
even when its name ends in neither Error nor Exception and no table knows it. Only the lines of the
header's own stream are followed (the same ``[rankN]:`` tag), so interleaved ranks do not mix.

The prefilter hands over only the marked lines; their places in the text are found by one forward
search, so a 50 MB log is never split into lines for them.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from playbooks import linear
from playbooks.failures import lines, prefixes, tables
from playbooks.signatures.catalogue import scan_line
from playbooks.signatures.model import Hit, Signal, trim

_EXCEPTION_LINE = linear.compile(r"^(?P<exc_type>(?:[A-Za-z_][A-Za-z0-9_]{0,80}\.){0,10}[A-Za-z_][A-Za-z0-9_]{0,80})(?::\s?(?P<message>.*))?$")

LAST_ERROR = "Last error:"
WHAT = "what():"
TRACEBACK = "Traceback (most recent call last)"
MARKERS = (LAST_ERROR, WHAT, TRACEBACK)
MAX_FRAMES = 400  # lines followed after a traceback header before giving up on finding its exception
MAX_MARKS = 200  # detail lines read per text: the first ones name the cause, the rest repeat it


@dataclass(frozen=True)
class Mark:
    lineno: int
    line: str
    end: int = -1  # where the line ends in the text (the index of its newline), once located


def _located(text: str, marks: Iterable[Mark]) -> Iterator[Mark]:
    """Each mark with its place in the text, found by searching on from the previous one: marks come in
    the text's order, so the whole text is searched at most once, and only when it has marks."""
    position = 0
    for mark in marks:
        start = text.find(mark.line, position)
        if start < 0:
            continue
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        position = end
        yield Mark(mark.lineno, mark.line, end)


def _next_line(text: str, end: int, lineno: int) -> tuple[int, str] | None:
    """The first non-empty line after offset ``end`` (within the next 3 lines)."""
    for step in range(1, 4):
        if end >= len(text):
            return None
        start = end + 1
        stop = text.find("\n", start)
        stop = len(text) if stop < 0 else stop
        line = text[start:stop]
        if line.strip():
            return lineno + step, line
        end = stop
    return None


def _detail_hit(detail: str) -> Hit:
    """NCCL's last error: one of its WARN formats, else whatever failure it names, else quoted as is."""
    entry = tables.nccl_warning(detail)
    if entry is not None:
        return lines.entry_hit(entry, "NCCL's last error:", detail, {})
    hit = lines.classify(detail)
    if hit is not None:
        return hit
    return Hit(lines.GENERIC, "error", "low", f"NCCL failed; its last error: {lines.quote(detail, 200)}",
               {"message": lines.quote(detail), "kind": "NCCL last error", "error_class": "unknown"})


def _what_hit(message: str) -> Hit:
    hit = lines.classify(message)
    if hit is not None:
        return hit
    return Hit(lines.GENERIC, "error", "low", f"Native code failed: {lines.quote(message, 200)}",
               {"message": lines.quote(message), "kind": "C++ exception", "error_class": "unknown"})


# Lines in a row that are neither frames nor an exception before a traceback is given up: a terminal
# wraps a frame line into one or two such pieces, and another process's line may sit between two frames;
# more in a row means the traceback's end is not in this stream.
MAX_PIECES = 3


def _traceback_end(text: str, mark: Mark, rank: str) -> tuple[int, str, str] | None:
    """(line number, raw line, exception line) that ends the traceback whose header is ``mark``."""
    end, lineno, pieces = mark.end, mark.lineno, 0
    for _ in range(MAX_FRAMES):
        if end >= len(text):
            return None
        start = end + 1
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        lineno += 1
        raw = text[start:end]
        if raw[:1] in (" ", "\t"):
            pieces = 0
            continue  # a frame or its source line (no prefix starts with a blank)
        removed = prefixes.remove(raw)
        if rank and removed.rank and removed.rank != rank:
            continue  # another rank's line interleaved with this traceback
        rest = removed.rest.rstrip()
        if not rest.strip() or rest[:1].isspace() or rest.lstrip().startswith("^"):
            pieces = 0 if rest.strip() else pieces
            continue  # a frame, its source line, the caret line, or a blank
        if rest.startswith(TRACEBACK):
            return None  # another traceback began: this one was cut off
        if _is_exception_line(rest):
            return lineno, raw, rest
        pieces += 1  # a piece of a frame line that a terminal wrapped to the next line, or another record
        if pieces > MAX_PIECES:
            return None
    return None


def _is_exception_line(line: str) -> bool:
    """``Type: message``, or a bare type that is dotted, named like an exception or known to the tables."""
    found = _EXCEPTION_LINE.match(line)
    if found is None:
        return False
    exc_type = found.group("exc_type")
    if ":" in line or "." in exc_type:
        return True
    return exc_type.endswith(("Error", "Exception", "Exit", "Interrupt", "Iteration")) or tables.exception_entry(exc_type) is not None


def _uncatalogued_exception(line: str, raw: str) -> Hit | None:
    """The exception that ends a traceback, when no rule and no table reads its line."""
    found = _EXCEPTION_LINE.match(line)
    if found is None or scan_line(raw, source=""):
        return None
    exc_type, message = found.group("exc_type"), (found.group("message") or "").strip()
    if exc_type.endswith("Warning") or lines.carries_another(exc_type, message):
        return None
    said = lines.message_of(exc_type, message) if message else exc_type
    return Hit(lines.GENERIC, "error", "low",
               f"The process failed with {lines.quote(said, 200)} (an exception the taxonomies do not class)",
               {"exc_type": exc_type, "message": lines.quote(said), "kind": "exception", "error_class": "unknown"})


def read(text: str, marks: Iterable[Mark], *, source: str) -> list[Signal]:
    found: list[Signal] = []
    for mark in _located(text, marks):
        body = prefixes.split(mark.line)
        if body.body.startswith(TRACEBACK) or body.body.startswith("Original " + TRACEBACK):
            ended = _traceback_end(text, mark, body.rank)
            if ended is None:
                continue
            lineno, raw, line = ended
            hit = _uncatalogued_exception(line, raw)
            if hit is None:
                continue
        elif body.body.rstrip() == LAST_ERROR:
            following = _next_line(text, mark.end, mark.lineno)
            if following is None:
                continue
            lineno, raw = following
            detail = prefixes.split(raw).body
            if not detail:
                continue
            hit = _detail_hit(detail)
        elif body.body.startswith(WHAT):
            lineno, raw = mark.lineno, mark.line
            message = body.body[len(WHAT):].strip()
            if not message:
                continue
            hit = _what_hit(message)
        else:
            continue
        fields = dict(hit.fields)
        if body.rank:
            fields.setdefault("rank", body.rank)
        found.append(Signal(code=hit.code, severity=hit.severity, confidence=hit.confidence, title=hit.title,
                            line=trim(raw), source=source, lineno=lineno, fields=fields))
    return found
