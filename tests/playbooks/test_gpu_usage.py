"""gpu.idle: a running pod's GPU under 5% busy for the last 30 minutes is an info finding quoting the
numbers. The analyzer is given the series as data; the end-to-end tests read them from a real
Prometheus (tests/prometheus.py) through `gpubot diagnose` against the simulated cluster."""
from __future__ import annotations

import json

import pytest

from playbooks.analyzers.gpu_usage import analyze
from playbooks.facts import Facts, PodFacts
from playbooks.gpu_series import GpuSeries, GpuUsage
from playbooks.model import Target
from tests.conftest import run_cli
from tests.fakes.ports import refused_port
from tests.prometheus import Gpu, prometheus

END = 1_800_000_000.0
NS, POD = "llm-zero3", "llama-3-8b-zero3-0"


def _pod(name: str = POD, phase: str = "Running") -> PodFacts:
    return PodFacts(pod={"metadata": {"name": name, "namespace": NS},
                         "spec": {"nodeName": "n1", "containers": [
                             {"name": "pytorch", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]},
                         "status": {"phase": phase}})


def _series(gpu: int, values: list[float], *, pod: str = POD, minutes: int = 60) -> GpuSeries:
    times = [END - 60 * m for m in range(minutes, -1, -1)]
    util = tuple((t, values[min(i, len(values) - 1)]) for i, t in enumerate(times))
    return GpuSeries(namespace=NS, pod=pod, gpu=str(gpu), node="ip-10-0-14-201", model="NVIDIA A100-SXM4-80GB",
                     util=util, fb_used=tuple((t, 1024.0) for t in times), fb_free=tuple((t, 80535.0) for t in times))


def _facts(gpus: list[GpuSeries], *, pods: list[PodFacts] | None = None) -> Facts:
    facts = Facts(target=Target("pod", POD, NS), cluster="sim")
    facts.pods = pods if pods is not None else [_pod()]
    facts.gpu_usage = GpuUsage(start=END - 3600, end=END, gpus=gpus)
    return facts


def test_one_idle_gpu_of_eight_is_an_info_finding_with_its_numbers() -> None:
    gpus = [_series(i, [0.0 if i == 3 else 92.0 + i % 3]) for i in range(8)]
    [finding] = analyze(_facts(gpus))
    assert (finding.code, finding.severity) == ("gpu.idle", "info")
    assert finding.title == f"1 of 8 GPUs held by pod {POD} sat idle for the last 30 minutes (under 5% busy)"
    assert f"GPU 3 of pod {POD} on node ip-10-0-14-201 (NVIDIA A100-SXM4-80GB): at most 0% busy" in finding.detail
    assert "0.0% on average over 31 samples; 1,024 MiB of 81,559 MiB memory in use" in finding.detail
    assert "The other 7 GPUs averaged 93% busy." in finding.detail
    [evidence] = finding.evidence
    assert evidence.source == f"prometheus pod/{NS}/{POD} gpu 3"
    assert "DCGM_FI_DEV_GPU_UTIL max 0 %" in evidence.text


def test_a_gpu_busy_within_the_last_half_hour_is_not_idle() -> None:
    # busy 60 to 21 minutes ago, then idle: only the last 20 minutes are quiet
    assert list(analyze(_facts([_series(0, [90.0] * 40 + [1.0])]))) == []
    assert list(analyze(_facts([_series(0, [4.0] * 45 + [5.0] + [0.0])]))) == []  # 5% is not "under 5%"


def test_a_pod_that_started_ten_minutes_ago_is_not_judged() -> None:
    assert list(analyze(_facts([_series(0, [0.0], minutes=10)]))) == []


@pytest.mark.parametrize("phase", ["Succeeded", "Failed", "Pending"])
def test_only_running_pods_are_judged(phase: str) -> None:
    assert list(analyze(_facts([_series(0, [0.0])], pods=[_pod(phase=phase)]))) == []


def test_no_series_read_no_finding() -> None:
    facts = _facts([])
    facts.gpu_usage = None
    assert list(analyze(facts)) == []


# -- end to end: the simulated cluster's running 8-GPU pod, series from a real Prometheus ----------

@pytest.fixture
def prom(tmp_path):
    gpus = [Gpu(NS, POD, i, util=0.0 if i == 5 else 95.0, fb_used=512.0 if i == 5 else 70_000.0) for i in range(8)]
    with prometheus(tmp_path, gpus) as url:
        yield url


def _diagnose(monkeypatch, url: str) -> dict:
    monkeypatch.setenv("GPUBOT_PROMETHEUS_URL", url)
    result = run_cli("diagnose", f"pod/{POD}", "-n", NS, "--json")
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


def test_a_running_job_with_one_idle_gpu_of_eight(sim_env, monkeypatch, prom) -> None:
    out = _diagnose(monkeypatch, prom)
    [idle] = [f for f in out["findings"] if f["code"] == "gpu.idle"]
    assert idle["severity"] == "info"
    assert idle["title"].startswith(f"1 of 8 GPUs held by pod {POD} sat idle")
    assert "GPU 5 of pod" in idle["detail"] and "at most 0% busy" in idle["detail"]
    assert "512 MiB of 81,559 MiB memory in use" in idle["detail"]
    assert "The other 7 GPUs averaged 95% busy." in idle["detail"]
    assert out["findings"][0]["code"] == "training.memory_pressure"  # the answer is unchanged
    assert not [g for g in out["gaps"] if "GPU metrics" in g]


def test_an_unreachable_prometheus_leaves_a_note_and_the_diagnosis(sim_env, monkeypatch) -> None:
    with refused_port() as port:
        out = _diagnose(monkeypatch, f"http://127.0.0.1:{port}")
    assert out["findings"][0]["code"] == "training.memory_pressure"
    assert "GPU metrics could not be read: Prometheus cannot be reached (connection refused); the diagnosis is " \
           "made without them." in out["gaps"]
    assert not [f for f in out["findings"] if f["code"] == "gpu.idle"]


def test_a_prometheus_without_the_pods_series_says_so(sim_env, monkeypatch, tmp_path) -> None:
    with prometheus(tmp_path, [Gpu("elsewhere", "other-0", 0, util=0.0)]) as url:
        out = _diagnose(monkeypatch, url)
    assert [g for g in out["gaps"] if g.startswith(f"GPU metrics: Prometheus has no DCGM exporter series for {POD}")]
