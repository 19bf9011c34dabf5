"""HTTP mode against hostile traffic, over real sockets to the app create_app builds: replays refused
only after the signature check and on the header Bolt verifies, malformed framing answered 400 in one
JSON line, slow and idle clients cut off, connections capped per client address and in all, refusals
logged as one line without the body."""
from __future__ import annotations

import itertools
import logging
import socket
import time

import pytest

from bot.http_server import SlackHttpServer
from bot.replay import ReplayGuard
from tests.fakes import workspace as ws
from tests.fakes.signing import sign

BODY = b"token=x&team_id=T0001&channel_id=C0TRAIN&user_id=U0ALICE&command=%2Fgpu&text=help&trigger_id=1.2.3"


_sent = itertools.count()


def _body(text: str = "help") -> bytes:
    """A /gpu command of its own (a fresh trigger_id): two requests signed in the same second with the
    same body would be one request."""
    return BODY.replace(b"text=help", f"text={text}".encode()).replace(b"1.2.3", f"1.2.{next(_sent)}".encode())


def _request(body: bytes, headers: list[tuple[str, str]], *, path: str = "/slack/events") -> bytes:
    """Request bytes exactly as given: repeated headers and wrong lengths included."""
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers)
    return head.encode() + b"\r\n" + body


def _exchange(port: int, data: bytes, *, timeout: float = 10) -> bytes:
    """Send ``data`` and read one answer (up to its Content-Length, or to the close)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        while b"\r\n\r\n" not in answer and (chunk := sock.recv(65536)):
            answer += chunk
        head, _, rest = answer.partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(rest) < length and (chunk := sock.recv(65536)):
            rest += chunk
        return head + b"\r\n\r\n" + rest


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def _signed(body: bytes, timestamp: int | None = None) -> list[tuple[str, str]]:
    signed = sign(body, secret=ws.SIGNING_SECRET, timestamp=timestamp)
    return [("Content-Length", str(len(body))), *signed.items()]


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
        return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def _wait(check, timeout: float = 5) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# -- replays --------------------------------------------------------------------------------------
def test_a_forged_request_never_enters_the_replay_set(slack_bot):
    port, body = slack_bot.server.port, _body()
    headers = _signed(body)
    signature = dict(headers)["X-Slack-Signature"]
    forged = _body("nodes")  # the real request's signature on another body
    recorded = len(slack_bot.server.replay_guard)
    assert _status(_exchange(port, _request(forged, [("Content-Length", str(len(forged))), *headers[1:]]))) == 401
    assert len(slack_bot.server.replay_guard) == recorded
    # Had the forgery been recorded, Slack's own request with that signature would now be refused.
    assert _status(_exchange(port, _request(body, headers))) == 200
    assert _status(_exchange(port, _request(body, headers))) == 401
    assert signature and len(slack_bot.server.replay_guard) == recorded + 1


@pytest.mark.parametrize("header", ["X-Slack-Signature", "X-Slack-Request-Timestamp"])
@pytest.mark.parametrize("valid_first", [True, False])
def test_repeated_signature_headers_are_refused(slack_bot, header, valid_first):
    body = _body()
    headers = _signed(body)
    valid = dict(headers)[header]
    other = "v0=" + "0" * 64 if header == "X-Slack-Signature" else str(int(valid) - 1)
    pair = [(header, valid), (header, other)] if valid_first else [(header, other), (header, valid)]
    rest = [h for h in headers if h[0] != header]
    answer = _exchange(slack_bot.server.port, _request(body, rest + pair))
    assert _status(answer) == 400 and f"more than one {header}".encode() in answer
    # Nothing was recorded: the same request, sent properly, is served once.
    assert _status(_exchange(slack_bot.server.port, _request(body, headers))) == 200


def test_replay_guard_memory_is_bounded_and_expires():
    now = [1_000_000.0]
    guard = ReplayGuard(window=300, capacity=1000, clock=lambda: now[0])
    for i in range(5000):
        assert guard.first_time(f"v0={i}", int(now[0]))
    assert len(guard) == 1000  # the cap: the oldest went first
    assert not guard.first_time("v0=4999", int(now[0]))
    now[0] += 301  # past the window every entry has left
    assert guard.first_time("v0=new", int(now[0]))
    assert len(guard) == 1


def test_replay_guard_stays_fast_past_ten_thousand_entries():
    guard = ReplayGuard(capacity=100_000)
    started = time.perf_counter()
    for i in range(100_000):
        guard.first_time(f"v0={i:064x}", int(time.time()))
    for i in range(50_000):  # at the cap: every insert evicts one
        guard.first_time(f"v0=x{i:063x}", int(time.time()))
    assert time.perf_counter() - started < 3  # ~0.3 s; a scan of the set per insert takes minutes
    assert len(guard) == 100_000


# -- malformed framing ----------------------------------------------------------------------------
@pytest.mark.parametrize("timestamp", ["soon", "", "1e9", "+1700000000", "１７００００００００"])
def test_non_numeric_timestamp_is_400(slack_bot, caplog, timestamp):
    body = _body()
    headers = [(n, timestamp if n == "X-Slack-Request-Timestamp" else v) for n, v in _signed(body)]
    answer = _exchange(slack_bot.server.port, _request(body, headers))
    assert _status(answer) == 400, answer
    assert b"X-Slack-Request-Timestamp" in answer
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]


def test_missing_timestamp_is_400(slack_bot):
    body = _body()
    headers = [h for h in _signed(body) if h[0] != "X-Slack-Request-Timestamp"]
    assert _status(_exchange(slack_bot.server.port, _request(body, headers))) == 400


@pytest.mark.parametrize("length", ["+5", "5_0", "1.5", "0x10"])
def test_content_length_must_be_a_plain_integer(slack_bot, length):
    answer = _exchange(slack_bot.server.port, _request(b"", [("Content-Length", length)]))
    assert _status(answer) == 400 and b"bad Content-Length" in answer


def test_bytes_past_content_length_are_a_request_of_their_own_and_refused(slack_bot):
    """The body is the Content-Length bytes the signature covers; what follows is read as the next
    request (RFC 9112 section 6.3), and this one is malformed: 400, one JSON line, connection closed."""
    body = _body()
    headers = _signed(body)
    recorded = len(slack_bot.server.replay_guard)
    with socket.create_connection(("127.0.0.1", slack_bot.server.port), timeout=10) as sock:
        sock.sendall(_request(body, headers) + b"&text=nodes\r\n\r\n")
        answers = b""
        while chunk := sock.recv(65536):
            answers += chunk
    first, _, second = answers.partition(b"HTTP/1.1 400 ")
    assert first.startswith(b"HTTP/1.1 200 OK\r\n") and second, answers
    assert second.endswith(b'{"error": "illegal request line"}') and b"\r\nConnection: close\r\n" in second
    assert len(slack_bot.server.replay_guard) == recorded + 1  # the signed request, once
    assert _status(_exchange(slack_bot.server.port, _request(body, headers))) == 401  # and not again


def test_transfer_encoding_is_refused_before_the_body_is_read(slack_bot):
    body = _body()
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    headers = [h for h in _signed(body) if h[0] != "Content-Length"] + [("Transfer-Encoding", "chunked")]
    answer = _exchange(slack_bot.server.port, _request(chunked, headers))
    assert _status(answer) == 400 and answer.endswith(
        b'{"error": "Transfer-Encoding is not supported; send Content-Length"}')
    assert _status(_exchange(slack_bot.server.port, _request(body, _signed(body)))) == 200  # not recorded


@pytest.mark.parametrize("head", [b"POST /slack/events HTTP/1.1\r\nHost: x\r\nX-Bad\x01: v\r\n\r\n",
                                  b"NOT HTTP AT ALL\r\n\r\n",
                                  b"POST /slack/events HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"])
def test_malformed_http_is_one_json_line_and_one_log_line(slack_bot, caplog, head):
    caplog.set_level(logging.DEBUG)
    answer = _exchange(slack_bot.server.port, head)
    assert _status(answer) == 400 and b"Content-Type: application/json" in answer, answer
    assert answer.rsplit(b"\r\n\r\n", 1)[1].startswith(b'{"error": "')
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert len(lines) == 1 and lines[0].startswith("refused ") and "from 127.0.0.1: " in lines[0], lines
    assert "X-Bad" not in lines[0] and "\\x01" not in lines[0]


def test_a_pipelined_request_is_not_mistaken_for_body(slack_bot):
    first, second = _body("help"), _body("help%20me")
    data = _request(first, _signed(first)) + _request(second, _signed(second))
    with socket.create_connection(("127.0.0.1", slack_bot.server.port), timeout=10) as sock:
        sock.sendall(data)
        answers = b""
        while answers.count(b"HTTP/1.1 200 OK\r\n") < 2 and (chunk := sock.recv(65536)):
            answers += chunk
    assert answers.startswith(b"HTTP/1.1 200 OK\r\n") and answers.count(b"HTTP/1.1 200 OK\r\n") == 2


# -- slow, idle and too many clients --------------------------------------------------------------
@pytest.fixture
def strict_server(bot):
    server = SlackHttpServer(bot.app, host="127.0.0.1", port=0, read_timeout=1, idle_timeout=0.5,
                             max_connections=3).start()
    yield server
    server.stop()


def test_slowloris_is_cut_off(strict_server):
    head = _request(b"", [("Content-Length", "0")])
    with socket.create_connection(("127.0.0.1", strict_server.port), timeout=5) as sock:
        started = time.monotonic()
        closed = False
        for byte in head:
            try:
                sock.send(bytes([byte]))
            except OSError:
                closed = True
                break
            if _closed_within(sock, 0.2):
                closed = True
                break
        elapsed = time.monotonic() - started
    assert closed, "the server was still reading after the whole request was dribbled in"
    assert elapsed < 2.5, elapsed  # read_timeout 1 s, though a byte came every 0.2 s
    assert _wait(lambda: strict_server.open_connections == 0)


def test_idle_keep_alive_connection_is_closed(strict_server):
    with socket.create_connection(("127.0.0.1", strict_server.port), timeout=5) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 200 ")
        started = time.monotonic()
        assert _closed_within(sock, 3)
        assert time.monotonic() - started < 2  # idle_timeout 0.5 s
    assert _wait(lambda: strict_server.open_connections == 0)


def test_connections_beyond_the_cap_get_503(strict_server, caplog):
    caplog.set_level(logging.INFO, logger="bot.edge")
    held = [socket.create_connection(("127.0.0.1", strict_server.port), timeout=5) for _ in range(3)]
    try:
        for sock in held:  # a byte each, so they are not idle: the cap, not the idle timeout, is tested
            sock.sendall(b"G")
        assert _wait(lambda: strict_server.open_connections == 3)
        with socket.create_connection(("127.0.0.1", strict_server.port), timeout=5) as extra:
            answer = extra.recv(4096)
            assert answer.startswith(b"HTTP/1.1 503 ") and b"\r\nRetry-After: 1\r\n" in answer
            assert _closed_within(extra, 1)
        assert strict_server.open_connections == 3  # refused as it was accepted, never counted
    finally:
        for sock in held:
            sock.close()
    assert _wait(lambda: strict_server.open_connections == 0)
    assert _status(_exchange(strict_server.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) == 200
    assert [r for r in caplog.records if "connections already open" in r.getMessage()]


@pytest.fixture
def shared_server(bot):
    server = SlackHttpServer(bot.app, host="127.0.0.1", port=0, max_connections=4, max_connections_per_client=2).start()
    yield server
    server.stop()


def _from(source: str, port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))


def test_one_address_past_its_share_is_refused_and_others_are_not(shared_server, caplog):
    caplog.set_level(logging.INFO, logger="bot.edge")
    port = shared_server.port
    held = [_from("127.0.0.1", port) for _ in range(2)]
    try:
        assert _wait(lambda: shared_server.open_connections == 2)
        with _from("127.0.0.1", port) as third:
            assert third.recv(4096).startswith(b"HTTP/1.1 503 ")
        # Another address is served on the connections the first one may not take.
        body = _body()
        with _from("127.0.0.2", port) as other:
            other.sendall(_request(body, _signed(body)))
            assert other.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n")
        # A slot given back is a slot the first address may use again.
        held.pop().close()
        assert _wait(lambda: shared_server.open_connections == 1)
        with _from("127.0.0.1", port) as again:
            again.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert again.recv(4096).startswith(b"HTTP/1.1 200 ")
    finally:
        for sock in held:
            sock.close()
    refusals = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused ")]
    assert refusals == ["refused - - from 127.0.0.1: 2 connections already open from this address"]


def test_the_global_cap_still_holds_across_addresses(shared_server):
    held = [_from(f"127.0.0.{n}", shared_server.port) for n in (1, 1, 2, 2)]
    try:
        for sock in held:  # a byte each: a request on its way keeps its slot (idle ones would be shed)
            sock.sendall(b"G")
        assert _wait(lambda: shared_server.open_connections == 4)
        with _from("127.0.0.3", shared_server.port) as fifth:
            assert fifth.recv(4096).startswith(b"HTTP/1.1 503 ")
    finally:
        for sock in held:
            sock.close()


def test_connection_limits_must_be_positive():
    from bot.edge.limits import ConnectionLimits

    with pytest.raises(ValueError):
        ConnectionLimits(total=0, per_client=1)
    with pytest.raises(ValueError):
        ConnectionLimits(total=1, per_client=0)


# -- what a refusal leaves in the log -------------------------------------------------------------
@pytest.mark.parametrize("case", ["forged", "stale", "replayed", "bad-length", "duplicate"])
def test_a_refusal_is_one_line_without_body_or_signature(slack_bot, caplog, case):
    body = _body("MARKER-of-the-body")
    headers = _signed(body, timestamp=int(time.time()) - 600 if case == "stale" else None)
    signature = dict(headers)["X-Slack-Signature"]
    if case == "forged":
        headers = [(n, "v0=" + "1" * 64 if n == "X-Slack-Signature" else v) for n, v in headers]
        signature = "1" * 64
    elif case == "replayed":
        assert _status(_exchange(slack_bot.server.port, _request(body, headers))) == 200
    elif case == "bad-length":
        headers = [(n, "-1" if n == "Content-Length" else v) for n, v in headers]
    elif case == "duplicate":
        headers.append(("X-Slack-Signature", signature))
    caplog.clear()
    caplog.set_level(logging.DEBUG)
    answer = _exchange(slack_bot.server.port, _request(body, headers))
    assert _status(answer) in (400, 401)
    # The replayed case's first, accepted request logs its own "handled" line whenever its handler ends:
    # the request log is not what this test is about.
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO and r.name != "gpubot.requests"]
    assert len(lines) == 1, lines
    assert lines[0].startswith("refused POST /slack/events from 127.0.0.1: "), lines
    everything = "\n".join(r.getMessage() for r in caplog.records)
    assert "MARKER" not in everything and signature.removeprefix("v0=") not in everything
