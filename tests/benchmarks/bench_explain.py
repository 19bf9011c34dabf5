"""Benchmark explain_text on realistic mixed logs of 5 MB and 50 MB (a script, not a test).

    .venv/bin/python tests/benchmarks/bench_explain.py [--sizes 5 50]

Prints MB/s per size and the ratio of times; linear scanning gives a ratio close to the ratio of
sizes (10x for 5 MB vs 50 MB).
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from playbooks.explain import explain_text  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "text"

# Lines that dominate real training logs: mostly noise, a small share of problem lines.
NOISE = [
    "llama-3-8b-node-0-0:194:712 [0] NCCL INFO Channel 00/0 : 3[0] -> 0[0] [receive] via NET/Libfabric/0/GDRDMA",
    "{'loss': 1.8734, 'grad_norm': 0.4121, 'learning_rate': 1.98e-05, 'epoch': 0.12}",
    " 12%|█▏        | 118/1000 [04:12<31:26,  2.14s/it]",
    '{"level":"INFO","time":"2026-01-01T12:00:02.400Z","logger":"controller","message":"launched nodeclaim","commit":"1ad0d78","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"gpu-v278f"},"instance-type":"p4d.24xlarge","zone":"ap-northeast-2a","capacity-type":"on-demand"}',
    "  Normal   Pulled    5m29s   kubelet   Successfully pulled image \"nvidia/cuda:13.0.2-runtime-ubuntu22.04\" in 18.2s (18.2s including waiting). Image size: 1766399024 bytes.",
    "I0101 12:00:00.155069       1 server.go:146] Registered device plugin for 'nvidia.com/gpu' with Kubelet",
    "[2026-01-01 12:00:00,000] [INFO] [logging.py:128:log_dist] [Rank 0] step=1200, skipped=0, lr=[1.9e-05], mom=[(0.9, 0.999)]",
    "[rank3]:   File \"/usr/local/lib/python3.12/site-packages/torch/nn/modules/module.py\", line 928, in _apply",
]


def problem_lines() -> list[str]:
    lines = []
    for name in ("seed000_ofi_4126.log", "seed000_cuda_oom.log", "seed000_describe_events.txt", "seed002_pytorchjob_describe.txt"):
        lines.extend((FIXTURES / name).read_text().splitlines())
    return lines


def mixed_log(megabytes: float, *, seed: int = 7) -> str:
    rng = random.Random(seed)
    problems = problem_lines()
    target = int(megabytes * 1_000_000)
    out: list[str] = []
    size = 0
    while size < target:
        line = rng.choice(problems) if rng.random() < 0.05 else rng.choice(NOISE)
        out.append(line)
        size += len(line.encode()) + 1
    return "\n".join(out)


def bench(megabytes: float) -> float:
    text = mixed_log(megabytes)
    real_mb = len(text.encode()) / 1_000_000
    started = time.perf_counter()
    diagnosis = explain_text(text, source=f"bench {megabytes:g} MB")
    elapsed = time.perf_counter() - started
    print(
        f"{real_mb:6.1f} MB  {text.count(chr(10)) + 1:>9,} lines  {elapsed:7.2f} s  {real_mb / elapsed:6.1f} MB/s  "
        f"{len(diagnosis.findings)} findings, first: {diagnosis.findings[0].code if diagnosis.findings else '-'}"
    )
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=float, nargs=2, default=(5.0, 50.0), metavar=("SMALL_MB", "LARGE_MB"))
    args = parser.parse_args()
    small, large = args.sizes
    explain_text(mixed_log(0.5))  # warm-up: template environment, caches
    t_small, t_large = bench(small), bench(large)
    print(f"time ratio {large:g} MB / {small:g} MB: {t_large / t_small:.1f}x (size ratio {large / small:.1f}x)")


if __name__ == "__main__":
    main()
