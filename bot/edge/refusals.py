"""What the edge says and logs when it turns a request away: one line each, never the request's bytes.

A refusal is answered ``{"error": REASON}`` and logged as ``refused METHOD PATH from ADDRESS: REASON``
on the ``bot.edge`` logger; the reason is always our own text, never a header value, the body or a
signature, so a forged request cannot write into the log.
"""
from __future__ import annotations

import json
import logging
import re

log = logging.getLogger("bot.edge")

# h11 says what was wrong and sometimes quotes the offending bytes (`Illegal header value b'...'`);
# only the words before a quote, a colon or a parenthesis are kept.
_OWN_WORDS = re.compile(r"(.*?)(?:\s+b?['\"(]|:|$)")
_PLAIN = re.compile(r"[A-Za-z][A-Za-z -]{0,79}")


class Refused(Exception):
    """A request answered with ``status`` and ``{"error": reason}``; ``close``: the connection cannot go
    on (its body was left unread)."""

    def __init__(self, status: int, reason: str, *, close: bool = False) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.close = close


def log_refusal(method: str | None, path: str | None, client: str | None, reason: str) -> None:
    log.info("refused %s %s from %s: %s", method or "-", path or "-", client or "-", reason)


def log_shed(client: str | None) -> None:
    # DEBUG: a flood sheds thousands a minute, and a shed connection loses no answer its client asked
    # for; the 503s a full port still gives are logged at INFO.
    log.debug("shed a connection waiting for a request from %s: the port was full", client or "-")


def answer(reason: str) -> bytes:
    return json.dumps({"error": reason}).encode()


def protocol_reason(error: BaseException | None) -> str:
    """h11's reason for refusing malformed HTTP, without any bytes of the request."""
    words = _OWN_WORDS.match(str(error or "")).group(1).strip()
    return words if _PLAIN.fullmatch(words) else "malformed request"
