"""HTTP server speaking the Kubernetes REST API on loopback, plus the /sim/ control endpoints.

Control endpoints (never counted as API requests):
  GET    /sim/requests        -> {"count": N}
  POST   /sim/requests/reset
  GET    /sim/requests/log    -> {"requests": ["GET /api/v1/pods?limit=500 200", ...]}
  GET    /sim/requests/details -> {"requests": [{"method", "target", "status", "contentType"}, ...]}
  POST   /sim/faults          {"status": 503, "times": 1, "path_contains": "/pods", "delay_seconds": 0,
                                "method": "PATCH", "after": 1}   (method, after: optional; after = matching
                                requests served first, e.g. the dry run before the write)
  DELETE /sim/faults
"""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from sim import api
from sim.cluster import Cluster
from sim.control import ControlState, Fault, parse_fault
from sim.resources import ApiError

_FAULT_REASONS = {429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout"}


def _fault_response(fault: Fault) -> api.Response:
    status = fault.status or 500
    error = ApiError(
        code=status,
        reason=_FAULT_REASONS.get(status, "InternalError"),
        message=f"injected fault: the simulated API server answered {status}",
        details={},
    )
    response = api.error_response(error)
    if status == 429:
        response.headers["Retry-After"] = "0"
    return response


class _HTTPServer(ThreadingHTTPServer):
    request_queue_size = 128  # bursts from concurrent diagnoses; the default backlog (5) resets them
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], *, cluster: Cluster, control: ControlState):
        super().__init__(address, _Handler)
        self.cluster = cluster
        self.control = control

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that timed out (delay faults) has closed its socket: nothing to report.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the client's connection pool expects
    # Headers and body go out in separate writes; with Nagle on, the body waits for the client's
    # delayed ACK (~40 ms per request on keep-alive connections).
    disable_nagle_algorithm = True
    timeout = 120  # idle keep-alive connections end instead of holding a thread forever
    server: _HTTPServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        """Quiet: /sim/requests/log is the place to look."""

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, response: api.Response) -> None:
        if isinstance(response.body, str):
            payload = response.body.encode()
        else:
            payload = json.dumps(response.body, separators=(",", ":")).encode()
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _dispatch(self) -> None:
        body = self._read_body()
        url = urlsplit(self.path)
        if url.path.startswith("/sim/"):
            self._send(self._control(url.path, body))
            return
        try:
            response = self._api(url.path, url.query, body)
        except Exception as exc:  # a bug in the simulator: say so loudly, answer like a real 500
            traceback.print_exc(file=sys.stderr)
            bug = ApiError(code=500, reason="InternalError", message=f"simulator bug: {exc!r}")
            response = api.error_response(bug)
        self.server.control.record(method=self.command, target=self.path, status=response.status,
                                   content_type=self.headers.get("Content-Type") or "")
        self._send(response)

    def _api(self, path: str, query: str, body: bytes) -> api.Response:
        fault = self.server.control.take_fault(self.path, self.command)
        if fault is not None:
            if fault.delay_seconds:
                time.sleep(fault.delay_seconds)
            if fault.status is not None:
                return _fault_response(fault)
        request = api.Request(
            method=self.command,
            path=path,
            query=dict(parse_qsl(query, keep_blank_values=True)),
            content_type=(self.headers.get("Content-Type") or "").split(";")[0].strip().lower(),
            body=body,
            authorization=self.headers.get("Authorization") or "",
        )
        return api.handle(self.server.cluster, request)

    def _control(self, path: str, body: bytes) -> api.Response:
        control, method = self.server.control, self.command
        if (method, path) == ("GET", "/sim/requests"):
            return api.Response(200, {"count": control.request_count()})
        if (method, path) == ("POST", "/sim/requests/reset"):
            control.reset_requests()
            return api.Response(200, {"count": 0})
        if (method, path) == ("GET", "/sim/requests/log"):
            return api.Response(200, {"requests": control.request_log()})
        if (method, path) == ("GET", "/sim/requests/details"):
            return api.Response(200, {"requests": control.request_details()})
        if (method, path) == ("POST", "/sim/faults"):
            try:
                control.add_fault(parse_fault(json.loads(body or b"null")))
            except ValueError as exc:
                return api.Response(400, {"error": str(exc)})
            return api.Response(201, {"ok": True})
        if (method, path) == ("DELETE", "/sim/faults"):
            control.clear_faults()
            return api.Response(200, {"ok": True})
        return api.Response(404, {"error": f"unknown sim control endpoint {method} {path}"})


class SimServer:
    """The API server on a background thread. `port=0` picks a free port."""

    def __init__(self, cluster: Cluster, *, host: str = "127.0.0.1", port: int = 0):
        self.cluster = cluster
        self.control = ControlState()
        self._httpd = _HTTPServer((host, port), cluster=cluster, control=self.control)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "SimServer":
        # The socket is already listening (bound in __init__), so requests queue until the loop runs.
        # A short poll interval keeps stop() fast; tests start and stop many servers.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="gpubot-sim-api", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()
