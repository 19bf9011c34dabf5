"""What a container's previous run left behind, once the container has run fine for a while since.

``kubectl logs --previous`` and ``lastState.terminated`` keep the last crash for as long as the
container lives: a CUDA OOM or a SIGKILL from a run that ended hours ago, with the container running
without a restart since, explains a restart that is over, not the state of the job now
(kubernetes/kubernetes pkg/kubelet/kuberuntime: lastState is replaced only by the next termination).
The same holds inside the current log: a connect retry at start-up, in a container that has run for
``SETTLED_S`` since, delayed a start that succeeded.
"""
from __future__ import annotations

from datetime import datetime, timezone

from playbooks.analyzers.evidence import parse_time
from playbooks.signatures.log_time import line_time, parse_time as parse_line_time

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


# torch.distributed's connect loop (pytorch/pytorch torch/csrc/distributed/c10d/TCPStore.cpp
# ``TCPClient::connect``, socket.cpp ``SocketConnectOp``): while the store's host is not up yet, each failed
# try is logged and retried ("TCP client failed to connect/validate to host {}:{} - retrying (try={},
# timeout={}ms, delay={}ms): {}" as C10D_WARNING; socket.cpp's "The client socket has failed to connect to
# [host]:port (errno: ...)" and "The client socket has timed out after {} while trying to connect to (host,
# port)." before it). Only the deadline ends the loop, with "... - timed out (try=...)" thrown as a
# DistNetworkError / RendezvousConnectionError: that is a failure, never history.
_RETRY_MARKS = ("- retrying (try=", "The client socket has failed to connect to [",
                "The client socket has timed out after")
_FINAL_MARKS = ("- timed out (try=", "DistNetworkError", "RendezvousConnectionError", "RendezvousTimeoutError",
                "failed to connect to any network address", "Traceback", "RuntimeError", "raise ")


def is_retry(line: str) -> bool:
    """A connect attempt that is retried (not the final give-up)."""
    return any(m in line for m in _RETRY_MARKS) and not any(m in line for m in _FINAL_MARKS)


def retry_is_history(pod: dict, container: str, *, line: str, lineno: int | None, lines: list[str],
                     now: datetime | None = None) -> bool:
    """A start-up connect retry in the current log of a container that has run for SETTLED_S since (its
    current run, state.running.startedAt), and that the process got past: the line's own stamp is SETTLED_S
    old, or (no stamp) the log goes on with lines that are not retries after it. A retry loop still running
    now (the last lines are retries, or the newest retry is recent) is not history."""
    if not is_retry(line) or not recovered(pod, container, now=now):
        return False
    now = now or datetime.now(timezone.utc)
    when = _stamp(line, now)
    if when is not None:
        return (now - when).total_seconds() >= SETTLED_S and not _recent_retry(lines, now)
    after = lines[lineno:] if lineno else []
    return any(text.strip() and not is_retry(text) for text in after)


def _recent_retry(lines: list[str], now: datetime) -> bool:
    """Some retry in the log is younger than SETTLED_S: the loop may still be going."""
    for text in lines:
        if is_retry(text):
            when = _stamp(text, now)
            if when is not None and (now - when).total_seconds() < SETTLED_S:
                return True
    return False


def _stamp(line: str, now: datetime) -> datetime | None:
    """The time a log line starts with; a year-less klog / c10 stamp takes the latest year not in the future."""
    value = line_time(line)
    if value is None:
        return None
    when = parse_line_time(value, year=now.year)
    if when is not None and value.startswith("--") and when > now:
        when = parse_line_time(value, year=now.year - 1)
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when
