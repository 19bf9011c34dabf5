"""Plain data for the signature catalogue: what a match produces (Signal) and what a rule looks like."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from playbooks import linear

SEVERITY_RANK = {"critical": 0, "error": 1, "warning": 2, "info": 3}
CONFIDENCE_RANK = {"high": 0, "medium": 1, "low": 2}
MAX_EVIDENCE_CHARS = 600

_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class Signal:
    """One known problem signature found in one line of text."""

    code: str  # a code from playbooks.codes.CODES
    severity: str  # critical|error|warning|info
    confidence: str  # high|medium|low
    title: str  # one specific line
    line: str  # the verbatim line, stripped and trimmed to 600 characters
    source: str  # caller-provided origin, e.g. "event pod/ns/x FailedScheduling"
    lineno: int | None = None
    fields: Mapping[str, str] = field(default_factory=lambda: _EMPTY, hash=False)

    @property
    def rank(self) -> tuple[int, int]:
        """Sort key: strongest first (lower is stronger)."""
        return SEVERITY_RANK[self.severity], CONFIDENCE_RANK[self.confidence]


@dataclass(frozen=True)
class Hit:
    """A match before it is bound to a line and a source."""

    code: str
    severity: str
    confidence: str
    title: str
    fields: dict[str, str]


@dataclass(frozen=True)
class Verdict:
    """What a rule's ``refine`` hook changes about a match; None fields keep the rule's value."""

    code: str | None = None
    severity: str | None = None
    confidence: str | None = None
    title: str | None = None
    fields: Mapping[str, str] = field(default_factory=lambda: _EMPTY)


KEEP = Verdict()
# refine(fields, text) -> Verdict to adjust, or None to drop the match.
Refine = Callable[[dict[str, str], str], "Verdict | None"]


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "?"


_OPTIONAL = linear.compile(r"\[([^\[\]]*)\]")
_NAMES = linear.compile(r"\{(\w+)\}")


def format_title(template: str, fields: Mapping[str, str]) -> str:
    """Fill ``{name}`` placeholders; a ``[...]`` part is dropped when a field inside it is missing."""
    pieces, last = [], 0
    for start, end, inner, names in _optional_parts(template):
        pieces += (template[last:start], inner if names <= fields.keys() else "")
        last = end
    if pieces:
        template = "".join(pieces) + template[last:]
    return template.format_map(_Blank(fields))


@lru_cache(maxsize=1024)  # rule titles, parsed once (a title built from a line's values is not kept long)
def _optional_parts(template: str) -> tuple[tuple[int, int, str, frozenset[str]], ...]:
    return tuple((m.start(), m.end(), m.group(1), frozenset(_NAMES.findall(m.group(1))))
                 for m in _OPTIONAL.finditer(template)) if "[" in template else ()


@dataclass(frozen=True)
class Rule:
    """A line signature: keywords gate it, ``pattern`` must match, ``extract`` adds optional fields.

    Keywords are case-sensitive substrings; any one of them lets the rule run. ``unless`` substrings
    veto it (a more specific rule owns those lines). Named groups of ``pattern`` and of every
    ``extract`` pattern become fields; a group that did not take part is left out.
    """

    name: str
    code: str
    severity: str
    confidence: str
    title: str
    keywords: tuple[str, ...]
    pattern: linear.Pattern | None = None
    extract: tuple[linear.Pattern, ...] = ()
    unless: tuple[str, ...] = ()
    refine: Refine | None = None
    fields_doc: str = ""
    example: str = ""

    def match(self, text: str, base: Mapping[str, str] | None = None) -> Hit | None:
        if any(veto in text for veto in self.unless):
            return None
        fields: dict[str, str] = dict(base) if base else {}
        if self.pattern is not None:
            found = self.pattern.search(text)
            if found is None:
                return None
            fields.update(_groups(found))
        for extractor in self.extract:
            found = extractor.search(text)
            if found is not None:
                fields.update(_groups(found))
        return self.judge(fields, text)

    def judge(self, fields: dict[str, str], text: str) -> Hit | None:
        verdict = self.refine(fields, text) if self.refine else KEEP
        if verdict is None:
            return None
        fields.update(verdict.fields)
        return Hit(
            code=verdict.code or self.code,
            severity=verdict.severity or self.severity,
            confidence=verdict.confidence or self.confidence,
            title=format_title(verdict.title or self.title, fields),
            fields=fields,
        )


def _groups(found: linear.Match) -> dict[str, str]:
    return {k: v.strip() for k, v in found.groupdict().items() if v is not None}


def trim(line: str, limit: int = MAX_EVIDENCE_CHARS) -> str:
    line = line.strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"
