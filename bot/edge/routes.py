"""Other POST endpoints served beside Slack's (Alertmanager's webhook), each with its own authentication.

A route is transport-free: ``(method, headers, body) -> (status, JSON answer)``; it runs in a thread
pool, since it may write to the database.
"""
from __future__ import annotations

import json
from typing import Callable, Mapping

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from bot.edge.framing import checked_length, read_body, refusal
from bot.edge.refusals import Refused, log_refusal

Route = Callable[[str, Mapping[str, str], bytes], "tuple[int, dict]"]


class RouteEndpoint:
    def __init__(self, route: Route) -> None:
        self._route = route

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
        status, answer = await run_in_threadpool(self._route, request.method, headers, body)
        if status >= 400:
            log_refusal(request.method, request.url.path, request.client.host if request.client else None,
                        f"{status} {answer.get('error', '')}"[:200])
        return Response(json.dumps(answer), status_code=status, media_type="application/json")
