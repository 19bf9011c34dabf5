"""One uvicorn server in a thread of its own, on a socket bound before it starts.

Binding here, in the caller's thread, makes a taken port fail the caller at once with its OSError (inside
uvicorn it would end the server thread with ``sys.exit``) and gives port 0 its real number before
anything connects. uvicorn is told to leave logging and signals alone: ``gpubot serve`` owns both
(``log_config=None``; uvicorn installs signal handlers only on the main thread). ``X-Forwarded-For`` is
believed only from the limits' trusted proxies (``GPUBOT_TRUSTED_PROXIES``, none by default), through
uvicorn's own ProxyHeadersMiddleware, which takes the nearest address not itself a trusted proxy:
anyone else could write any address there. Without trusted proxies the header is ignored, and logs
name the address the connection came from.
"""
from __future__ import annotations

import functools
import socket
import threading
import time

import uvicorn

from bot.edge.limits import ConnectionLimits
from bot.edge.protocol import EdgeProtocol

# Python's listen backlog of 5 resets connections when Slack sends a burst, and a connection past a
# full backlog waits for the client's SYN retry (a second or more). The kernel caps it at
# net.core.somaxconn (4096 by default).
BACKLOG = 1024
# Seconds a stopping server waits for the requests it is answering (acks take milliseconds).
DRAIN = 5.0


class EdgeServer:
    def __init__(self, asgi_app, *, host: str, port: int, limits: ConnectionLimits, read_timeout: float,
                 idle_timeout: float, name: str) -> None:
        if read_timeout <= 0 or idle_timeout <= 0:
            raise ValueError("read_timeout and idle_timeout must be positive")
        self.limits = limits
        self._name = name
        self._socket = _bound(host, port)
        protocol = functools.partial(EdgeProtocol, limits=limits, read_timeout=read_timeout,
                                     idle_timeout=idle_timeout)
        config = uvicorn.Config(asgi_app, http=protocol, ws="none", lifespan="off", log_config=None,
                                access_log=False, server_header=False, timeout_keep_alive=idle_timeout,
                                proxy_headers=bool(limits.trusted_proxies),
                                # Explicit even when empty: left None, uvicorn reads FORWARDED_ALLOW_IPS.
                                forwarded_allow_ips=list(limits.trusted_proxies),
                                timeout_graceful_shutdown=DRAIN, backlog=BACKLOG)
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._socket.getsockname()[1]

    @property
    def serving(self) -> bool:
        return self._server.started and not self._server.should_exit

    def start(self, *, timeout: float = 30) -> "EdgeServer":
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]},
                                        name=self._name, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the {self._name} server did not start on port {self.port}; see the log above")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop accepting, close idle connections, let requests being answered finish (up to DRAIN s)."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(DRAIN + 5)
            if self._thread.is_alive():
                self._server.force_exit = True
                self._thread.join(5)
        self._socket.close()


def _bound(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(BACKLOG)
    return sock
