"""What only the lines around a failure say: the detail on the line after ``Last error:`` or ``what():``,
and a message that a terminal or a form wrapped over several lines.

PyTorch prints NCCL's own reason for a failed call on the line after ``Last error:``
(pytorch/pytorch torch/csrc/distributed/c10d/NCCLUtils.cpp ``getNcclErrorDetailStr``: ``"\\nLast error:\\n" +
ncclGetLastError(comm)``), so with NCCL_DEBUG unset that line is the only place the cause appears; the C++
runtime prints an uncaught exception's message on the line after ``terminate called after throwing an
instance of '...'`` (libstdc++ ``__gnu_cxx::__verbose_terminate_handler``: ``  what():  %s``).

Both are read here from offsets the prefilter gives, so a 50 MB log is never split into lines for them.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from playbooks.failures import lines, prefixes, tables
from playbooks.signatures.model import Hit, Signal, trim

LAST_ERROR = "Last error:"
WHAT = "what():"
MARKERS = (LAST_ERROR, WHAT)
MAX_MARKS = 200  # detail lines read per text: the first ones name the cause, the rest repeat it


@dataclass(frozen=True)
class Mark:
    lineno: int
    line: str
    end: int  # where the line ends in the text (the index of its newline)


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


def read(text: str, marks: Iterable[Mark], *, source: str) -> list[Signal]:
    found: list[Signal] = []
    for mark in marks:
        body = prefixes.split(mark.line)
        if body.body.rstrip() == LAST_ERROR:
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
