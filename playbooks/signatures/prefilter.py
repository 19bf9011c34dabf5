"""The lines of a text that contain at least one of a set of literal words, found in one pass.

Explaining a log is mostly skipping it: in a 50 MB training log a few per cent of lines can match a
signature. The catalogue's rules are gated by literal keywords, so only lines holding one of them need
a closer look. Two engines give the same lines:

- Hyperscan (Intel's multi-pattern engine, the ``hyperscan`` wheel) scans the whole buffer for every
  word at once, at grep's speed. Chosen by measurement (``tests/benchmarks/bench_explain.py``): on a
  50 MB log it found the candidate lines in about half the time ``grep -E`` took with the same words,
  where Aho-Corasick in Rust (``ahocorasick-rs``) took 6x, ``google-re2`` and ``pyahocorasick`` 13x and
  Python's ``re`` alternation 86x.
- A pure-Python fallback checks each line for a few short anchors that together cover every word, then
  for the words of the anchors present: used for small texts (where importing Hyperscan would cost
  more than it saves) and wherever the wheel is not installed.
"""
from __future__ import annotations

import heapq
import logging
import re
from collections.abc import Iterable, Iterator

log = logging.getLogger(__name__)
# Below this size the pure-Python scan finishes before Hyperscan would have been imported.
ENGINE_FROM_CHARS = 256 * 1024


class Prefilter:
    """``lines(text)`` yields ``(lineno, line, words)`` for each line holding one of ``words``, numbered
    from 1, with the words found in it (each once, in no particular order)."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = tuple(sorted(set(w for w in words if w)))
        if not self.words or any("\n" in w or "\r" in w for w in self.words):
            raise ValueError("prefilter words must be non-empty and within one line")
        self._anchors = anchors(self.words)
        self._database = None  # compiled on first use: None not tried yet, False unavailable

    def lines(self, text: str) -> Iterator[tuple[int, str, tuple[str, ...]]]:
        text = normalise(text)
        database = self._engine() if len(text) >= ENGINE_FROM_CHARS else None
        if database:
            return _scan_buffer(database, self.words, text)
        return self._scan_lines(text)

    def line_count(self, text: str) -> int:
        if not text:
            return 0
        breaks = text.count("\n") or (text.count("\r") if "\r" in text else 0)
        return breaks + (0 if text.endswith(("\n", "\r")) else 1)

    def _scan_lines(self, text: str) -> Iterator[tuple[int, str, tuple[str, ...]]]:
        checks = self._anchors
        start, size, find = 0, len(text), text.find
        lineno = 0
        while start < size:
            end = find("\n", start)
            if end < 0:
                end = size
            lineno += 1
            line = text[start:end]
            present = [w for anchor, words in checks if anchor in line for w in words if w in line]
            if present:
                yield lineno, line, tuple(present)
            start = end + 1

    def _engine(self):
        if self._database is None:
            self._database = _compile(self.words) or False
        return self._database


def _compile(words: tuple[str, ...]):
    try:
        import hyperscan
    except ImportError:
        log.debug("hyperscan is not installed: lines are prefiltered in Python")
        return None
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=[re.escape(w).encode("utf-8") for w in words], ids=list(range(len(words))),
                     elements=len(words), flags=[0] * len(words))
    return database


def normalise(text: str) -> str:
    """Classic Mac line ends (\r alone) as newlines, as iter_lines reads them."""
    if "\n" not in text and "\r" in text:
        return text.replace("\r", "\n")
    return text


def _scan_buffer(database, words: tuple[str, ...], text: str) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    data = text.encode("utf-8", "surrogatepass")
    ends: list[int] = []  # where the first match of each candidate line ends
    found: list[set[int]] = []  # the words matched in that line
    line_end = -1

    def on_match(word: int, _start: int, end: int, _flags: int, _context: object) -> None:
        nonlocal line_end
        # Matches come in order of where they end, so a line's matches are consecutive.
        if end > line_end:
            stop = data.find(b"\n", end)
            line_end = len(data) if stop < 0 else stop
            ends.append(end)
            found.append({word})
        else:
            found[-1].add(word)

    database.scan(data, match_event_handler=on_match)
    lineno, counted_to = 1, 0
    for end, ids in zip(ends, found):
        start = data.rfind(b"\n", 0, end) + 1
        stop = data.find(b"\n", end)
        lineno += data.count(b"\n", counted_to, start)
        counted_to = start
        line = data[start : len(data) if stop < 0 else stop].decode("utf-8", "surrogatepass")
        yield lineno, line, tuple(words[i] for i in ids)


def anchors(words: tuple[str, ...], size: int = 5) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A few short substrings that together occur in every word (greedy set cover).

    Checking a few dozen anchors per line instead of a couple of hundred words is the whole test for
    most lines; only the words of an anchor that occurs are then checked."""
    candidates: dict[str, set[str]] = {}
    for word in words:
        parts = [word] if len(word) <= size else [word[i : i + size] for i in range(len(word) - size + 1)]
        for part in parts:
            candidates.setdefault(part, set()).add(word)
    # Lazy greedy: a part's count of uncovered words only falls, so a stale count from the heap is an
    # upper bound and is refreshed only when it reaches the top (start-up time of `gpubot explain`).
    order = {part: i for i, part in enumerate(candidates)}
    heap = [(-len(covered), order[part], part) for part, covered in candidates.items()]
    heapq.heapify(heap)
    left, chosen = set(words), []
    while left:
        stale, rank, part = heapq.heappop(heap)
        fresh = len(candidates[part] & left)
        if fresh and (not heap or -fresh <= heap[0][0]):
            covered = candidates[part] & left
            chosen.append((part, tuple(w for w in words if w in covered)))
            left -= covered
        elif fresh:
            heapq.heappush(heap, (-fresh, rank, part))
    return tuple(chosen)
