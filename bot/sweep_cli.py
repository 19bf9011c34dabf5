"""``gpubot sweep --once``: one sweep of the current context from a terminal, printing each problem it
finds and what it could not check. Posts nothing: the alerts of `gpubot serve` come from its leader
replica's own sweeps."""
from __future__ import annotations

import argparse
import json
import sys

from bot.errors import UserError
from bot.settings import Settings

CONTINUOUS = ("continuous sweeps run inside `gpubot serve` (on the leader replica, every GPUBOT_SWEEP_INTERVAL "
              "seconds); run `gpubot sweep --once` for one sweep from here")


def add_parsers(sub) -> None:
    p = sub.add_parser("sweep", help="look for GPU problems once, as the alert sweeps do (posts nothing)")
    p.add_argument("--once", action="store_true", help="one sweep of the cluster, then exit")
    p.add_argument("--context", help="kubeconfig context (cluster) to use")
    p.add_argument("--kubeconfig", help="kubeconfig file (default: KUBECONFIG or ~/.kube/config)")
    p.add_argument("--json", action="store_true", help='print {"problems": [...], "not_checked": [...]}')


def run(args: argparse.Namespace, settings: Settings) -> int:
    from bot.alerts.sweep import sweep
    from bot.service import DiagnosisService
    from bot.targets import validate_context

    if not args.once:
        raise UserError(CONTINUOUS)
    if args.context:
        validate_context(args.context)
    service = DiagnosisService(settings)
    try:
        result = sweep(service, settings, context=args.context)
    finally:
        service.close()
    if args.json:
        print(json.dumps({"cluster": result.cluster, "problems": [p.to_dict() for p in result.problems],
                          "not_checked": result.not_checked, "diagnosed": result.diagnosed,
                          "requests": result.requests}, indent=2))
        return 0
    out = sys.stdout
    count = len(result.problems)
    out.write(f"cluster {result.cluster}: {count} problem{'s' if count != 1 else ''} "
              f"({result.requests} list requests, {result.diagnosed} pending job(s) diagnosed)\n")
    for problem in result.problems:
        out.write(f"\n{problem.severity.upper():<8} {problem.code}  {_target(problem)}\n")
        out.write(f"  {problem.title}\n")
        for evidence in problem.evidence[:3]:
            # an object field's text repeats the path that ends its source: say it once
            path = evidence.source.rsplit(" ", 1)[-1] + ": "
            text = evidence.text[len(path):] if evidence.text.startswith(path) else evidence.text
            out.write(f"  | {evidence.source}: {text}\n")
        for remediation in problem.remediations:
            out.write(f"  offers: {remediation.kind} {remediation.target} (behind an approval)\n")
        out.write(f"  fingerprint {problem.fingerprint}\n")
    if result.not_checked:
        out.write("\n" + "\n".join(result.not_checked) + "\n")
    return 0


def _target(problem) -> str:
    t = problem.target
    return f"{t.kind}/{t.namespace}/{t.name}" if t.namespace else f"{t.kind}/{t.name}"
