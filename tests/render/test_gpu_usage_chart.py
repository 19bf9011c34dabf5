"""The diagnosis' GPU chart: PNG bytes that depend on the data only (a re-upload of the same picture is
recognisable by its hash), whatever the series hold."""
from __future__ import annotations

from bot.render import charts
from playbooks.gpu_series import GpuSeries, GpuUsage

END = 1_800_000_000.0


def _usage(n: int, *, memory: bool = True) -> GpuUsage:
    times = [END - 60 * m for m in range(60, -1, -1)]
    gpus = [GpuSeries("ml", "llama-0", str(i), util=tuple((t, 0.0 if i == 1 else 90.0) for t in times),
                      fb_used=tuple((t, 70_000.0) for t in times) if memory else ()) for i in range(n)]
    return GpuUsage(start=END - 3600, end=END, gpus=gpus)


def test_same_series_same_bytes() -> None:
    first = charts.gpu_usage_chart(_usage(8))
    assert first.startswith(b"\x89PNG") and first == charts.gpu_usage_chart(_usage(8))
    assert first != charts.gpu_usage_chart(_usage(7))


def test_more_gpus_than_lines_and_series_without_memory_still_draw() -> None:
    assert charts.gpu_usage_chart(_usage(charts.MAX_GPU_LINES + 4, memory=False)).startswith(b"\x89PNG")
