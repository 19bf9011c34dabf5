"""GPU utilisation and memory over time, per GPU of a pod, as read from the DCGM exporter's metrics.

Plain data handed to analyzers and renderers; the reading itself happens in the bot's gateway
(bot.gateway.prometheus), which the engine is given as a :class:`GpuMetrics`. Metric names and units
are those of NVIDIA/dcgm-exporter's etc/default-counters.csv: DCGM_FI_DEV_GPU_UTIL (%),
DCGM_FI_DEV_FB_USED and DCGM_FI_DEV_FB_FREE (MiB).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

from playbooks.facts import FactsUnavailable

UTIL = "DCGM_FI_DEV_GPU_UTIL"
FB_USED = "DCGM_FI_DEV_FB_USED"
FB_FREE = "DCGM_FI_DEV_FB_FREE"
METRICS = (UTIL, FB_USED, FB_FREE)

Samples = tuple[tuple[float, float], ...]  # (unix seconds, value), oldest first


@dataclass(frozen=True)
class GpuSeries:
    """One GPU a pod holds: who holds it, where, and its samples over the window."""

    namespace: str
    pod: str
    gpu: str  # the exporter's device index, "0".."7"
    uuid: str = ""
    model: str = ""
    node: str = ""  # the exporter's Hostname label
    util: Samples = ()  # percent busy
    fb_used: Samples = ()  # MiB
    fb_free: Samples = ()  # MiB

    @property
    def label(self) -> str:
        return f"{self.pod} GPU {self.gpu}"

    @property
    def fb_total(self) -> float | None:
        """Used plus free at the last sample both have: the card's framebuffer in MiB."""
        if not self.fb_used or not self.fb_free:
            return None
        return self.fb_used[-1][1] + self.fb_free[-1][1]


@dataclass
class GpuUsage:
    """The series read for a diagnosis' pods between ``start`` and ``end`` (unix seconds)."""

    start: float
    end: float
    gpus: list[GpuSeries] = field(default_factory=list)
    pods: tuple[tuple[str, str], ...] = ()  # (namespace, pod) asked for


class GpuMetricsUnavailable(FactsUnavailable):
    """The metrics source cannot answer (unreachable, refused the query, a reply that is not its API):
    the message, one line, becomes the diagnosis' note."""


class GpuMetrics(Protocol):  # what the engine needs from bot.gateway.prometheus.PrometheusGpuMetrics
    def usage(self, pods: Sequence[tuple[str, str]]) -> GpuUsage: ...
