"""Benchmark `gpubot explain`: start-up on a small paste, and large logs against grep (a script, not a test).

    .venv/bin/python tests/benchmarks/bench_explain.py [--sizes 5 50] [--runs 3]

Prints, each beside its baseline measured in the same run (medians):
- start-up: `python -c pass` vs `gpubot explain` on a one-line paste (bytecode compiled first, as an
  installed package has it). Goal (issue 12): a few times Python's own start-up.
- large logs: `grep -E` with the catalogue's keywords over the same file, vs explain's prefilter alone
  and vs the whole explain (Hyperscan, then the pure-Python fallback). Goal: explain within 5x grep.
- linearity: the ratio of times for the two sizes against the ratio of sizes.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from playbooks import explain as explain_module  # noqa: E402
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


# A training job's own log: what the job prints between problems, none of it a catalogue keyword.
TRAINING_NOISE = [line for line in NOISE if "kubelet" not in line.lower() and "nodeclaim" not in line and "Registered" not in line] + [
    "llama-3-8b-node-0-0:194:712 [0] NCCL INFO comm 0x55d5c8a0 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 101c0 - Init COMPLETE",
    "[2026-01-01 12:00:03,120] [INFO] [stage3.py:2021:step] step=1201 loss=1.8731 grad_norm=0.41",
    "Epoch 1:  37%|███▋      | 370/1000 [12:01<20:28,  1.95s/it, loss=1.87, lr=1.98e-05]",
]
MIXES = {"cluster": (NOISE, 0.05), "training": (TRAINING_NOISE, 0.01)}


def mixed_log(megabytes: float, *, seed: int = 7, mix: str = "cluster") -> str:
    """``cluster``: 5 % problem lines among noise where a third of the lines (Karpenter launches, kubelet
    pulls, device plugin registrations) carry keywords and must be read; ``training``: a training job's
    log, 1 % problem lines among output that carries none."""
    noise, share = MIXES[mix]
    rng = random.Random(seed)
    problems = problem_lines()
    target = int(megabytes * 1_000_000)
    out: list[str] = []
    size = 0
    while size < target:
        line = rng.choice(problems) if rng.random() < share else rng.choice(noise)
        out.append(line)
        size += len(line.encode()) + 1
    return "\n".join(out)


def median_time(action, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def startup(runs: int) -> None:
    python = [sys.executable]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as paste:
        paste.write("Warning  FailedScheduling  12s  default-scheduler  0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    explain = [*python, "-m", "bot.cli", "explain", paste.name]
    subprocess.run(explain, env=env, cwd=ROOT, check=True, capture_output=True)  # writes the bytecode once

    def run(argv):
        return lambda: subprocess.run(argv, env=env, cwd=ROOT, check=True, capture_output=True)

    bare = median_time(run([*python, "-c", "pass"]), runs * 3)
    full = median_time(run(explain), runs * 3)
    os.unlink(paste.name)
    print(f"start-up: python -c pass {bare * 1000:.0f} ms, gpubot explain (one-line paste) {full * 1000:.0f} ms "
          f"= {full / bare:.1f}x Python's start-up", flush=True)


def large(megabytes: float, runs: int, mix: str) -> float:
    text = mixed_log(megabytes, mix=mix)
    real_mb = len(text.encode()) / 1_000_000
    words = explain_module._prefilter().words
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as log:
        log.write(text)
    grep = ["grep", "-E", "-c", "|".join(re.escape(w) for w in words), log.name]
    t_grep = median_time(lambda: subprocess.run(grep, check=True, capture_output=True), runs)
    os.unlink(log.name)
    t_pre = median_time(lambda: sum(1 for _ in explain_module._prefilter().lines(text)), runs)
    diagnosis = None

    def explain():
        nonlocal diagnosis
        diagnosis = explain_text(text, source=f"bench {megabytes:g} MB")

    t_explain = median_time(explain, runs)
    fallback = explain_module.Prefilter(words)
    fallback._database = False  # as without the hyperscan wheel
    real = explain_module._prefilter
    explain_module._prefilter = lambda: fallback
    try:
        t_python = median_time(lambda: explain_text(text), 1)
    finally:
        explain_module._prefilter = real
    first = diagnosis.findings[0].code if diagnosis.findings else "-"
    print(f"{mix:8s} {real_mb:5.1f} MB, {text.count(chr(10)) + 1:,} lines, {len(words)} keywords: grep -E {t_grep:.2f} s | "
          f"prefilter {t_pre:.2f} s ({t_pre / t_grep:.1f}x grep) | explain {t_explain:.2f} s ({t_explain / t_grep:.1f}x grep, "
          f"{real_mb / t_explain:.0f} MB/s) | explain without hyperscan {t_python:.2f} s ({t_python / t_grep:.1f}x grep) | "
          f"{len(diagnosis.findings)} findings, first {first}", flush=True)
    return t_explain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=float, nargs=2, default=(5.0, 50.0), metavar=("SMALL_MB", "LARGE_MB"))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    startup(args.runs)
    small, large_mb = args.sizes
    explain_text(mixed_log(0.5))  # warm-up: templates, caches, the Hyperscan database
    for mix in MIXES:
        t_small, t_large = large(small, args.runs, mix), large(large_mb, args.runs, mix)
        print(f"{mix:8s} time ratio {large_mb:g} MB / {small:g} MB: {t_large / t_small:.1f}x "
              f"(size ratio {large_mb / small:.1f}x)", flush=True)


if __name__ == "__main__":
    main()
