"""Benchmark: a flood of forged requests against HTTP mode, and real commands answered during it.

Three processes, as deployed: the simulated cluster (`gpubot sim serve`), the bot (`gpubot serve`, HTTP
mode), and this one (the fake Slack Web API, the flooding client threads and one prober). The flood is
``--requests`` forged requests (a plausible body and timestamp, a wrong signature) over kept-alive
connections from ``--clients`` threads; meanwhile a signed ``/gpu help`` goes every 100 ms and the time
to its HTTP answer is measured. Prints the flood's throughput, the bot's resident memory before and
after, and the probes' ack latency (p50/p99/max). Exits non-zero when a forged request was not refused
with 401, or a probe was not answered 200 within Slack's 3 s.
Run: make bench  (or .venv/bin/python tests/benchmarks/bench_flood.py --requests 5000)
"""
from __future__ import annotations

import argparse
import http.client
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.benchmarks.served import served_bot  # noqa: E402
from tests.fakes import workspace as ws  # noqa: E402
from tests.fakes.signing import SlackRequests  # noqa: E402

SLACK_ACK_LIMIT = 3.0
PROBE_EVERY = 0.1


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise SystemExit(f"no VmRSS for process {pid}")


def _flood(port: int, count: int) -> int:
    """Send ``count`` forged requests over one kept-alive connection; the number not refused with 401."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    wrong = 0
    try:
        for i in range(count):
            body = (f"token=x&team_id=T0001&channel_id=C0TRAIN&user_id=U0MALLORY&command=%2Fgpu"
                    f"&text=nodes&trigger_id=9.9.{i}").encode()
            headers = {"Content-Type": "application/x-www-form-urlencoded",
                       "X-Slack-Request-Timestamp": str(int(time.time())),
                       "X-Slack-Signature": f"v0={i:064x}"}
            try:
                conn.request("POST", "/slack/events", body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                wrong += response.status != 401
            except (OSError, http.client.HTTPException):
                wrong += 1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    finally:
        conn.close()
    return wrong


def _probe(send: SlackRequests, stop: threading.Event) -> list[tuple[int, float]]:
    """Signed /gpu help every PROBE_EVERY seconds until ``stop``: (status, seconds to the answer)."""
    answers = []
    while not stop.is_set():
        started = time.perf_counter()
        try:
            status = send.slash_command("help").status
        except OSError:
            status = 0
        answers.append((status, time.perf_counter() - started))
        stop.wait(max(0.0, PROBE_EVERY - (time.perf_counter() - started)))
    return answers


def _measure(port: int, bot_pid: int, *, requests: int, clients: int) -> int:
    send = SlackRequests(f"http://127.0.0.1:{port}", secret=ws.SIGNING_SECRET, timeout=30)
    send.slash_command("help")  # warm up imports once
    rss_before = _rss_kib(bot_pid)
    stop = threading.Event()
    shares = [requests // clients + (i < requests % clients) for i in range(clients)]
    with ThreadPoolExecutor(max_workers=clients + 1) as pool:
        prober = pool.submit(_probe, send, stop)
        started = time.perf_counter()
        not_refused = sum(pool.map(_flood, [port] * clients, shares))
        elapsed = time.perf_counter() - started
        stop.set()
        probes = prober.result()
    rss_after = _rss_kib(bot_pid)
    latencies = sorted(seconds for _, seconds in probes)
    failed = [status for status, _ in probes if status != 200]
    p99 = latencies[min(len(latencies) - 1, int(round(0.99 * len(latencies))) - 1)]
    print(f"flood: {requests} forged requests from {clients} clients in {elapsed:.1f} s "
          f"({requests / elapsed:.0f} requests/s), {not_refused} not refused with 401")
    print(f"bot memory (VmRSS): {rss_before / 1024:.1f} MiB before, {rss_after / 1024:.1f} MiB after "
          f"({(rss_after - rss_before) / 1024:+.1f} MiB)")
    print(f"ack latency of {len(probes)} signed /gpu help during the flood: p50 {statistics.median(latencies) * 1000:.0f} ms, "
          f"p99 {p99 * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms, {len(failed)} not answered 200 "
          f"(Slack allows {SLACK_ACK_LIMIT * 1000:.0f} ms)")
    problems = []
    if not_refused:
        problems.append(f"{not_refused} forged requests were not refused with 401")
    if failed or latencies[-1] >= SLACK_ACK_LIMIT:
        problems.append(f"real commands went unanswered ({len(failed)}) or slower than {SLACK_ACK_LIMIT:g} s")
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50_000, help="forged requests in the flood")
    parser.add_argument("--clients", type=int, default=8, help="flooding client threads")
    args = parser.parse_args(argv)
    with served_bot() as served:
        return _measure(served.port, served.pid, requests=args.requests, clients=args.clients)

if __name__ == "__main__":
    sys.exit(main())
