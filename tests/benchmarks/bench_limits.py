"""Benchmark: 200 concurrent /gpu commands against a fake Slack that enforces Slack's published limits
(tests/fakes/slack_limits.py: 429 with Retry-After past Tier 3's 50 chat.update a minute, one post a
second per channel, ...). Prints: answers delivered, calls the fake refused for going past a limit
(the goal is zero: the bot paces itself rather than leaning on 429s), and the time to the last answer.
Exits non-zero if an answer is missing or a call went past a limit.
Run: make bench  (or .venv/bin/python tests/benchmarks/bench_limits.py [--concurrent 200])
"""
from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.benchmarks.bench_ack import CHANNELS, COMMANDS  # noqa: E402
from tests.benchmarks.served import served_bot  # noqa: E402
from tests.fakes import workspace as ws  # noqa: E402
from tests.fakes.signing import SlackRequests  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrent", type=int, default=200)
    n = parser.parse_args().concurrent
    with served_bot(enforce_limits=True) as served:
        slack = served.slack
        send = SlackRequests(f"http://127.0.0.1:{served.port}", secret=ws.SIGNING_SECRET, timeout=30)
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=n) as pool:
            statuses = list(pool.map(lambda i: send.slash_command(
                COMMANDS[i % len(COMMANDS)], channel_id=CHANNELS[i % len(CHANNELS)],
                response_url=slack.response_url()).status, range(n)))
        acked = time.perf_counter() - started
        try:
            slack.wait_for("chat.update", count=n, timeout=900,
                           predicate=lambda c: c.status == 200 and "Diagnosing" not in c.args.get("text", ""))
            delivered = n
        except AssertionError:
            delivered = len([c for c in slack.calls("chat.update")
                             if c.status == 200 and "Diagnosing" not in c.args.get("text", "")])
        last = time.perf_counter() - started
        refused = slack.limits.refusals
        calls = len(slack.calls())
        print(f"{n} concurrent /gpu commands against Slack's published limits: {statuses.count(200)} acked in "
              f"{acked:.1f} s; {delivered} of {n} answers delivered; last answer {last:.0f} s after the burst; "
              f"{len(refused)} of {calls} Web API calls went past a limit (429)")
        by_method: dict[str, int] = {}
        for r in refused:
            by_method[r.method] = by_method.get(r.method, 0) + 1
        if by_method:
            print(f"  refused by method: {by_method}")
        return 0 if delivered == n and not refused else 1


if __name__ == "__main__":
    sys.exit(main())
