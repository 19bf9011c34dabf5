"""EC2 for the simulated cluster: moto in server mode on loopback, reached by boto3 over real HTTP."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from moto.server import ThreadedMotoServer


@dataclass
class Ec2Handle:
    url: str
    _server: ThreadedMotoServer

    def stop(self) -> None:
        self._server.stop()


def start_ec2(*, host: str = "127.0.0.1", port: int = 0) -> Ec2Handle:
    """moto ships real instance-type and offering data, so nothing needs seeding.

    moto keeps its backends in process-wide state: two handles in one process share EC2 data.
    """
    # moto serves through werkzeug, which logs every request line to stderr; the demo is not the place.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address=host, port=port, verbose=False)
    server.start()
    bound_host, bound_port = server.get_host_and_port()
    return Ec2Handle(url=f"http://{bound_host}:{bound_port}", _server=server)
