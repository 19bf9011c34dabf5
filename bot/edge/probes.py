"""``/healthz`` and ``/readyz`` for the kubelet, on a port and a server of their own.

Its own event loop, thread and connection limits, so a flood on the Slack and Alertmanager port cannot
make the liveness probe fail and get a working pod restarted. ``/healthz``: the process answers.
``/readyz``: the edge is accepting requests (503 from the moment ``gpubot serve`` starts stopping, so
the Service sends new requests to the other replicas while this one drains).
"""
from __future__ import annotations

from typing import Callable

from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route, Router

from bot.edge.limits import ConnectionLimits
from bot.edge.server import EdgeServer

# The kubelet probes from the node's address; a few connections are all it ever holds.
PROBE_CONNECTIONS = 64
PROBE_CONNECTIONS_PER_CLIENT = 8
PROBE_TIMEOUT = 5.0


def probe_app(ready: Callable[[], bool]) -> Router:
    async def healthz(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    async def readyz(request: Request) -> PlainTextResponse:
        if ready():
            return PlainTextResponse("ok")
        return PlainTextResponse("not ready: not accepting requests", status_code=503)

    return Router(routes=[Route("/healthz", healthz, methods=["GET", "HEAD"]),
                          Route("/readyz", readyz, methods=["GET", "HEAD"])])


class ProbeServer(EdgeServer):
    def __init__(self, *, ready: Callable[[], bool], host: str = "0.0.0.0", port: int = 8081) -> None:
        super().__init__(probe_app(ready), host=host, port=port, name="gpubot-probes",
                         limits=ConnectionLimits(total=PROBE_CONNECTIONS, per_client=PROBE_CONNECTIONS_PER_CLIENT),
                         read_timeout=PROBE_TIMEOUT, idle_timeout=PROBE_TIMEOUT)
