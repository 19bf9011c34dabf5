"""A diagnosis costs the same number of Kubernetes API requests on a small cluster and on one with
5000 nodes and 100000 pods: reads are targeted (by name, by job label, by involvedObject)."""
from __future__ import annotations

import pytest

from bot.service import DiagnosisService
from bot.settings import load_settings
from sim.serve import start_sim

from tests.conftest import SIM_ENV


def _costs(sim) -> dict[str, int]:
    settings = load_settings({"KUBECONFIG": str(sim.kubeconfig), **SIM_ENV})
    service = DiagnosisService(settings)
    costs = {}
    try:
        for info in sim.scenarios:
            sim.reset_requests()
            diagnosis = service.diagnose(info.target, namespace=info.namespace)
            assert diagnosis.findings
            costs[info.name] = sim.request_count()
    finally:
        service.close()
    return costs


@pytest.mark.slow
def test_request_count_does_not_grow_with_the_cluster(monkeypatch):
    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    with start_sim(scenarios=None) as small:
        small_costs = _costs(small)
    with start_sim(scenarios=None, scale=(5000, 100000)) as big:
        big_costs = _costs(big)
    print("\nAPI requests per diagnosis (small cluster / 5000 nodes + 100000 pods):")
    for name in small_costs:
        print(f"  {name:<40} {small_costs[name]:>3} / {big_costs[name]:>3}")
    assert small_costs == big_costs
    assert max(small_costs.values()) < 60
