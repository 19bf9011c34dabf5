"""gpu.idle: GPUs a running pod holds that sat idle, from the DCGM exporter's series (facts.gpu_usage).

A GPU counts as idle when every utilisation sample over the last ``IDLE_MINUTES`` is under
``IDLE_PERCENT`` and the samples cover that whole stretch (a pod that just started, or a series with
a hole in it, is not judged). It is information, never the cause of a failure: capacity held and not
used (a rank waiting on data or on a stuck collective, a pod asking for more GPUs than its code uses).
"""
from __future__ import annotations

from typing import Iterable

from playbooks.facts import Facts
from playbooks.gpu_series import GpuSeries, GpuUsage
from playbooks.model import Evidence, Finding

CODE = "gpu.idle"
IDLE_PERCENT = 5.0
IDLE_MINUTES = 30
# Samples may start this late into the stretch and still cover it (one scrape and one query step).
COVER_SLACK_S = 120


def analyze(facts: Facts) -> Iterable[Finding]:
    usage: GpuUsage | None = facts.gpu_usage
    if usage is None:
        return []
    running = {(p.namespace, p.name) for p in facts.pods if p.phase == "Running"}
    held = [g for g in usage.gpus if (g.namespace, g.pod) in running]
    since = usage.end - IDLE_MINUTES * 60
    idle = [g for g in held if _idle(g, since=since)]
    if not idle:
        return []
    busy = [g for g in held if g not in idle]
    return [Finding(
        code=CODE, severity="info", confidence="high",
        title=f"{len(idle)} of {len(held)} GPUs held by {_holder(facts, idle)} sat idle for the last "
              f"{IDLE_MINUTES} minutes (under {IDLE_PERCENT:g}% busy)",
        detail=_detail(idle, busy, since=since),
        evidence=[_evidence(g, since=since) for g in idle],
    )]


def _window(samples, since: float) -> list[float]:
    return [v for t, v in samples if t >= since]


def _idle(gpu: GpuSeries, *, since: float) -> bool:
    values = _window(gpu.util, since)
    covered = bool(gpu.util) and gpu.util[0][0] <= since + COVER_SLACK_S
    return covered and bool(values) and max(values) < IDLE_PERCENT


def _holder(facts: Facts, idle: list[GpuSeries]) -> str:
    pods = {g.pod for g in idle}
    if facts.target.kind in ("pod", "node", "nodepool") and len(pods) == 1:
        return f"pod {next(iter(pods))}"
    return facts.target.name


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _memory(gpu: GpuSeries) -> str:
    if not gpu.fb_used:
        return ""
    used, total = gpu.fb_used[-1][1], gpu.fb_total
    return f"; {used:,.0f} MiB of {total:,.0f} MiB memory in use" if total else f"; {used:,.0f} MiB memory in use"


def _line(gpu: GpuSeries, *, since: float) -> str:
    values = _window(gpu.util, since)
    where = f" on node {gpu.node}" if gpu.node else ""
    model = f" ({gpu.model})" if gpu.model else ""
    return (f"GPU {gpu.gpu} of pod {gpu.pod}{where}{model}: at most {max(values):g}% busy, "
            f"{_mean(values):.1f}% on average over {len(values)} samples{_memory(gpu)}")


def _detail(idle: list[GpuSeries], busy: list[GpuSeries], *, since: float) -> str:
    lines = "; ".join(_line(g, since=since) for g in idle[:8])
    more = f"; and {len(idle) - 8} more" if len(idle) > 8 else ""
    others = ""
    if busy:
        others = (f" The other {len(busy)} GPU{'s' if len(busy) > 1 else ''} averaged "
                  f"{_mean([_mean(_window(g.util, since)) for g in busy]):.0f}% busy.")
    return (f"{lines}{more}.{others} A GPU a running pod holds but does not use is capacity nobody else gets: "
            "look for a rank waiting on data or on a stuck collective, or a pod asking for more GPUs than its "
            "code uses (CUDA_VISIBLE_DEVICES, the launcher's --nproc-per-node).")


def _evidence(gpu: GpuSeries, *, since: float) -> Evidence:
    values = _window(gpu.util, since)
    memory = f", DCGM_FI_DEV_FB_USED {gpu.fb_used[-1][1]:g} MiB" if gpu.fb_used else ""
    return Evidence(source=f"prometheus pod/{gpu.namespace}/{gpu.pod} gpu {gpu.gpu}",
                    text=f"DCGM_FI_DEV_GPU_UTIL max {max(values):g} %, mean {_mean(values):.1f} % over the last "
                         f"{IDLE_MINUTES} min{memory}")
