"""Benchmark chart rendering (a script, not a test): each chart must render in under 300 ms.

    .venv/bin/python tests/benchmarks/bench_charts.py [--runs 15]

Prints, for the three charts at their largest (MAX_BARS NodePools, MAX_BARS nodes, 8 weeks of 30 codes),
the first render in this process (matplotlib's import and font loading included), the median and worst
wall time of --runs renders after it, the median CPU time of those renders (what rendering costs on a
machine busy with other work, where wall time also counts waiting for a core), and the PNG's size.
Exits 1 when a median CPU time is 300 ms or more.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bot.render import charts  # noqa: E402
from playbooks.fleet import GpuNode, GpuNodePool, NodePoolsReport, NodesReport  # noqa: E402

BUDGET_S = 0.300


def _pools() -> NodePoolsReport:
    pools = [GpuNodePool(name=f"gpu-training-{i:02d}", auto_mode=i % 2 == 0, gpu_limit=None if i % 5 == 0 else 64,
                         gpu_used=(i * 7) % 65, consolidation_policy="WhenEmpty", consolidate_after="1h", budgets=(),
                         ready=True, do_not_disrupt_risk=False) for i in range(charts.MAX_BARS + 10)]
    return NodePoolsReport(cluster="prod-us-west-2", nodepools=pools)


def _nodes() -> NodesReport:
    nodes = [GpuNode(name=f"ip-10-0-{i // 250}-{i % 250}.us-west-2.compute.internal", nodepool="gpu-training-01",
                     instance_type="p5.48xlarge", zone="us-west-2a", gpu_capacity=8, gpu_allocatable=8 - (i % 4 == 0),
                     ready=i % 9 != 0) for i in range(500)]
    return NodesReport(cluster="prod-us-west-2", nodes=nodes)


def _weeks() -> list[charts.WeekCounts]:
    now = datetime(2026, 11, 26, 3, 0, tzinfo=timezone.utc)
    opened = [(now - timedelta(minutes=97 * i), f"code.{(i * 7) % 30:02d}") for i in range(2000)]
    return charts.incidents_by_week(opened, now=now)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    cases = [("nodepools (20 of 30 NodePools)", charts.nodepools_chart, _pools()),
             ("nodes (20 of 500 nodes)", charts.nodes_chart, _nodes()),
             ("incidents by week (8 weeks, 30 codes)", charts.incidents_chart, _weeks())]
    slow = False
    print(f"{'chart':40} {'first':>9} {'median':>9} {'worst':>9} {'CPU med':>9} {'PNG':>9}")
    for name, render, data in cases:
        started = time.perf_counter()
        png = render(data)
        first = time.perf_counter() - started
        times, cpu = [], []
        for _ in range(args.runs):
            started, started_cpu = time.perf_counter(), time.process_time()
            render(data)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
        median, cpu_median = statistics.median(times), statistics.median(cpu)
        slow |= cpu_median >= BUDGET_S
        print(f"{name:40} {first * 1000:7.0f}ms {median * 1000:7.0f}ms {max(times) * 1000:7.0f}ms "
              f"{cpu_median * 1000:7.0f}ms {len(png) / 1024:7.1f}KB")
    print(f"budget: {BUDGET_S * 1000:.0f} ms per chart (median CPU time) -> {'OVER' if slow else 'ok'}")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
