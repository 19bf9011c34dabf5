"""Benchmark: time and API requests per diagnosis, small cluster vs 5000 nodes + 100000 pods.

Prints medians over repeated runs (one process, one machine) rather than asserting times, which
would flake on a noisy machine. Run: make bench  (or .venv/bin/python tests/benchmarks/bench_diagnose.py)
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.service import DiagnosisService  # noqa: E402
from bot.settings import load_settings  # noqa: E402
from sim.serve import start_sim  # noqa: E402

REPEAT = 5
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def measure(scale):
    os.environ.update(CREDENTIALS)
    started = time.perf_counter()
    with start_sim(scenarios=None, scale=scale) as sim:
        built = time.perf_counter() - started
        service = DiagnosisService(load_settings({"KUBECONFIG": str(sim.kubeconfig), **CREDENTIALS}))
        rows = {}
        for info in sim.scenarios:
            times, requests = [], set()
            for _ in range(REPEAT):
                sim.reset_requests()
                t0 = time.perf_counter()
                service.diagnose(info.target, namespace=info.namespace)
                times.append(time.perf_counter() - t0)
                requests.add(sim.request_count())
            rows[info.name] = (statistics.median(times), sorted(requests))
        service.close()
    return built, rows


def main() -> None:
    small_built, small = measure(None)
    big_built, big = measure((5000, 100000))
    print(f"cluster start: small {small_built:.1f} s, 5000 nodes + 100000 pods {big_built:.1f} s")
    print(f"{'scenario':<40} {'median ms small':>15} {'median ms big':>14} {'requests small/big':>19}")
    for name in small:
        (ts, rs), (tb, rb) = small[name], big[name]
        print(f"{name:<40} {ts * 1000:>15.0f} {tb * 1000:>14.0f} {str(rs[0]) + '/' + str(rb[0]):>19}")
    ratios = [big[n][0] / small[n][0] for n in small]
    print(f"median time ratio big/small: {statistics.median(ratios):.2f}; "
          f"requests equal in every scenario: {all(small[n][1] == big[n][1] for n in small)}")


if __name__ == "__main__":
    main()
