"""HTTP mode refuses what Slack did not send: forged, unsigned, stale and replayed requests."""
from __future__ import annotations

import socket
import time

import pytest

from tests.fakes import workspace as ws
from tests.fakes.signing import sign


def _body():
    return b"token=x&team_id=T0001&channel_id=C0TRAIN&user_id=U0ALICE&command=%2Fgpu&text=nodes&trigger_id=1.2.3"


def test_forged_signature(slack_bot):
    headers = sign(_body(), secret="not-the-secret")
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    assert slack_bot.send.raw(_body(), headers).status == 401


def test_unsigned(slack_bot):
    assert slack_bot.send.raw(_body(), {"Content-Type": "application/x-www-form-urlencoded"}).status == 401


def test_stale(slack_bot):
    headers = sign(_body(), secret=ws.SIGNING_SECRET, timestamp=int(time.time()) - 600)
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    assert slack_bot.send.raw(_body(), headers).status == 401


def test_replayed(slack_bot):
    headers = sign(_body(), secret=ws.SIGNING_SECRET)
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    assert slack_bot.send.raw(_body(), headers).status == 200
    assert slack_bot.send.raw(_body(), headers).status == 401
    slack_bot.slack.wait_for("chat.postMessage", count=1)
    slack_bot.settle()
    assert len(slack_bot.slack.calls("chat.postMessage")) == 1  # the replay did nothing


def test_url_verification(slack_bot):
    reply = slack_bot.send.url_verification("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P")
    assert reply.status == 200 and "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" in reply.body


def _raw_exchange(port: int, head: bytes) -> bytes:
    """Send request bytes and read the answer without sending the rest of the body: the server answers
    from the headers alone, and a client still writing a refused body could hit a closed socket."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    return answer


def test_oversized_body_is_refused_from_its_length_alone(slack_bot):
    length = 2 * 1024 * 1024
    head = (f"POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode() + b"x" * 1024
    answer = _raw_exchange(slack_bot.server.port, head)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert answer.endswith(b'{"error": "request too large"}')
    assert slack_bot.slack.calls() == []


@pytest.mark.parametrize("length", ["-5", "lots"])
def test_malformed_content_length(slack_bot, length):
    head = (f"POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {length}\r\n\r\n").encode()
    answer = _raw_exchange(slack_bot.server.port, head)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert b"bad Content-Length" in answer


def test_health(slack_bot):
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{slack_bot.server.port}/healthz") as r:
        assert r.status == 200
