"""Patterns for text gpubot does not write (logs, events, pastes, alerts), compiled for RE2.

A backtracking engine (Python's ``re``) can take time quadratic or worse in the length of a line for
an ordinary-looking pattern: ``\\w+ \\S+ is suspended`` against 64 KB of letters took seconds, so one
pasted line could stall every channel's answer. RE2 (google/re2, the ``google-re2`` wheel) runs in time
linear in the input whatever the pattern, because it has no backtracking; it therefore has no
lookaround and no backreferences, and a pattern using them fails to compile here (rewrite it, see
playbooks/scope.py and playbooks/signatures/scheduling.py for two rewrites).

``compile(pattern, flags)`` takes ``re`` syntax and flags and returns an RE2 pattern with the ``re``
API the code uses (search, match, fullmatch, finditer, findall, split, sub with a callable or a
template, named groups). Differences from ``re`` kept on purpose:

- ``\\d``, ``\\w`` and ``\\b`` are ASCII (RE2's): a look-alike digit or letter from another script is not
  part of a number or a name, which is what Kubernetes names and log numbers are anyway.
- ``\\s`` keeps Python's meaning (every character ``str.isspace`` accepts, a pasted no-break space
  included): it is rewritten to that class, since RE2's ``\\s`` is ``[\\t\\n\\f\\r ]`` only.
- ``$`` without ``re.M`` matches only at the very end (Python also matches before a final newline);
  lines are stripped before they are scanned.
- ``\\Z`` is rewritten to RE2's ``\\z``, ``\\uXXXX`` to ``\\x{XXXX}``.

Source for the syntax: https://github.com/google/re2/wiki/Syntax; the Python wrapper:
https://github.com/google/re2/tree/main/python.
"""
from __future__ import annotations

import re
import weakref

import re2

# str.isspace, which is what Python's \s matches in a str pattern (Objects/unicodetype_db.h).
_SPACE_RANGES = r"\t-\r\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}"
_INLINE_FLAGS = ((re.IGNORECASE, "i"), (re.DOTALL, "s"), (re.MULTILINE, "m"))
# re.ASCII is what RE2 does anyway; re.UNICODE is the default flag of every str pattern.
_IGNORED_FLAGS = re.ASCII | re.UNICODE
_NULL_SPAN = (-1, -1)
# Counted repetitions of a few hundred ([^;{}]{1,1000}) make programs of 10,000+ instructions whose
# lazily built DFA outgrows RE2's default 8 MiB budget on a long run of matching text; RE2 then falls
# back to its NFA, still linear but 700x slower (0.16 s for 64 KB instead of 0.2 ms). Those few get
# a larger budget, spent only when such text arrives.
_LARGE_PROGRAM = 8000
_LARGE_PROGRAM_MEM = 32 << 20
_COMPILED: weakref.WeakSet[Pattern] = weakref.WeakSet()


class Match(re2._Match):
    """RE2's match, whose start/end/span also take a group's name, as re's do."""

    __slots__ = ()

    def start(self, group=0):
        return super().start(self._index(group))

    def end(self, group=0):
        return super().end(self._index(group))

    def span(self, group=0):
        return super().span(self._index(group))

    def groupdict(self, default=None):
        # The wrapper's looks each group up by name again; a scan reads one per rule and line.
        spans, text = self._spans, self._text
        return {name: default if spans[index] == _NULL_SPAN else text[spans[index][0]:spans[index][1]]
                for name, index in self._regexp.groupindex.items()}

    def _index(self, group):
        if isinstance(group, str):
            if group not in self._regexp.groupindex:
                raise IndexError(f"no such group: {group}")
            return self._regexp.groupindex[group]
        return group


