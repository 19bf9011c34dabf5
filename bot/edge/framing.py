"""Checks on a request's headers and body that every POST endpoint of the edge shares.

h11 has already refused a Content-Length that is not a plain integer or that two headers disagree on,
and framed the body by it: bytes past it are the next request, never more body.
"""
from __future__ import annotations

import re

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from bot.edge.refusals import Refused, answer, log_refusal

MAX_BODY = 1024 * 1024  # Slack payloads are far smaller; a bigger body is not from Slack
SIGNATURE = "X-Slack-Signature"
TIMESTAMP = "X-Slack-Request-Timestamp"
_SINGLE_VALUED = ("Content-Length", "Transfer-Encoding", SIGNATURE, TIMESTAMP)
_DIGITS = re.compile(r"[0-9]{1,15}")  # int() would also take " 1", "+1", "1_0" and non-ASCII digits


def checked_length(request: Request) -> int:
    """The body's declared length, after refusing repeated framing or signature headers and bodies
    over MAX_BODY; nothing of the body has been read yet."""
    for name in _SINGLE_VALUED:
        if len(request.headers.getlist(name)) > 1:
            # Bolt verifies the first value; a check reading another could be fooled.
            raise Refused(400, f"more than one {name} header", close=True)
    if "transfer-encoding" in request.headers:
        raise Refused(400, "Transfer-Encoding is not supported; send Content-Length", close=True)
    length = int(request.headers.get("content-length") or 0)  # h11 let only digits through
    if length > MAX_BODY:
        raise Refused(413, "request too large", close=True)
    return length


def signed_headers(request: Request) -> tuple[str, str] | None:
    """(timestamp, signature) of a signed request, None for an unsigned one."""
    timestamp, signature = request.headers.get(TIMESTAMP), request.headers.get(SIGNATURE)
    if signature is None:
        return None
    if timestamp is None or not _DIGITS.fullmatch(timestamp):
        raise Refused(400, f"missing or non-numeric {TIMESTAMP}", close=True)
    return timestamp, signature


async def read_body(request: Request) -> bytes | None:
    """The whole body, or None when the client went away before sending it (the protocol's deadline
    closes a connection too slow to send it: bot/edge/protocol.py)."""
    try:
        return await request.body()
    except ClientDisconnect:
        return None


def refusal(request: Request, refused: Refused) -> Response:
    log_refusal(request.method, request.url.path, _client(request), refused.reason)
    headers = {"Connection": "close"} if refused.close else None
    return Response(answer(refused.reason), status_code=refused.status, headers=headers,
                    media_type="application/json")


def _client(request: Request) -> str | None:
    return request.client.host if request.client else None
