"""Benchmark pattern matching on hostile 64 KB lines (a script, not a test).

    .venv/bin/python tests/benchmarks/bench_linear.py [--runs 3] [--top 15] [--baseline-full]

Prints, medians of --runs:
- every pattern that reads untrusted text (tests/playbooks/pathological.py finds them) against its
  pathological 64 KB lines: the worst time per pattern (slowest first), and the sum of those worst times;
- the catalogue's whole scan (scan_line) of 64 KB lines built from each rule's keywords and example;
- before/after: the three patterns that were quadratic under Python's ``re`` (scheduling, gating,
  training), compiled with ``re`` as they were, against the same lines compiled for RE2. ``re`` is timed
  at 8 and 16 KB and its 64 KB time extrapolated from the measured exponent; --baseline-full times
  64 KB too (minutes).
"""
from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from playbooks import linear  # noqa: E402
from playbooks.signatures import catalogue  # noqa: E402
from tests.playbooks import pathological  # noqa: E402

# The patterns as they were under re, each with the line that made it quadratic (a run the pattern
# repeats, then no match): playbooks/signatures/scheduling.py _HEADER, gating.py job.suspended,
# training.py deepspeed.cache_flushes.
BEFORE = (
    ("scheduling _HEADER", r"(?P<avail>\d+)/(?P<total>\d+) nodes are available: ", "1", ""),
    ("gating job.suspended", r"(?:\w+)?JobSuspended|\w+ \S+ is suspended\.|Job suspended|Suspended\s+True|type=Suspended", "a", " Suspended"),
    ("training deepspeed.cache_flushes", r"(?P<flushes>\d+) pytorch allocator cache flushes", "1", " allocator cache flushes"),
)


def timed(call, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def exhaust(pattern, line: str) -> None:
    for _ in pattern.finditer(line):
        pass


def per_pattern(runs: int, top: int) -> None:
    found = pathological.patterns()
    worst: list[tuple[float, str, str]] = []
    lines = 0
    for item in found:
        slowest = (0.0, "")
        for label, line in pathological.lines_for(item):
            lines += 1
            spent = timed(lambda: item.pattern.search(line), runs)
            slowest = max(slowest, (spent, label))
        worst.append((slowest[0], item.where, slowest[1]))
    worst.sort(reverse=True)
    engines = {type(item.pattern).__module__ + "." + type(item.pattern).__name__ for item in found}
    print(f"{len(found)} patterns ({', '.join(sorted(engines))}), {lines} lines of {pathological.LINE} characters, search, median of {runs}")
    print(f"  worst per pattern, slowest {top}:")
    for spent, where, label in worst[:top]:
        print(f"    {spent * 1000:8.2f} ms  {where}  [{label}]")
    print(f"  worst pattern: {worst[0][0] * 1000:.2f} ms; sum of every pattern's worst: {sum(w[0] for w in worst):.2f} s")


def whole_scan(runs: int) -> None:
    worst = (0.0, "")
    total = 0.0
    count = 0
    for rule in catalogue.ALL_RULES:
        for label, line in pathological.catalogue_lines(rule):
            spent = timed(lambda: catalogue.scan_line(line, source="bench"), runs)
            total += spent
            count += 1
            worst = max(worst, (spent, f"{rule.name} [{label}]"))
    print(f"catalogue scan_line, {count} lines of {pathological.LINE} characters from {len(catalogue.ALL_RULES)} rules' keywords and examples:")
    print(f"  worst line {worst[0] * 1000:.2f} ms ({worst[1]}), all lines {total:.2f} s")


def before_after(runs: int, full: bool) -> None:
    print("before (re, as the patterns were) / after (RE2, playbooks.linear), the same lines:")
    for name, source, run, tail in BEFORE:
        old, new = re.compile(source), linear.compile(source)
        sizes = [8 * 1024, 16 * 1024] + ([pathological.LINE] if full else [])
        measured = {}
        for size in sizes:
            line = run * (size - len(tail)) + tail
            measured[size] = timed(lambda: exhaust(old, line), 1 if size == pathological.LINE else runs)
        small, large = 8 * 1024, 16 * 1024
        exponent = math.log(measured[large] / measured[small], 2)
        at_64k = measured.get(pathological.LINE)
        estimate = measured[large] * (pathological.LINE / large) ** exponent
        line = run * (pathological.LINE - len(tail)) + tail
        after = timed(lambda: exhaust(new, line), runs)
        before = f"{at_64k:.1f} s measured" if at_64k is not None else f"~{estimate:.0f} s extrapolated"
        print(f"  {name}: re {measured[small] * 1000:.0f} ms at 8 KB, {measured[large] * 1000:.0f} ms at 16 KB "
              f"(time ~ n^{exponent:.1f}), 64 KB {before}; RE2 64 KB {after * 1000:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--baseline-full", action="store_true", help="also time re at 64 KB (minutes)")
    args = parser.parse_args()
    before_after(args.runs, args.baseline_full)
    per_pattern(args.runs, args.top)
    whole_scan(args.runs)


if __name__ == "__main__":
    main()
