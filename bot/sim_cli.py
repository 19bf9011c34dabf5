"""``gpubot sim list`` and ``gpubot sim serve``."""
from __future__ import annotations

import argparse
import json
import sys

from bot.errors import UserError

SIM_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def run(args: argparse.Namespace) -> int:
    from sim.scenarios import ScenarioError, list_scenarios

    if args.sim_command == "list":
        try:
            scenarios = list_scenarios(args.scenario_dir)
        except ScenarioError as exc:
            raise UserError(str(exc)) from None
        if args.json:
            print(json.dumps([{"name": s.name, "target": s.target, "namespace": s.namespace, "base": s.base,
                               "region": s.region, "first_finding": s.first_finding, "source": s.source}
                              for s in scenarios], indent=2))
        elif not scenarios:
            print(f"no scenarios (*.yaml) in {args.scenario_dir}", file=sys.stderr)
        else:
            width = max(len(s.name) for s in scenarios)
            for s in scenarios:
                origin = f"seed {s.seed}" if s.seed else f"base {s.base}"
                print(f"{s.name:<{width}}  {s.target} -n {s.namespace}  ({origin}; expect {s.first_finding})")
        return 0
    if args.port is not None and not 0 <= args.port <= 65535:
        raise UserError(f"--port must be between 0 and 65535, got {args.port}")
    scale = _scale(args.scale)
    try:
        from sim.serve import serve_forever, start_sim
    except ImportError as exc:
        raise UserError(f"the simulated cluster needs the 'sim' extra ({exc.name} is missing): pip install 'gpubot[sim]'") from None
    try:
        if scale:
            print(f"gpubot sim: building a synthetic cluster of {scale[0]} nodes and {scale[1]} pods ...", file=sys.stderr, flush=True)
        handle = start_sim(scenarios=args.scenarios, port=args.port, kubeconfig_out=args.kubeconfig_out,
                           scale=scale, ec2=not args.no_ec2, directory=args.scenario_dir)
    except (ScenarioError, ValueError) as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot serve on port {args.port}: {exc.strerror}") from None
    names = ", ".join(s.name for s in handle.scenarios) or "none"
    print(f"gpubot sim: serving {handle.url} (scenarios: {names}; region {handle.region})", file=sys.stderr)
    print(f"gpubot sim: kubeconfig {handle.kubeconfig} (context {handle.context})", file=sys.stderr)
    people = ", ".join(f"{name} {path}" for name, path in handle.kubeconfigs.items() if path != handle.kubeconfig)
    if people:
        print(f"gpubot sim: each person's own kubeconfig (same context, own token): {people}", file=sys.stderr)
    if handle.ec2_url:
        print(f"gpubot sim: EC2 (moto) at {handle.ec2_url}; it accepts any credentials:", file=sys.stderr)
        print("  export " + " ".join(f"{k}={v}" for k, v in SIM_CREDENTIALS.items()), file=sys.stderr)
    print(f"  export KUBECONFIG={handle.kubeconfig}", file=sys.stderr, flush=True)
    serve_forever(handle)
    return 0


def _scale(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    from sim.scale import parse_scale

    try:
        return parse_scale(text)
    except ValueError as exc:
        raise UserError(f"--scale: {exc}") from None
