"""``gpubot demo``: the simulated cluster with every seed incident, diagnosed as a user would see it."""
from __future__ import annotations

import json
import os
import sys
import time

from bot.render import terminal
from bot.settings import Settings
from bot.sim_cli import SIM_CREDENTIALS


def run(settings: Settings, *, as_json: bool = False) -> int:
    from bot.service import DiagnosisService
    from sim.serve import start_sim

    out = sys.stdout
    color = out.isatty() and not os.environ.get("NO_COLOR")
    print("Starting the simulated GPU cluster (Kubernetes API + EC2 on loopback) ...", file=sys.stderr, flush=True)
    with start_sim(scenarios=None) as sim:
        # moto accepts any credentials; real ones are never needed (nor sent anywhere but loopback).
        for key, value in SIM_CREDENTIALS.items():
            os.environ.setdefault(key, value)
        sim_settings = Settings(**{**settings.__dict__, "kubeconfig": str(sim.kubeconfig), "context": sim.context})
        service = DiagnosisService(sim_settings)
        results = []
        try:
            for info in sim.scenarios:
                sim.reset_requests()
                started = time.perf_counter()
                diagnosis = service.diagnose(info.target, namespace=info.namespace)
                elapsed = time.perf_counter() - started
                first = diagnosis.findings[0].code if diagnosis.findings else None
                results.append((info, diagnosis, first, elapsed, sim.request_count()))
                if as_json:
                    continue
                rule = "=" * 100
                print(f"\n{rule}\n{info.name}  (seed {info.seed}): {info.description}", file=out)
                print(f"$ gpubot diagnose {info.target} -n {info.namespace}\n{rule}", file=out)
                out.write(terminal.render(diagnosis, color=color))
        finally:
            service.close()
    if as_json:
        print(json.dumps([{"scenario": i.name, "expected": i.first_finding, "diagnosis": d.to_dict()}
                          for i, d, _, _, _ in results], indent=2))
        return 0 if all(first == i.first_finding for i, _, first, _, _ in results) else 1
    print(f"\n{'Scenario':<40} {'first finding':<42} {'ok':<4} {'time':>7} {'API requests':>12}", file=out)
    failures = 0
    for info, _, first, elapsed, requests in results:
        ok = first == info.first_finding
        failures += not ok
        print(f"{info.name:<40} {str(first):<42} {'yes' if ok else 'NO':<4} {elapsed * 1000:>5.0f}ms {requests:>12}", file=out)
    print(f"\n{len(results) - failures}/{len(results)} seed incidents diagnosed with the expected first finding.", file=out)
    return 0 if failures == 0 else 1
