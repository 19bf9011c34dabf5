"""``POST /slack/events``: every request checked here before Bolt sees it, in this order:

one value per framing and signature header (the value Bolt reads), no Transfer-Encoding, a body of at
most MAX_BODY bytes, a numeric timestamp within five minutes, a valid signature, then not a replay
(bot/replay.py), so forged traffic never enters the replay set. Only a request that passed all of these
reaches Bolt, which checks the signature again. Bolt's ``App`` is synchronous: building its request
and dispatching it run in a few threads of its own, so a slow listener never holds the event loop that
reads every other request. (Bolt's own Starlette adapter calls ``App.dispatch`` on the event loop: one
ack waiting on the network there would stall every connection.)
"""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.adapter.starlette.handler import to_starlette_response
from slack_bolt.middleware.request_verification import RequestVerification
from slack_sdk.signature import SignatureVerifier
from starlette.requests import Request
from starlette.responses import Response

from bot.edge.framing import checked_length, read_body, refusal, signed_headers
from bot.edge.refusals import Refused
from bot.replay import SIGNATURE_WINDOW, ReplayGuard

# Acks are a millisecond of Python each: more threads only pass the interpreter lock around more. 200
# commands at once (tests/benchmarks/bench_ack.py, 2 busy cores) were acked at p99 1.5-1.8 s on anyio's
# default 40 threads and 0.7-1.0 s on 4 anyio CapacityLimiter tokens (each token is handed on by the busy
# event loop); on executor threads, which take the next ack from their queue themselves, 0.45-0.50 s
# with 2, 0.36-0.39 s with 4, 0.31-0.35 s with 8. Several, too, so that acks waiting on the network
# (views.open) do not hold up the rest.
DISPATCH_THREADS = 8


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
        self._threads = ThreadPoolExecutor(DISPATCH_THREADS, thread_name_prefix="gpubot-ack")

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
        response = await asyncio.get_running_loop().run_in_executor(
            self._threads, self._dispatch, text, request.url.query, _all_values(request))
        return to_starlette_response(response)

    def close(self) -> None:
        self._threads.shutdown(wait=False)

    def _dispatch(self, body: str, query: str, headers: dict[str, list[str]]) -> BoltResponse:
        # In a dispatch thread: BoltRequest parses the body (form fields, JSON payloads), too.
        return self._app.dispatch(BoltRequest(body=body, query=query, headers=headers))

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