class Pattern(re2._Regexp):
    """An RE2 pattern that also answers ``.pattern`` and ``.flags`` as ``re`` would.

    Matching ASCII text (nearly every log line) skips the wrapper's byte-to-character offset
    translation, which costs more than the match itself on a short line."""

    __slots__ = ("_source", "_flags", "_groups", "_groupindex", "__weakref__")

    def __init__(self, source: str, flags: int, translated: str, *, max_mem: int = re2.Options().max_mem) -> None:
        options = re2.Options()
        options.log_errors = False
        options.max_mem = max_mem
        super().__init__(translated, options)
        self._source, self._flags = source, flags
        self._groups = self._regexp.NumberOfCapturingGroups()
        self._groupindex = {name.decode(): index for name, index in self._regexp.NamedCapturingGroups()}

    def __reduce__(self):
        return compile, (self._source, self._flags)

    def __repr__(self) -> str:
        return f"linear.compile({self._source!r}, {self._flags})"

    @property
    def pattern(self) -> str:
        return self._source

    @property
    def flags(self) -> int:
        return self._flags

    @property
    def groups(self) -> int:
        return self._groups

    @property
    def groupindex(self) -> dict[str, int]:
        return self._groupindex

    def _first(self, anchor, text, pos, endpos):
        if not (isinstance(text, str) and text.isascii()):
            return next(self._matches(anchor, text, pos, endpos), None)
        size = len(text)
        pos = 0 if pos is None else max(0, min(pos, size))
        endpos = size if endpos is None else max(0, min(endpos, size))
        if pos > endpos:
            return None
        spans = self._regexp.Match(anchor, text.encode("ascii"), pos, endpos)
        if spans[0] == _NULL_SPAN:
            return None
        return Match(self, text, pos, endpos, spans)

    def _matches(self, anchor, text, pos, endpos):
        for found in self._match(anchor, text, pos, endpos):
            yield Match(self, found.string, found.pos, found.endpos, found._spans)

    def finditer(self, text, pos=None, endpos=None):
        if not (isinstance(text, str) and text.isascii()):
            return self._matches(re2._Anchor.UNANCHORED, text, pos, endpos)
        return self._ascii_matches(text, pos, endpos)

    def _ascii_matches(self, text, pos, endpos):
        # The wrapper's loop (re2/__init__.py _match) without offset translation: ASCII bytes are characters.
        size = len(text)
        pos = 0 if pos is None else max(0, min(pos, size))
        endpos = size if endpos is None else max(0, min(endpos, size))
        if pos > endpos:
            return
        data, at = text.encode("ascii"), pos
        while True:
            spans = self._regexp.Match(re2._Anchor.UNANCHORED, data, at, endpos)
            if spans[0] == _NULL_SPAN:
                return
            yield Match(self, text, pos, endpos, spans)
            if at == endpos:
                return
            at = at + 1 if at == spans[0][1] else spans[0][1]

    def search(self, text, pos=None, endpos=None):
        return self._first(re2._Anchor.UNANCHORED, text, pos, endpos)

    def match(self, text, pos=None, endpos=None):
        return self._first(re2._Anchor.ANCHOR_START, text, pos, endpos)

    def fullmatch(self, text, pos=None, endpos=None):
        return self._first(re2._Anchor.ANCHOR_BOTH, text, pos, endpos)

    def subn(self, repl, text, count=0):
        # The wrapper expands a template through unicode_escape, which garbles non-ASCII text: expand
        # it the way re does, through re's own template parser.
        if isinstance(repl, str):
            repl = _template(repl)
        return super().subn(repl, text, count)

    def sub(self, repl, text, count=0):
        return self.subn(repl, text, count)[0]


def _template(repl: str):
    if "\\" not in repl:
        return lambda _match: repl
    return lambda match: _expand(repl, match)


def _expand(repl: str, match) -> str:
    # re parses the template: a stand-in re match holding the same groups' text expands it exactly
    # as re.sub would (\\1, \\g<name>, \\n ...).
    names = {index: name for name, index in match.re.groupindex.items()}
    parts, text = [], []
    for index in range(1, match.re.groups + 1):
        value = match.group(index)
        label = f"?P<{names[index]}>" if index in names else ""
        parts.append(f"({label}{re.escape(value)})" if value is not None else f"(?:({label}\\x00))?")
        text.append(value or "")
    return re.fullmatch("".join(parts), "".join(text)).expand(repl)


def translate(pattern: str) -> str:
    """``re`` syntax to RE2 syntax (see the module docstring for what changes)."""
    out: list[str] = []
    i, size, in_class = 0, len(pattern), False
    while i < size:
        ch = pattern[i]
        if ch == "\\" and i + 1 < size:
            nxt = pattern[i + 1]
            if nxt == "s":
                out.append(_SPACE_RANGES if in_class else f"[{_SPACE_RANGES}]")
            elif nxt == "S" and not in_class:
                out.append(f"[^{_SPACE_RANGES}]")
            elif nxt == "S":
                raise ValueError(f"\\S inside a character class has no RE2 spelling here: {pattern!r}")
            elif nxt == "Z" and not in_class:
                out.append(r"\z")
            elif nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", pattern[i + 2 : i + 6]):
                out.append(f"\\x{{{pattern[i + 2 : i + 6]}}}")
                i += 4
            else:
                out.append(ch + nxt)
            i += 2
            continue
        if not in_class and ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):  # a ']' first in a class is a literal, in both engines
                out.append("\\]")
                i += 1
            continue
        if in_class and ch == "]":
            in_class = False
        out.append(ch)
        i += 1
    return "".join(out)


def compile(pattern: str, flags: int = 0) -> Pattern:  # noqa: A001 - the re API's name, on purpose
    """An RE2 pattern for ``re`` syntax; ValueError for a pattern RE2 cannot run (lookaround,
    backreferences, a repetition over 1000) or a flag it has no spelling for (re.VERBOSE)."""
    unknown = flags & ~(_IGNORED_FLAGS | sum(flag for flag, _ in _INLINE_FLAGS))
    if unknown:
        raise ValueError(f"flags {re.RegexFlag(unknown)!r} have no RE2 spelling: {pattern!r}")
    inline = "".join(letter for flag, letter in _INLINE_FLAGS if flags & flag)
    translated = (f"(?{inline})" if inline else "") + translate(pattern)
    try:
        compiled = Pattern(pattern, flags, translated)
    except re2.error as error:
        raise ValueError(f"RE2 cannot compile {pattern!r} ({error}): rewrite it without lookaround or backreferences") from None
    if compiled.programsize > _LARGE_PROGRAM:
        compiled = Pattern(pattern, flags, translated, max_mem=_LARGE_PROGRAM_MEM)
    _COMPILED.add(compiled)
    return compiled


def compiled() -> list[Pattern]:
    """Every pattern compiled here and still in use (the fuzz test feeds each pathological lines)."""
    return list(_COMPILED)
