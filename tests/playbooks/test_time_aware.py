"""Age changes what a signal means: a slow image pull of a pod that has run without a restart for an
hour delayed a start-up that is long over (info, not shown); while the job is still starting it stays a
warning. The kubelet's Pulled event is quoted from tests/playbooks/lines.py (kubelet
pkg/kubelet/images/image_manager.go "Successfully pulled image %q in %v (%v including waiting)")."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from playbooks.analyzers import history, signals
from playbooks.engine import analyze
from playbooks.facts import Facts, PodFacts
from playbooks.model import Target
from playbooks.registry import default_registry
from tests.playbooks.lines import LINES

PULLED = next(line for code, line, _ in LINES if code == "image.slow_pull").split("kubelet", 1)[1].strip()
NOW = datetime(2026, 1, 1, 13, 0, tzinfo=timezone.utc)


def _stamp(minutes_ago: float) -> str:
    return (datetime.now(timezone.utc) - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod(*, running_for_min: float | None, restarts: int = 0) -> PodFacts:
    state = ({"running": {"startedAt": _stamp(running_for_min)}} if running_for_min is not None
             else {"waiting": {"reason": "ContainerCreating"}})
    pod = {"metadata": {"name": "train-0", "namespace": "ml"},
           "spec": {"nodeName": "n1", "containers": [{"name": "trainer"}]},
           "status": {"phase": "Running" if running_for_min is not None else "Pending",
                      "containerStatuses": [{"name": "trainer", "restartCount": restarts, "state": state}]}}
    event = {"type": "Normal", "reason": "Pulled", "message": PULLED, "source": {"component": "kubelet"},
             "lastTimestamp": _stamp(90)}
    return PodFacts(pod=pod, events=[event])


def _codes(pod: PodFacts) -> dict[str, str]:
    facts = Facts(target=Target(kind="pod", name="train-0", namespace="ml"), cluster="test", pods=[pod])
    return {f.code: f.severity for f in analyze(facts, registry=default_registry()).findings}


def test_slow_pull_of_a_pod_running_fine_for_an_hour_is_not_a_warning() -> None:
    assert "image.slow_pull" not in _codes(_pod(running_for_min=75))


def test_slow_pull_while_starting_stays_a_warning() -> None:
    assert _codes(_pod(running_for_min=None)).get("image.slow_pull") == "warning"
    assert _codes(_pod(running_for_min=10)).get("image.slow_pull") == "warning"


def test_restarts_keep_it_a_warning() -> None:
    assert _codes(_pod(running_for_min=75, restarts=2)).get("image.slow_pull") == "warning"


def test_settled_needs_every_container_up_for_an_hour() -> None:
    def pod(*started: str) -> dict:
        return {"status": {"phase": "Running", "containerStatuses": [
            {"restartCount": 0, "state": {"running": {"startedAt": s}}} for s in started]}}
    assert signals.settled(pod("2026-01-01T11:59:00Z"), now=NOW)
    assert not signals.settled(pod("2026-01-01T11:59:00Z", "2026-01-01T12:30:00Z"), now=NOW)
    assert not signals.settled({"status": {"phase": "Succeeded", "containerStatuses": []}}, now=NOW)


# The PyTorch caching allocator's message (c10/cuda/CUDACachingAllocator.cpp), as the previous run printed it.
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "79.19 GiB of which 1.06 GiB is free. Process 3122 has 78.12 GiB memory in use.")


def _restarted(*, running_for_min: float) -> PodFacts:
    pod = _pod(running_for_min=running_for_min, restarts=1)
    pod.events.clear()
    pod.logs[("trainer", True)] = f"step 10 loss 2.1\n{OOM}\n"
    return pod


def test_a_crash_the_container_has_run_fine_for_an_hour_since_is_history() -> None:
    assert "training.cuda_oom" not in _codes(_restarted(running_for_min=90))


def test_a_recent_crash_in_the_previous_run_is_still_the_finding() -> None:
    assert _codes(_restarted(running_for_min=5)).get("training.cuda_oom") == "error"


def test_recovered_reads_the_named_container() -> None:
    pod = {"status": {"containerStatuses": [
        {"name": "trainer", "state": {"running": {"startedAt": "2026-01-01T11:00:00Z"}}},
        {"name": "sidecar", "state": {"running": {"startedAt": "2026-01-01T12:50:00Z"}}}]}}
    assert history.recovered(pod, "trainer", now=NOW)
    assert not history.recovered(pod, "sidecar", now=NOW)
    assert not history.recovered(pod, "missing", now=NOW)


def test_a_sigkill_before_an_hour_of_clean_running_is_not_a_termination() -> None:
    pod = _restarted(running_for_min=90)
    pod.logs.clear()
    status = pod.pod["status"]["containerStatuses"][0]
    status["lastState"] = {"terminated": {"exitCode": 137, "reason": "Error", "finishedAt": _stamp(91)}}
    assert "training.terminated" not in _codes(pod)
    status["state"] = {"running": {"startedAt": _stamp(3)}}
    assert "training.terminated" in _codes(pod)
