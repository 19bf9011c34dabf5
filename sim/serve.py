"""Start and stop the whole simulated environment: API server, EC2 (moto) and a kubeconfig."""

from __future__ import annotations

import shutil
import signal
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from sim import scenarios as scenario_files
from sim.cluster import Cluster
from sim.ec2 import Ec2Handle, start_ec2
from sim.authn import UserInfo
from sim.kubeconfig import ADMIN, SIM_USERS, user_kubeconfig_path, write_kubeconfig
from sim.scale import add_synthetic
from sim.scenarios import ScenarioInfo
from sim.server import SimServer

DEFAULT_CONTEXT = "gpubot-sim"


@dataclass
class SimHandle:
    url: str
    kubeconfig: Path
    context: str
    ec2_url: str | None
    cluster: Cluster
    scenarios: list[ScenarioInfo]
    region: str
    _server: SimServer
    _ec2: Ec2Handle | None
    _tmpdir: Path | None = None
    _stopped: bool = field(default=False, repr=False)
    # Each simulated person's own kubeconfig (sim/kubeconfig.py SIM_USERS), by user name.
    kubeconfigs: dict[str, Path] = field(default_factory=dict)

    def kubeconfig_for(self, user: str) -> Path:
        """The kubeconfig of one simulated person (admin, alice, bob, carol): same context, own token."""
        return self.kubeconfigs[user]

    def request_count(self) -> int:
        """Kubernetes API requests served since start or the last reset (control calls excluded)."""
        return self._server.control.request_count()

    def reset_requests(self) -> None:
        self._server.control.reset_requests()

    def request_log(self) -> list[str]:
        return self._server.control.request_log()

    def request_details(self) -> list[dict]:
        """Each request's method, target, status and Content-Type header, oldest first."""
        return self._server.control.request_details()

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._server.stop()
        if self._ec2 is not None:
            self._ec2.stop()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)

    def __enter__(self) -> "SimHandle":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_sim(
    *,
    scenarios: list[str] | None,
    port: int = 0,
    kubeconfig_out: Path | None = None,
    scale: tuple[int, int] | None = None,
    ec2: bool = True,
    directory: Path | str | None = None,
    context: str = DEFAULT_CONTEXT,
    region: str | None = None,
) -> SimHandle:
    """Load the cluster, start the servers, then write the kubeconfig (its appearance means ready).

    `scenarios=None` loads every scenario of `directory` (default: the seeds); `scale=(nodes, pods)`
    adds a synthetic cluster on top. `region` defaults to the scenarios' own.
    """
    cluster = Cluster()
    for user in SIM_USERS:
        cluster.authentication.add_token(user.token, UserInfo(user.username, user.groups))
    loaded = scenario_files.load(cluster, scenarios, directory)
    region = region or loaded.region
    if scale is not None:
        add_synthetic(cluster, nodes=scale[0], pods=scale[1])
    ec2_handle = start_ec2(region=region, offerings=loaded.offerings) if ec2 else None
    server: SimServer | None = None
    tmpdir: Path | None = None
    kubeconfigs: dict[str, Path] = {}
    try:
        server = SimServer(cluster, port=port).start()
        if kubeconfig_out is None:
            tmpdir = Path(tempfile.mkdtemp(prefix="gpubot-sim-"))
            kubeconfig_out = tmpdir / "kubeconfig"
        # The people's files first: the admin's (the one callers wait for) appearing means all are there.
        for user in (*[u for u in SIM_USERS if u != ADMIN], ADMIN):
            kubeconfigs[user.name] = write_kubeconfig(
                user_kubeconfig_path(kubeconfig_out, user),
                server_url=server.url,
                context=context,
                region=region,
                ec2_endpoint=ec2_handle.url if ec2_handle else None,
                user=user,
            )
    except BaseException:
        if server is not None:
            server.stop()
        if ec2_handle is not None:
            ec2_handle.stop()
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
        raise
    return SimHandle(
        url=server.url,
        kubeconfig=Path(kubeconfig_out),
        context=context,
        ec2_url=ec2_handle.url if ec2_handle else None,
        cluster=cluster,
        scenarios=loaded.scenarios,
        region=region,
        _server=server,
        _ec2=ec2_handle,
        _tmpdir=tmpdir,
        kubeconfigs=kubeconfigs,
    )


def serve_forever(handle: SimHandle) -> None:
    """Block until SIGINT or SIGTERM, then stop the servers. Call from the main thread."""
    stop = threading.Event()
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in signals}
    try:
        # A timeout keeps the wait short so the signal handler gets to run promptly.
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        handle.stop()
