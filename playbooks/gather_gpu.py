"""Gathering the GPUs' utilisation and memory for the running pods of a diagnosis (optional: only
when a metrics source is configured). A source that cannot answer, or has nothing for these pods,
becomes a note; the diagnosis goes on without the metrics."""
from __future__ import annotations

from playbooks.facts import Facts, PodFacts
from playbooks.gpu_series import GpuMetrics, GpuMetricsUnavailable

GPU = "nvidia.com/gpu"


def running_gpu_pods(facts: Facts) -> list[PodFacts]:
    return [p for p in facts.pods if p.phase == "Running" and p.count(GPU) > 0]


def gather_gpu_usage(facts: Facts, *, metrics: GpuMetrics) -> None:
    pods = running_gpu_pods(facts)
    if not pods:
        return
    try:
        usage = metrics.usage([(p.namespace, p.name) for p in pods])
    except GpuMetricsUnavailable as exc:
        facts.gaps.append(f"GPU metrics could not be read: {exc}; the diagnosis is made without them.")
        return
    if not usage.gpus:
        names = ", ".join(p.name for p in pods[:3]) + (f" and {len(pods) - 3} more" if len(pods) > 3 else "")
        facts.gaps.append(f"GPU metrics: Prometheus has no DCGM exporter series for {names} in the last hour "
                          "(is dcgm-exporter scraped, with its Kubernetes pod mapping on?).")
        return
    facts.gpu_usage = usage
