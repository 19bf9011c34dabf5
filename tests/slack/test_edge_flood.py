"""One client cannot exhaust the HTTP edge: `gpubot serve` with 256 idle connections held from one
address still answers signed commands from another, its probes answer on their own port, and that
address's 257th connection is refused. Real sockets on loopback; 127.0.0.2 is a second client address."""
from __future__ import annotations

import http.client
import socket
import time
import urllib.request

from tests.fakes import payloads
from tests.fakes import workspace as ws
from tests.fakes.signing import FORM, sign
from tests.fakes.slack_api import FakeSlack
from tests.slack.serve_process import serving

HELD = 256
OTHER_CLIENT = "127.0.0.2"


def _command_from(source: str, port: int, slack: FakeSlack) -> int:
    body = payloads.slash_command("help", response_url=slack.response_url()).encode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        conn.request("POST", "/slack/events", body=body,
                     headers={"Content-Type": FORM, **sign(body, secret=ws.SIGNING_SECRET)})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def _still_open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) != b""  # never: nothing was asked
    except BlockingIOError:
        return True  # nothing to read and not closed
    except OSError:
        return False
    finally:
        sock.setblocking(True)


def _refused_answer(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    return answer


def test_idle_sockets_from_one_address_leave_everyone_else_served(seed_sim, tmp_path):
    with FakeSlack() as slack, serving(seed_sim, slack, tmp_path,
                                       GPUBOT_HTTP_MAX_CONNECTIONS_PER_CLIENT=str(HELD)) as served:
        held = [socket.create_connection(("127.0.0.1", served.port), timeout=5) for _ in range(HELD)]
        try:
            started = time.monotonic()
            over = _refused_answer(served.port)
            assert over.startswith(b"HTTP/1.1 503 ") and b"\r\nRetry-After: 1\r\n" in over, over

            statuses = [_command_from(OTHER_CLIENT, served.port, slack) for _ in range(40)]
            assert statuses == [200] * 40
            with urllib.request.urlopen(f"http://127.0.0.1:{served.probe_port}/healthz", timeout=5) as probe:
                assert probe.status == 200
            with urllib.request.urlopen(f"http://127.0.0.1:{served.probe_port}/readyz", timeout=5) as probe:
                assert probe.status == 200
            # The flood was really in place throughout: every held connection is still open (the idle
            # timeout, 10 s, has not yet let any go).
            assert time.monotonic() - started < 10
            assert sum(_still_open(sock) for sock in held) == HELD
        finally:
            for sock in held:
                sock.close()
        log = served.log.read_text()
        assert f"refused - - from 127.0.0.1: {HELD} connections already open from this address" in log
        assert f"from {OTHER_CLIENT}" not in log
