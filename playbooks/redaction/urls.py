"""Credentials in URLs: ``scheme://user:password@host``."""
from __future__ import annotations

from collections.abc import Iterator

import re2

from playbooks.redaction.plugins import found
from playbooks.redaction.spans import Span, harmless

# The BasicAuth plugin stops the password at any RFC 3986 reserved character, so a password holding
# "/", "#", "?" or "@" (unencoded, as people paste them) slips past it. This rule takes the userinfo
# up to the LAST "@" of the URL token, so the password may hold any character but whitespace and
# quotes. https://datatracker.ietf.org/doc/html/rfc3986#section-3.2.1
_URL = re2.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,20}://([^\s'\"<>`]+)")
# "host:8080/path?who=a@b" has no userinfo: a port then a path, with an "@" later in the query.
_PORT_THEN_PATH = re2.compile(r"^\d{1,5}(?:[/?#]|$)")


def spans(line: str) -> Iterator[Span]:
    if "://" not in line or "@" not in line:
        return
    yield from found("basic_auth", "BasicAuthDetector", line)
    for match in _URL.finditer(line):
        token, base = match.group(1), match.start(1)
        at = token.rfind("@")
        colon = token.find(":", 0, at) if at > 0 else -1
        if colon < 0 or any(c in token[:colon] for c in "/?#"):
            continue  # no "user:" before the "@": a token as user name (caught by its shape) or no userinfo
        password = token[colon + 1:at]
        if password and not harmless(password) and not _PORT_THEN_PATH.match(password):
            yield base + colon + 1, base + at
