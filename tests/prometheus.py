"""A real Prometheus on loopback holding DCGM exporter series for the last hour.

The samples are written as OpenMetrics, backfilled into a TSDB block with
`promtool tsdb create-blocks-from openmetrics`, and served by `prometheus` with a config that scrapes
nothing. Both binaries come with Debian's `prometheus` package (scripts/fetch-promtool.sh installs it;
`make test` runs it); without them these tests skip, or fail under CI.
"""
from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import urllib3

from tests.fakes.ports import free_port
from tests.tools import required_tool

STEP_S = 30


@dataclass(frozen=True)
class Gpu:
    """One GPU of a pod as dcgm-exporter labels it, busy ``util`` percent throughout."""

    namespace: str
    pod: str
    gpu: int
    util: float
    fb_used: float = 30_000.0
    fb_total: float = 81_559.0
    node: str = "ip-10-0-14-201.ap-northeast-2.compute.internal"
    model: str = "NVIDIA A100-SXM4-80GB"
    exported: bool = False  # labels as Prometheus renames them behind a Service: exported_pod, ...


def binary(name: str) -> str:
    return required_tool(name, install="run `bash scripts/fetch-promtool.sh`")


def openmetrics(gpus: list[Gpu], *, now: float, minutes: int = 60) -> str:
    lines: list[str] = []
    for metric in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"):
        lines.append(f"# TYPE {metric} gauge")
        for g in gpus:
            prefix = "exported_" if g.exported else ""
            labels = (f'gpu="{g.gpu}",UUID="GPU-{g.pod}-{g.gpu}",device="nvidia{g.gpu}",modelName="{g.model}",'
                      f'Hostname="{g.node}",{prefix}namespace="{g.namespace}",{prefix}pod="{g.pod}",'
                      f'{prefix}container="pytorch"')
            value = {"DCGM_FI_DEV_GPU_UTIL": g.util, "DCGM_FI_DEV_FB_USED": g.fb_used,
                     "DCGM_FI_DEV_FB_FREE": g.fb_total - g.fb_used}[metric]
            for t in range(int(now) - minutes * 60, int(now) + 1, STEP_S):
                lines.append(f"{metric}{{{labels}}} {value:g} {t}")
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


@contextmanager
def prometheus(directory: Path, gpus: list[Gpu], *, now: float | None = None) -> Iterator[str]:
    """The base URL of a Prometheus serving ``gpus`` over the hour up to ``now``."""
    promtool, server = binary("promtool"), binary("prometheus")
    now = time.time() if now is None else now
    samples, db = directory / "samples.om", directory / "tsdb"
    samples.write_text(openmetrics(gpus, now=now))
    subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(samples), str(db)], check=True,
                   capture_output=True, timeout=60)
    config = directory / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1h\n")  # scrapes nothing: the backfilled block is all
    port = free_port()
    log = (directory / "prometheus.log").open("wb")
    proc = subprocess.Popen([server, f"--storage.tsdb.path={db}", f"--config.file={config}",
                             f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, proc, directory / "prometheus.log")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _wait_ready(url: str, proc: subprocess.Popen, log: Path, timeout: float = 20) -> None:
    http = urllib3.PoolManager(timeout=1.0, retries=False)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"prometheus exited {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            if http.request("GET", f"{url}/-/ready").status == 200:
                return
        except urllib3.exceptions.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"prometheus was not ready within {timeout}s: {log.read_text()[-2000:]}")
