"""Other POST endpoints served beside Slack's (Alertmanager's webhook), each with its own authentication.

A route is transport-free: ``(method, headers, body) -> (status, JSON answer)``; it runs in threads of
its own (it may write to the database and post to Slack), so a slow batch never holds up Slack's acks.
A 429 or 503 answer's ``retry_after`` (whole seconds) is also sent as the ``Retry-After`` header, the
one a client reads.
"""
from __future__ import annotations

import json
from typing import Callable, Mapping

import asyncio
from concurrent.futures import ThreadPoolExecutor
from starlette.requests import Request
from starlette.responses import Response

from bot.edge.framing import checked_length, read_body, refusal
from bot.edge.refusals import Refused, log_refusal

Route = Callable[[str, Mapping[str, str], bytes], "tuple[int, dict]"]
ROUTE_THREADS = 4


class RouteEndpoint:
    def __init__(self, route: Route) -> None:
        self._route = route
        self._threads = ThreadPoolExecutor(ROUTE_THREADS, thread_name_prefix="gpubot-route")

    async def handle(self, request: Request) -> Response:
        try:
            checked_length(request)
            body = await read_body(request)
        except Refused as refused:
            return refusal(request, refused)
        if body is None:
            return Response(status_code=400)  # the client went away
        headers = dict(request.headers.items())
        if len(request.headers.getlist("authorization")) > 1:
            headers["authorization"] = ""  # two credentials: neither is taken
        status, answer = await asyncio.get_running_loop().run_in_executor(
            self._threads, self._route, request.method, headers, body)
        if status >= 400:
            log_refusal(request.method, request.url.path, request.client.host if request.client else None,
                        f"{status} {answer.get('error', '')}"[:200])
        retry_after = answer.get("retry_after") if status in (429, 503) else None
        return Response(json.dumps(answer), status_code=status, media_type="application/json",
                        headers={"Retry-After": str(retry_after)} if isinstance(retry_after, int) else None)

    def close(self) -> None:
        self._threads.shutdown(wait=False)
