"""``POST /slack/events``: every request checked here before Bolt sees it, in this order:

one value per framing and signature header (the value Bolt reads), no Transfer-Encoding, a body of at
most MAX_BODY bytes, a numeric timestamp within five minutes, a valid signature, then not a replay
(bot/replay.py), so forged traffic never enters the replay set. Only a request that passed all of these
reaches Bolt, which checks the signature again. Bolt's ``App`` is synchronous: its dispatch runs in a
thread pool, so a slow listener never holds the event loop that reads every other request.
"""
from __future__ import annotations

from slack_bolt import App, BoltRequest
from slack_bolt.adapter.starlette.handler import to_starlette_response
from slack_bolt.middleware.request_verification import RequestVerification
from slack_sdk.signature import SignatureVerifier
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from bot.edge.framing import checked_length, read_body, refusal, signed_headers
from bot.edge.refusals import Refused
from bot.replay import SIGNATURE_WINDOW, ReplayGuard


def bolt_verifier(app: App) -> SignatureVerifier:
    """The verifier Bolt checks each request with, so this layer applies the same secret and clock."""
    for middleware in app._middleware_list:
        if isinstance(middleware, RequestVerification):
            return middleware.verifier
    raise ValueError("HTTP mode needs Bolt's request verification: create the app with "
                     "GPUBOT_SLACK_MODE=http and a signing secret (request_verification_enabled=True)")


class SlackEvents:
    def __init__(self, app: App, guard: ReplayGuard) -> None:
        self._app = app
        self._verifier = bolt_verifier(app)
        self._guard = guard

    async def handle(self, request: Request) -> Response:
        try:
            checked_length(request)
            signed = signed_headers(request)
            body = await read_body(request)
            if body is None:
                return Response(status_code=400)  # nobody is left to read it
            text = body.decode("utf-8", errors="replace")
            timestamp, signature = self._checked_signature(text, signed)
            if not self._guard.first_time(signature, int(timestamp)):
                raise Refused(401, "replayed request")
        except Refused as refused:
            return refusal(request, refused)
        bolt_request = BoltRequest(body=text, query=request.url.query, headers=_all_values(request))
        return to_starlette_response(await run_in_threadpool(self._app.dispatch, bolt_request))

    def _checked_signature(self, body: str, signed: tuple[str, str] | None) -> tuple[str, str]:
        if signed is None:
            raise Refused(401, "unsigned request")
        timestamp, signature = signed
        if abs(self._verifier.clock.now() - int(timestamp)) > SIGNATURE_WINDOW:
            raise Refused(401, "stale timestamp")
        if not self._verifier.is_valid(body, timestamp, signature):
            raise Refused(401, "invalid signature")
        return timestamp, signature


def _all_values(request: Request) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    for name, value in request.headers.items():  # every value: a dict by name would keep the last
        headers.setdefault(name, []).append(value)
    return headers
