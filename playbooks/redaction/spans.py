"""Where a secret sits in a line, and how a line reads once those places are masked.

Every detector reports spans (start, end) of the original line instead of rewriting it. The spans of
all detectors are merged and masked once, so no detector ever sees another's output and a value that
runs over an inner ``KEY=`` (``config: password=x``) cannot hide that key from the others.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

import re2

MASK = "[REDACTED]"

Span = tuple[int, int]

# Values that say nothing secret ("token: null", "password: <none>", "auth=true").
_HARMLESS = frozenset({"null", "none", "nil", "true", "false", '""', "''", "<none>", "[redacted]", "***", "-",
                       "<redacted>",
                       # Prose after a key's name ("no key HF_TOKEN: the container cannot be created",
                       # "API_KEY: not set"): a function word is never a credential.
                       "the", "a", "an", "is", "are", "was", "not", "no", "missing", "required", "unset", "empty",
                       "invalid", "expired", "denied", "unknown"})


def apply(line: str, spans: Iterable[Span]) -> str:
    """``line`` with every span replaced by one MASK; overlapping and touching spans become one."""
    merged = [_whole_escapes(line, span) for span in _merge(spans)]
    if not merged:
        return line
    out, at = [], 0
    for start, end in merged:
        out.append(line[at:start])
        out.append(MASK)
        at = end
    out.append(line[at:])
    return "".join(out)


def _whole_escapes(line: str, span: Span) -> Span:
    """``span`` adjusted so it neither starts inside a backslash escape (``\\nKEY…``: the backslash goes
    with it) nor ends on a lone backslash (which would escape the character after the mask): masked
    text inside a JSON string stays valid JSON."""
    start, end = span
    if start > 0 and _odd_backslashes(line, start):
        start -= 1
    while end > start and _odd_backslashes(line, end):
        end -= 1
    return start, end


def _odd_backslashes(line: str, at: int) -> bool:
    """Whether an odd run of backslashes ends just before ``at``."""
    count = 0
    while at - count > 0 and line[at - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _merge(spans: Iterable[Span]) -> Iterator[Span]:
    current: Span | None = None
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if current and start <= current[1]:
            current = (current[0], max(current[1], end))
            continue
        if current:
            yield current
        current = (start, end)
    if current:
        yield current


def harmless(value: str) -> bool:
    """A value that cannot be a secret: a placeholder, a boolean, a short number, a template, a mask.
    Only the head of a long value is read: every harmless value is short, and a line of thousands of
    keys must not cost a copy of its tail per key."""
    head = value[:PLACEHOLDER_MAX + 1]
    bare = head.strip("\"'\\` ")
    if bare.startswith(("${", "{{", "$(", "<")) or (bare.startswith("$") and bare[1:].replace("_", "").isalnum()):
        return True  # a reference to the secret, not the secret: ${DB_PASSWORD}, {{ .Values.token }}, $TOKEN
    if len(head) > PLACEHOLDER_MAX:
        return False
    if not bare or bare.lower() in _HARMLESS or MASK in bare:
        return True
    digits = bare.replace(".", "", 1).lstrip("-")
    return digits.isdigit() and len(digits) <= 6  # counts, ports, sizes; longer numbers may be PINs or keys


PLACEHOLDER_MAX = 80


_TOKEN_TAIL = re2.compile(r"[A-Za-z0-9._~+/=-]*")


def to_token_ends(line: str, spans: Iterable[Span]) -> Iterator[Span]:
    """Each span stretched to the end of the token it starts: some plugins report only a secret's head
    (the JWT plugin's lazy tail stops before the signature). A span inside one already stretched is
    dropped, so a line of thousands of heads is read once."""
    reach = -1
    for start, end in sorted(spans):
        if start < reach:
            continue
        reach = _TOKEN_TAIL.match(line, end).end()
        yield start, reach
