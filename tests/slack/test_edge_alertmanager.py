"""POST /alertmanager through the HTTP edge, over real sockets: the edge's own refusals (size, framing,
repeated credentials) come before the endpoint, the endpoint's answers come back as it gave them, and
each refusal is one log line without the body or the token."""
from __future__ import annotations

import json
import logging
import socket

import pytest

from bot.alerts.intake import AlertmanagerEndpoint
from bot.http_server import SlackHttpServer
from tests.bot.alertmanager_payloads import fixture

TOKEN = "am-token-0123456789abcdef"


class Sink:
    def __init__(self) -> None:
        self.batches = []

    def __call__(self, batch) -> None:
        self.batches.append(batch)


@pytest.fixture
def edge():
    sinks = {"on": Sink(), "off": Sink()}
    server = SlackHttpServer(None, host="127.0.0.1", port=0, routes={
        "/alertmanager": AlertmanagerEndpoint(TOKEN, sinks["on"], cluster="prod").handle,
        "/alertmanager-off": AlertmanagerEndpoint(None, sinks["off"], cluster="prod").handle}).start()
    yield server, sinks
    server.stop()


def _post(port: int, body: bytes, headers: list[tuple[str, str]], *, path: str = "/alertmanager",
          length: int | None = None) -> tuple[int, bytes]:
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    head += f"Content-Length: {len(body) if length is None else length}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode() + b"\r\n" + body)
        answer = b""
        while b"\r\n\r\n" not in answer and (chunk := sock.recv(65536)):
            answer += chunk
        head_bytes, _, rest = answer.partition(b"\r\n\r\n")
        size = int(next(line.split(b":")[1] for line in head_bytes.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")))
        while len(rest) < size and (chunk := sock.recv(65536)):
            rest += chunk
    return int(head_bytes.split(b" ", 2)[1]), rest


BEARER = [("Authorization", f"Bearer {TOKEN}")]


def test_a_batch_is_accepted(edge):
    server, sinks = edge
    payload = fixture("dcgm_xid_firing.json")
    status, body = _post(server.port, payload, BEARER)
    assert (status, json.loads(body)) == (202, {"accepted": len(json.loads(payload)["alerts"])})
    assert len(sinks["on"].batches) == 1


@pytest.mark.parametrize("case, expected", [
    ("no token", 401), ("wrong token", 401), ("two tokens", 401), ("not json", 400), ("off", 503),
    ("too large", 413)])
def test_every_refusal_is_one_line_answer_and_one_log_line(edge, caplog, case, expected):
    server, sinks = edge
    body, headers, path, length = fixture("dcgm_xid_firing.json"), BEARER, "/alertmanager", None
    if case == "no token":
        headers = []
    elif case == "wrong token":
        headers = [("Authorization", "Bearer not-the-token")]
    elif case == "two tokens":
        headers = BEARER + [("Authorization", "Bearer not-the-token")]
    elif case == "not json":
        body = b"MARKER{"
    elif case == "off":
        path = "/alertmanager-off"
    elif case == "too large":
        body, length = b"MARKER", 2 * 1024 * 1024  # refused from its length: the rest is never sent
    caplog.set_level(logging.INFO)
    status, answer = _post(server.port, body, headers, path=path, length=length)
    assert status == expected
    assert list(json.loads(answer)) == ["error"] and b"\n" not in answer
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert len(lines) == 1 and lines[0].startswith(f"refused POST {path} from 127.0.0.1: "), lines
    assert "MARKER" not in lines[0] and TOKEN not in lines[0] and "not-the-token" not in lines[0]
    assert sinks["on"].batches == [] and sinks["off"].batches == []
