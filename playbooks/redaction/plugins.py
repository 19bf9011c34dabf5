"""Yelp's detect-secrets plugins, used one line at a time.

The plugins are imported on first use only: detect-secrets pulls in ``requests`` at import, about a
tenth of a second that a ``gpubot explain`` with nothing secret-looking in its findings never pays.
Each family module gates its plugin behind a cheap substring check for the same reason.

We call a plugin's ``analyze_string`` (its regexes), not ``analyze_line``: ``analyze_line`` may try to
verify what it found against the live service (Slack ``auth.test``, AWS STS) when the verification
filter is enabled in detect-secrets' global settings, and a secret must never leave this process.
"""
from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from importlib import import_module
from typing import Any

from playbooks.redaction.spans import Span

# The plugins' own regexes run on Python's ``re``; a few of them (the keyword plugin's greedy value)
# cost more than linear time on a very long line with many keywords. A long line is scanned in
# overlapping windows so each regex sees a bounded input; a value longer than the overlap is still
# caught by the high-entropy family and the key/value scanner, which run on RE2 over the whole line.
WINDOW = 2048
OVERLAP = 256


@cache
def plugin(module: str, name: str, **options: Any) -> Any:
    """One shared instance of ``detect_secrets.plugins.<module>.<name>``."""
    return getattr(plugin_module(module), name)(**options)


@cache
def plugin_module(module: str) -> Any:
    """``detect_secrets.plugins.<module>``, for the module-level regexes and word lists it publishes."""
    return import_module(f"detect_secrets.plugins.{module}")


def windows(line: str) -> Iterator[tuple[int, str]]:
    """(offset, piece) covering ``line``, each piece at most WINDOW characters."""
    if len(line) <= WINDOW:
        yield 0, line
        return
    step = WINDOW - OVERLAP
    for start in range(0, len(line), step):
        yield start, line[start:start + WINDOW]
        if start + WINDOW >= len(line):
            return


def found(module: str, name: str, line: str, *, whole: bool = False) -> Iterator[Span]:
    """Where a regex plugin's secrets sit in ``line``: the spans of its own ``denylist`` matches (a
    regex's groups where it has them, as the plugin reports them), kept when the plugin's
    ``analyze_string`` reports that value too (the JWT plugin, for one, drops what does not decode).
    ``whole``: mask the whole match even where the regex has a group; the GitHub and GitLab plugins
    group only the token's prefix, so they report "ghp", not the token."""
    detector = plugin(module, name)
    for offset, piece in windows(line):
        reported = set(detector.analyze_string(piece))
        if not reported:
            continue
        for regex in detector.denylist:
            for match in regex.finditer(piece):
                groups = [g for g in range(1, (regex.groups or 0) + 1) if match.group(g)] or [0]
                for g in groups:
                    if match.group(g) in reported:
                        yield (offset + match.start(0 if whole else g), offset + match.end(0 if whole else g))
