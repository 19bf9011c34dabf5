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
# A PEM body line is base64 wrapped at 64 characters (RFC 7468 section 2). Alone on a line it is
# masked even without its markers; pure hex of that length (a sha256 digest) is not base64 and stays.
_BODY_LINE = re2.compile(r"^\s*[A-Za-z0-9+/]{64}\s*$")
_HEX = frozenset("0123456789abcdefABCDEF")
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
    elif len(line) >= 64 and _BODY_LINE.match(line) and not set(line.strip()) <= _HEX:
        yield 0, len(line)


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
