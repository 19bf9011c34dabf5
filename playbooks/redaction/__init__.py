"""Redaction: the detectors that find secrets in gathered text, one small module per kind of secret.

Shaped like Yelp's detect-secrets, whose plugins do most of the finding: ``cloud`` (AWS, Azure, GCP),
``chat`` (Slack, GitHub, GitLab), ``tokens`` (JWTs and vendor API keys), ``private_keys`` (PEM and
PuTTY), ``urls`` (credentials in URLs), ``keywords`` (secrets beside a secret-sounding name),
``docker`` (registry credentials in base64) and ``entropy`` (random-looking strings). Beside them,
``gitleaks`` runs gitleaks' maintained rule set (generated into data/gitleaks.json) for the vendor
token formats no plugin knows. Rules of our own (``logins``, and a few in the modules above) are
kept only where neither covers a form; each says why where it is defined.

Every detector reads the original line and reports spans; the spans are merged and masked once
(``spans.apply``), so no detector's output can hide a secret from another. The entropy family goes
last and leaves alone a token another detector has already placed. Each detector gates its
work behind a cheap substring test, and lines are cached, because the same evidence lines recur.
Our own patterns run on RE2 (linear time); the plugins' ``re`` patterns see bounded windows of a line
(``plugins.windows``).
"""
from __future__ import annotations

from functools import lru_cache

from playbooks.redaction import chat, cloud, docker, entropy, gitleaks, keywords, logins, private_keys, tokens, urls
from playbooks.redaction.spans import MASK, apply

__all__ = ["MASK", "redact_text"]

DETECTORS = (private_keys, cloud, chat, tokens, gitleaks, urls, keywords, logins, docker)


def redact_text(text: str) -> str:
    """``text`` with every secret value replaced by MASK; a multi-line text is read line by line, and
    a private key block is masked across the lines it spans."""
    if not text:
        return text
    if "\n" not in text and "\r" not in text:
        return redact_line(text)
    block = private_keys.Block()
    lines = text.splitlines(keepends=True)
    bodies = [line.rstrip("\r\n") for line in lines]
    by_context = private_keys.lines_by_context(bodies)
    out = []
    for i, (line, body) in enumerate(zip(lines, bodies)):
        ending = line[len(body):]
        held = block.masked(body) or ((0, len(body)) if i in by_context else None)
        out.append((apply(body, [held]) if held else redact_line(body)) + ending)
    return "".join(out)


# Lines up to this length are cached: evidence lines recur (the same log line in every sweep, every
# diagnosis of a crash loop); a long line is rare and would hold the cache's memory for nothing.
CACHED_LINE_MAX = 2048


def redact_line(line: str) -> str:
    """One line with every secret value replaced by MASK."""
    return _cached(line) if len(line) <= CACHED_LINE_MAX else _redact_line(line)


@lru_cache(maxsize=8192)
def _cached(line: str) -> str:
    return _redact_line(line)


def _redact_line(line: str) -> str:
    found = [span for detector in DETECTORS for span in detector.spans(line)]
    return apply(line, found + list(entropy.spans(line, found)))
