"""Private keys in PEM (RFC 7468) and PuTTY form, whole or cut into separate lines.

A key reaches us three ways: as a block over several lines of one text (a pasted file, a log that
printed it), on one line with its line breaks escaped (``"-----BEGIN …-----\\nMIIE…"`` in JSON), and
one line at a time (each evidence line a line of the key). ``Block`` handles the first across the
lines of a text; ``spans`` the second and third, line by line.
"""
from __future__ import annotations

from collections.abc import Iterator

import re2

from playbooks.redaction.plugins import plugin
from playbooks.redaction.spans import Span

# The PrivateKeyDetector's list lacks PKCS#8 "ENCRYPTED PRIVATE KEY" (RFC 5958), so a PEM marker of
# any key type is recognised here; the plugin's list is still asked, for the non-PEM forms it knows
# (PuTTY files, SSH2 "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----").
_BEGIN = re2.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_END = re2.compile(r"-{4,5} ?END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}")
# A PEM body line is base64 wrapped at 64 characters (RFC 7468 section 2), the last line shorter (a
# fresh RSA 2048 key ends on a line of about 52, an EC P-256 key on one of 36). Own rules, because
# detect-secrets' PrivateKeyDetector and gitleaks' private-key rule both need the BEGIN marker, and an
# evidence line or a pasted tail quotes a key without it. Alone on a line, a base64 line of 40 to 64
# characters is masked: all 64, or shorter with upper, lower and digits, as random base64 nearly always
# has and names and words do not; pure hex (a sha256 digest, a commit) is not base64 and stays.
_BODY_LINE = re2.compile(r"^\s*[A-Za-z0-9+/]{40,64}={0,2}\s*$")
# In a text of several lines a body line of any length counts beside a marker or a full body line.
_SHORT_BODY_LINE = re2.compile(r"^\s*[A-Za-z0-9+/]{4,64}={0,2}\s*$")
_HEX = frozenset("0123456789abcdefABCDEF")
_MARKER = "PRIVATE KEY"
_GATES = ("PRIVATE KEY", "PuTTY-User-Key-File")


def key_starts(line: str) -> int | None:
    """Where key material starts on this line (after its BEGIN marker), or None."""
    if not any(gate in line for gate in _GATES):
        return None
    match = _BEGIN.search(line)
    if match is not None:
        return match.end()
    for regex in plugin("private_key", "PrivateKeyDetector").denylist:
        found = regex.search(line)
        if found is not None:
            end = found.end()
            while end < len(line) and line[end] in " -:":
                end += 1
            return end
    return None


def ends(line: str, start: int = 0) -> int | None:
    """Where the END marker of a key starts on this line, or None."""
    match = _END.search(line, start) if "END" in line else None
    return match.start() if match else None


def spans(line: str) -> Iterator[Span]:
    """Key material on this one line: after a BEGIN marker (up to its END marker, the end of a JSON
    string, or the end of the line) or a line that is a PEM body line by itself."""
    start = key_starts(line)
    if start is not None:
        end = ends(line, start)
        if end is None:
            quote = line.find('"', start)
            end = quote if quote >= 0 else len(line)
        yield start, end
    elif body_line(line):
        yield 0, len(line)


def body_line(line: str) -> bool:
    """A line that is a PEM body line by itself (above)."""
    if len(line) < 40 or not _BODY_LINE.match(line):
        return False
    bare = line.strip().rstrip("=")
    if set(bare) <= _HEX or _a_path(bare):
        return False
    return len(bare) == 64 or (any(c.isupper() for c in bare) and any(c.islower() for c in bare)
                               and any(c.isdigit() for c in bare))


def lines_by_context(lines: list[str]) -> set[int]:
    """The lines of a multi-line text that are key material by their neighbours, not by themselves: a
    base64 line (the short last line of a key, ``Ks14IReLcYgADhoXk56ZzXI=``) next to a body line or
    a PRIVATE KEY marker, and, where a marker stands anywhere in the text, every body line. Without
    the BEGIN line ``Block`` cannot know them: a quoted tail ends on the END marker, not starts."""
    marked = [_MARKER in line for line in lines]
    full = [not m and len(line) <= 80 and body_line(line) for line, m in zip(lines, marked)]
    out = {i for i, is_full in enumerate(full) if is_full and any(marked)}
    for i, line in enumerate(lines):
        if len(line) > 80 or marked[i] or not _SHORT_BODY_LINE.match(line) or _a_word(line):
            continue
        near = [j for j in (i - 1, i + 1) if 0 <= j < len(lines)]
        if any(full[j] or marked[j] for j in near):
            out.add(i)
    return out


def _a_path(bare: str) -> bool:
    """A path such as ``checkpoints/Llama3Run7/step12000/optimizer``: two lower-case words between its
    slashes, which random base64 of this length nearly never has."""
    return sum(1 for part in bare.split("/") if len(part) >= 3 and part.isalpha() and part.islower()) >= 2


def _a_word(line: str) -> bool:
    """A word of one case ("Done", "OK", "WARNING"): never key material, whatever stands next to it."""
    bare = line.strip()
    return bare.isalpha() and (bare[1:].islower() or bare.isupper())


class Block:
    """Across the lines of one text: whether we are inside a key block, and what to mask of a line."""

    def __init__(self) -> None:
        self.inside = False

    def masked(self, line: str) -> Span | None:
        """The part of ``line`` that is key material because an earlier line opened a block."""
        if self.inside:
            end = ends(line)
            if end is not None:
                self.inside = False
                return (0, end) if line[:end].strip() else None
            return (0, len(line)) if line.strip() else None
        start = key_starts(line)
        if start is not None and ends(line, start) is None and '"' not in line[start:]:
            self.inside = True  # no END marker and not one escaped JSON string: the key goes on below
        return None
