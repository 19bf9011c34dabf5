"""What a container's previous run left behind, once the container has run fine for a while since.

``kubectl logs --previous`` and ``lastState.terminated`` keep the last crash for as long as the
container lives: a CUDA OOM or a SIGKILL from a run that ended hours ago, with the container running
without a restart since, explains a restart that is over, not the state of the job now
(kubernetes/kubernetes pkg/kubelet/kuberuntime: lastState is replaced only by the next termination).
"""
from __future__ import annotations

from datetime import datetime, timezone

from playbooks.analyzers.evidence import parse_time

# As long as a pod must have run to call a slow image pull history (analyzers/signals.py SETTLED_S).
RECOVERED_AFTER_S = 3600


def recovered(pod: dict, container: str, *, now: datetime | None = None) -> bool:
    """The container's current run has lasted at least RECOVERED_AFTER_S (state.running.startedAt)."""
    now = now or datetime.now(timezone.utc)
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == container:
            started = parse_time(((status.get("state") or {}).get("running") or {}).get("startedAt"))
            return started is not None and (now - started).total_seconds() >= RECOVERED_AFTER_S
    return False
