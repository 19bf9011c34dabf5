"""What a container's previous run left behind, once the container has run fine for a while since.

``kubectl logs --previous`` and ``lastState.terminated`` keep the last crash for as long as the
container lives: a CUDA OOM or a SIGKILL from a run that ended hours ago, with the container running
without a restart since, explains a restart that is over, not the state of the job now
(kubernetes/kubernetes pkg/kubelet/kuberuntime: lastState is replaced only by the next termination).
"""
from __future__ import annotations

from datetime import datetime, timezone

from playbooks.analyzers.evidence import parse_time

SETTLED_S = 3600  # an hour of running without a restart: start-up problems and old crashes are history


def settled(pod: dict, *, now: datetime | None = None) -> bool:
    """Running, every container running since at least SETTLED_S ago (state.running.startedAt), none
    restarted (restartCount 0): the pod got past start-up and has stayed up."""
    status = pod.get("status") or {}
    containers = status.get("containerStatuses") or []
    if status.get("phase") != "Running" or not containers:
        return False
    now = now or datetime.now(timezone.utc)
    return all(not container.get("restartCount", 0) and _running_for(container, now) >= SETTLED_S
               for container in containers)


def recovered(pod: dict, container: str, *, now: datetime | None = None) -> bool:
    """The container's current run has lasted at least SETTLED_S (state.running.startedAt)."""
    now = now or datetime.now(timezone.utc)
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == container:
            return _running_for(status, now) >= SETTLED_S
    return False


def _running_for(status: dict, now: datetime) -> float:
    """Seconds the container's current run has lasted; -1 when it is not running."""
    started = parse_time(((status.get("state") or {}).get("running") or {}).get("startedAt"))
    return -1.0 if started is None else (now - started).total_seconds()
