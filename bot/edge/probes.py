"""``/healthz``, ``/readyz`` and ``/metrics``, on a port and a server of their own.

Its own event loop, thread and connection limits, so a flood on the Slack and Alertmanager port cannot
make the liveness probe fail and get a working pod restarted; a flood on this port sheds idle
connections for the kubelet's instead of refusing it. ``/healthz``: the process answers (its
event loop runs). ``/readyz``: 200, or 503 with one line of JSON naming why not (bot.edge.readiness):
stopping (from the moment ``gpubot serve`` starts stopping, so the Service sends new requests to the
other replicas while this one drains), database unreachable, Slack token refused, workers down.
``/metrics``: Prometheus's text format (bot.metrics).
"""
from __future__ import annotations

import asyncio
import json
from typing import Callable

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route, Router

from bot import metrics
from bot.edge.limits import ConnectionLimits
from bot.edge.readiness import Readiness, mark_slack_auth
from bot.edge.server import EdgeServer

__all__ = ["ProbeServer", "Readiness", "mark_slack_auth", "probe_app"]

# The kubelet probes from the node's address; a few connections are all it ever holds. The total is
# many times one address's share, so a few addresses cannot fill the port, and a full one sheds its
# longest-idle connection for a new one (bot/edge/limits.py): a probe sent as the kubelet connects is
# answered whoever holds the rest. The chart's NetworkPolicy keeps other pods off this port.
PROBE_CONNECTIONS = 256
PROBE_CONNECTIONS_PER_CLIENT = 8
PROBE_TIMEOUT = 5.0


def _reason_of(ready: "Callable[[], bool] | Readiness") -> Callable[[], str | None]:
    if isinstance(ready, Readiness):
        return ready.reason
    return lambda: None if ready() else "not accepting requests (stopping)"


def probe_app(ready: "Callable[[], bool] | Readiness") -> Router:
    reason_now = _reason_of(ready)
    metrics.watch(metrics.READY, lambda: reason_now() is None)

    async def healthz(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    async def readyz(request: Request) -> Response:
        # The checks may wait on the database (up to its timeout): not on the event loop /healthz needs.
        reason = await asyncio.get_running_loop().run_in_executor(None, reason_now)
        if reason is None:
            return PlainTextResponse("ok")
        return Response(json.dumps({"ready": False, "reason": reason}) + "\n", status_code=503,
                        media_type="application/json")

    async def metrics_text(request: Request) -> Response:
        body = await asyncio.get_running_loop().run_in_executor(None, metrics.exposition)
        return Response(body, media_type=metrics.CONTENT_TYPE)

    return Router(routes=[Route("/healthz", healthz, methods=["GET", "HEAD"]),
                          Route("/readyz", readyz, methods=["GET", "HEAD"]),
                          Route("/metrics", metrics_text, methods=["GET", "HEAD"])])


class ProbeServer(EdgeServer):
    def __init__(self, *, ready: "Callable[[], bool] | Readiness", host: str = "0.0.0.0", port: int = 8081) -> None:
        super().__init__(probe_app(ready), host=host, port=port, name="gpubot-probes",
                         limits=ConnectionLimits(total=PROBE_CONNECTIONS, per_client=PROBE_CONNECTIONS_PER_CLIENT),
                         read_timeout=PROBE_TIMEOUT, idle_timeout=PROBE_TIMEOUT)
