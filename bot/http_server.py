"""HTTP mode: Slack's requests (commands, events, interactivity) at ``POST /slack/events``, and other
endpoints beside them (``POST /alertmanager``), served by uvicorn (bot/edge/).

Hardened for traffic that is not Slack's:
- every Slack request is checked before Bolt sees it: one value per signature header (the one Bolt
  reads), a numeric timestamp within five minutes, a valid signature, then not a replay
  (bot/replay.py); only a request that passed all of these reaches Bolt, which checks the signature
  again (bot/edge/slack.py);
- malformed framing (Content-Length, timestamp, repeated headers) is answered 400 and a body over
  1 MiB 413, each with one line (``{"error": ...}``), never 500;
- a request must arrive whole within ``read_timeout`` seconds of its first byte, and a connection is
  closed after ``idle_timeout`` seconds without one, so slow or idle clients cannot hold it open;
- one client address holds at most ``max_connections_per_client`` connections and everyone together
  ``max_connections``; past either, a connection gets 503 with ``Retry-After`` and is closed, and
  other addresses are unaffected (bot/edge/protocol.py);
- each refused request is logged as one line (method, path, client, reason), never its body or
  signature.
The probes (``/healthz``, ``/readyz``) have their own port and server (bot/edge/probes.py); this one
answers ``GET /healthz`` too, for a load balancer checking the port it sends traffic to.
"""
from __future__ import annotations

from typing import Mapping

from slack_bolt import App
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route as Path
from starlette.routing import Router

from bot.edge.framing import MAX_BODY
from bot.edge.limits import ConnectionLimits
from bot.edge.routes import Route, RouteEndpoint
from bot.edge.server import EdgeServer
from bot.edge.slack import SlackEvents, bolt_verifier
from bot.replay import ReplayGuard

__all__ = ["MAX_BODY", "Route", "SlackHttpServer", "bolt_verifier"]

READ_TIMEOUT = 10.0
IDLE_TIMEOUT = 10.0
MAX_CONNECTIONS = 1024
MAX_CONNECTIONS_PER_CLIENT = 32


async def _healthz(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ok")


class EdgeApp:
    """The ASGI app: a bare Starlette router. Starlette's application wrapper would add two middlewares
    per request (error pages, HTTPException handling) that the endpoints here have no use for: every
    answer they give is built in place, and an unexpected error is uvicorn's 500 and log line."""

    def __init__(self, app: App | None, guard: ReplayGuard, routes: Mapping[str, Route]) -> None:
        self._endpoints = [RouteEndpoint(route) for route in routes.values()]
        paths = [Path("/healthz", _healthz, methods=["GET", "HEAD"])]
        paths += [Path(path, endpoint.handle, methods=["POST"]) for path, endpoint in zip(routes, self._endpoints)]
        if app is not None:
            slack = SlackEvents(app, guard)
            self._endpoints.append(slack)
            paths.append(Path("/slack/events", slack.handle, methods=["POST"]))
        self.router = Router(routes=paths)

    def close(self) -> None:
        for endpoint in self._endpoints:
            endpoint.close()


class SlackHttpServer:
    """Slack's requests at POST /slack/events (``app``; None in Socket Mode, where they come over the
    WebSocket) and other POST endpoints in ``routes`` (path -> handler)."""

    def __init__(self, app: App | None, *, host: str = "0.0.0.0", port: int = 3000,
                 read_timeout: float = READ_TIMEOUT, idle_timeout: float = IDLE_TIMEOUT,
                 max_connections: int = MAX_CONNECTIONS,
                 max_connections_per_client: int = MAX_CONNECTIONS_PER_CLIENT,
                 replay_guard: ReplayGuard | None = None, routes: Mapping[str, Route] | None = None,
                 trusted_proxies: tuple[str, ...] = ()) -> None:
        self.replay_guard = replay_guard or ReplayGuard()
        limits = ConnectionLimits(total=max_connections, per_client=max_connections_per_client,
                                  trusted_proxies=trusted_proxies)
        self._app = EdgeApp(app, self.replay_guard, dict(routes or {}))
        self._edge = EdgeServer(self._app.router, host=host, port=port,
                                limits=limits, read_timeout=read_timeout, idle_timeout=idle_timeout,
                                name="gpubot-http")

    @property
    def port(self) -> int:
        return self._edge.port

    @property
    def open_connections(self) -> int:
        """Connections open now (admitted, not yet closed)."""
        return self._edge.limits.open

    @property
    def serving(self) -> bool:
        """Accepting requests: started and not stopping (what ``/readyz`` reports)."""
        return self._edge.serving

    def start(self) -> "SlackHttpServer":
        self._edge.start()
        return self

    def stop(self) -> None:
        self._edge.stop()
        self._app.close()
