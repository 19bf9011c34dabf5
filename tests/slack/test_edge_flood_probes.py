"""The probe port cannot be taken from the kubelet: connections held from many addresses, reopened as
soon as the server closes them, leave `GET /healthz` and `/readyz` answered every time, because a full
port sheds its longest-idle connection for a new one (bot/edge/limits.py). Real sockets on loopback;
127.0.0.2 and up are other client addresses."""
from __future__ import annotations

import selectors
import socket
import struct
import threading
import time
import urllib.error
import urllib.request

import pytest

from bot.edge.probes import PROBE_CONNECTIONS, PROBE_CONNECTIONS_PER_CLIENT, ProbeServer


class Flood:
    """``per_address`` idle connections from each of ``addresses``, each reopened as soon as the server
    closes it (idle timeout, shed, or a 503), until stopped."""

    def __init__(self, port: int, addresses: list[str], per_address: int) -> None:
        self._port = port
        self._selector = selectors.DefaultSelector()
        self._stop = threading.Event()
        self.reopened = 0
        for address in addresses:
            for _ in range(per_address):
                self._open(address)
        self._thread = threading.Thread(target=self._keep_open, name="flood", daemon=True)

    @property
    def held(self) -> int:
        return len(self._selector.get_map())

    def __enter__(self) -> "Flood":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(30)
        for key in list(self._selector.get_map().values()):
            key.fileobj.close()
        self._selector.close()

    def _open(self, address: str) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self._port), timeout=10, source_address=(address, 0))
        except OSError:
            return  # tried again at the next close
        # Closed with a reset, not into TIME_WAIT: a thousand ports left in TIME_WAIT for a minute
        # would make other servers on this machine fail to bind a port just found free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self._selector.register(sock, selectors.EVENT_READ, address)

    def _keep_open(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._selector.select(timeout=0.1):
                self._selector.unregister(key.fileobj)
                key.fileobj.close()  # closed by the server, or answered 503: either way, open another
                self._open(key.data)
                self.reopened += 1


def _status(port: int, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0  # reset or closed before an answer


def _wait(condition, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def probes():
    server = ProbeServer(ready=lambda: True, host="127.0.0.1", port=0).start()
    yield server
    server.stop()


def _addresses(count: int) -> list[str]:
    return [f"127.0.0.{n}" for n in range(2, 2 + count)]


def test_eight_addresses_holding_their_share_leave_the_probes_answered(probes):
    # The flood that failed the probe 30 times out of 30: 8 addresses x 8 connections, reopened.
    with Flood(probes.port, _addresses(8), PROBE_CONNECTIONS_PER_CLIENT) as flood:
        assert _wait(lambda: probes.limits.open >= 8 * PROBE_CONNECTIONS_PER_CLIENT)
        statuses = []
        for _ in range(30):
            statuses.append(_status(probes.port, "/healthz"))
            time.sleep(0.1)
        assert statuses == [200] * 30
        assert _status(probes.port, "/readyz") == 200
        assert flood.held >= 8 * PROBE_CONNECTIONS_PER_CLIENT - 1  # the flood was in place throughout


def test_a_flood_that_fills_the_probe_port_is_shed_for_the_kubelet(probes):
    # More addresses than the port has room for: every slot is taken, and each probe's connection takes
    # the slot of the longest-idle one, which the flood reopens at once.
    addresses = _addresses(PROBE_CONNECTIONS // PROBE_CONNECTIONS_PER_CLIENT + 8)
    with Flood(probes.port, addresses, PROBE_CONNECTIONS_PER_CLIENT) as flood:
        assert _wait(lambda: probes.limits.open == PROBE_CONNECTIONS)
        shed_before = probes.limits.shed_count
        statuses = [_status(probes.port, path) for path in ("/healthz", "/readyz") * 15]
        assert statuses == [200] * 30
        assert probes.limits.shed_count > shed_before
        assert flood.reopened > 0
