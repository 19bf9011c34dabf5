"""Random-looking strings with no name or shape to know them by: detect-secrets' high-entropy plugins.

The plugins' defaults suit source code, where they look only inside quotes. Log lines quote little, so
we look at every base64-charset token, with limits chosen so the evidence that logs are made of
stays readable (measured over the project's logs and cluster objects: tests/playbooks/test_redaction_families.py):

- Base64: tokens of at least 24 characters holding an upper-case letter, a lower-case letter and a
  digit, not shaped like a path, with Shannon entropy above the plugin's default 4.5 bits. A random
  key of 40 characters scores about 5 and is caught 98 times in 100, of 48 characters 9,997 in 10,000;
  one of 24 cannot reach 4.5 (at most log2(24) = 4.58, typically 4.2) and is left to the name and
  shape families, as detect-secrets itself does. Kubernetes uids, image digests and
  instance ids are hex (at most 4 bits per character), so they cannot pass; names and paths lack
  the three character classes or the entropy. A random 40-character key scores about 5.
- Hex: only inside quotes (the plugin's own mode) and at least 32 characters, entropy above the
  default 3.0, and never a 40- or 64-character value after a digest or commit word: bare hex in a log
  is a digest, a commit, a trace or a bus id far more often than a key, and a hex key next to its name
  (WANDB_API_KEY=…) is caught by the key/value family.
"""
from __future__ import annotations

import math
from collections.abc import Iterator

import re2

from playbooks.redaction.plugins import plugin
from playbooks.redaction.spans import Span

BASE64_LIMIT = 4.5
BASE64_MIN = 24
# Shannon entropy is at most log2(distinct characters): under 23 distinct, 4.5 bits cannot be reached.
_DISTINCT_FOR_LIMIT = math.ceil(2 ** BASE64_LIMIT)
HEX_LIMIT = 3.0
HEX_MIN = 32

_BASE64_TOKEN = re2.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")  # "=" only as padding: KEY=value is two tokens
_QUOTED_HEX = re2.compile(r"""["']([0-9a-fA-F]{32,})["']""")
_DIGEST_WORDS = ("sha", "digest", "commit", "hash", "checksum", "etag", "revision", "trace", "span", "md5")


def spans(line: str, found: list[Span]) -> Iterator[Span]:
    """Random-looking tokens of ``line`` that no span in ``found`` (what the other detectors found)
    touches: where a detector that knows the secret's shape has spoken, its span stands alone."""
    for start, end in _candidates(line):
        if not any(start < b and a < end for a, b in found):
            yield start, end


def _candidates(line: str) -> Iterator[Span]:
    if len(line) < BASE64_MIN:
        return
    for match in _BASE64_TOKEN.finditer(line):
        token = match.group(0)
        if _mixed(token) and not _path(token) and _base64_secret(token):
            yield match.span()
    if '"' in line or "'" in line:
        for match in _QUOTED_HEX.finditer(line):
            if _hex_secret(match.group(1), line[:match.start()]):
                yield match.span(1)


def _mixed(token: str) -> bool:
    """Upper and lower case and a digit: what random base64 of this length nearly always has, and what
    words, names and paths nearly never do all at once."""
    return (any(c.isdigit() for c in token) and any(c.islower() for c in token)
            and any(c.isupper() for c in token))


def _path(token: str) -> bool:
    """A file or URL path (``cache/huggingface/hub/models--x/snapshots/<sha>``): two segments or more
    that are lower-case words, and at least half of its segments lacking one of the three character
    classes. A random key split at its slashes has random segments: about one in ten thousand passes."""
    segments = token.split("/")
    words = sum(1 for s in segments if len(s) >= 3 and s.isalpha() and s.islower())
    return words >= 2 and 2 * sum(1 for s in segments if not _mixed(s)) >= len(segments)


def _base64_secret(token: str) -> bool:
    if len(set(token)) < _DISTINCT_FOR_LIMIT:
        return False  # cannot pass the limit (below); decided without loading detect-secrets
    heuristic = _heuristics()
    if heuristic.is_potential_uuid(token) or heuristic.is_sequential_string(token):
        return False
    detector = plugin("high_entropy_strings", "Base64HighEntropyString", limit=BASE64_LIMIT)
    return detector.calculate_shannon_entropy(token) > detector.entropy_limit


def _hex_secret(token: str, before: str) -> bool:
    if len(token) in (40, 64) and any(word in before[-40:].lower() for word in _DIGEST_WORDS):
        return False
    detector = plugin("high_entropy_strings", "HexHighEntropyString", limit=HEX_LIMIT)
    return detector.calculate_shannon_entropy(token) > detector.entropy_limit


def _heuristics():
    """detect-secrets' false-positive filters (uuids, keyboard sequences)."""
    from detect_secrets.filters import heuristic
    return heuristic
