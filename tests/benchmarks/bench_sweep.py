"""Benchmark: one sweep of a large cluster: wall time, API requests and the sweeping process's memory.

The simulated cluster (`gpubot sim serve --scale nodes=5000,pods=100000`, 2,500 GPU nodes and 20,000
GPU pods, on top of the sick sweep scenario: one pending pod to diagnose, a consolidating NodePool,
sick nodes) runs in its own process; each sweep runs in a fresh process, so its peak RSS is the sweep's
alone. Prints medians over RUNS. Goal: under 5 s and 300 MB on the 2-core machine; exits 1 only when
far beyond it (a noisy shared machine must not fail the build).
Run: .venv/bin/python tests/benchmarks/bench_sweep.py
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

RUNS = 3
SCALE = "nodes=5000,pods=100000"
GOAL_SECONDS, GOAL_MB = 5.0, 300.0
FAR_BEYOND = 3.0  # fail only past three times the goal
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def child(kubeconfig: str) -> None:
    """One sweep in this fresh process; prints its figures as JSON."""
    from bot.alerts.sweep import sweep
    from bot.service import DiagnosisService
    from bot.settings import load_settings

    settings = load_settings({**os.environ, "KUBECONFIG": kubeconfig, **CREDENTIALS})
    service = DiagnosisService(settings)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    result = sweep(service, settings)
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    service.close()
    print(json.dumps({"wall": wall, "own_requests": result.requests, "problems": len(result.problems),
                      "diagnosed": result.diagnosed, "not_checked": result.not_checked,
                      "rss_before_mb": before / 1024, "rss_peak_mb": peak / 1024}))


def _control(url: str, path: str, *, post: bool = False) -> dict:
    request = urllib.request.Request(url + path, method="POST" if post else "GET")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"{}")


def _server_url(kubeconfig: Path) -> str:
    import yaml

    return yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]


def main() -> int:
    env = {**os.environ, **CREDENTIALS, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        started = time.perf_counter()
        sim = subprocess.Popen([sys.executable, "-m", "bot.cli", "sim", "serve", "--scale", SCALE,
                                "--scenario-dir", str(ROOT / "sim" / "scenarios" / "sweep"),
                                "--scenario", "sweep-sick-gpu-fleet", "--kubeconfig-out", str(kubeconfig)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while not kubeconfig.exists():
                if sim.poll() is not None or time.perf_counter() - started > 600:
                    raise SystemExit("the simulated cluster did not start")
                time.sleep(0.2)
            print(f"simulated cluster ({SCALE}) up in {time.perf_counter() - started:.0f} s")
            url = _server_url(kubeconfig)
            runs = []
            for _ in range(RUNS):
                _control(url, "/sim/requests/reset", post=True)
                out = subprocess.run([sys.executable, __file__, "--child", str(kubeconfig)], env=env, check=True,
                                     capture_output=True, text=True).stdout
                figures = json.loads(out.strip().splitlines()[-1])
                figures["requests"] = _control(url, "/sim/requests")["count"]
                runs.append(figures)
        finally:
            sim.terminate()
            sim.wait(timeout=60)
    wall = statistics.median(r["wall"] for r in runs)
    requests = statistics.median(r["requests"] for r in runs)
    own = statistics.median(r["own_requests"] for r in runs)
    peak = statistics.median(r["rss_peak_mb"] for r in runs)
    grown = statistics.median(r["rss_peak_mb"] - r["rss_before_mb"] for r in runs)
    last = runs[-1]
    print(f"sweep of {SCALE}, median of {RUNS} runs (fresh process each):")
    print(f"  wall time      {wall:6.2f} s   (goal < {GOAL_SECONDS:g} s)")
    print(f"  API requests   {requests:6.0f}     ({own:.0f} lists of the sweep, the rest its {last['diagnosed']} diagnosis)")
    print(f"  peak RSS       {peak:6.0f} MB  (goal < {GOAL_MB:g} MB; {grown:.0f} MB of it during the sweep)")
    print(f"  problems       {last['problems']:6d}     not checked: {last['not_checked'] or 'nothing'}")
    if wall > FAR_BEYOND * GOAL_SECONDS or peak > FAR_BEYOND * GOAL_MB:
        print("far beyond the goal", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        sys.exit(main())
