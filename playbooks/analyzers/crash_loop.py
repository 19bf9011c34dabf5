"""Containers in CrashLoopBackOff: every one gets a finding.

The previous container's log (gather reads it for any container that restarted) has already been run
through the signatures: when it names the cause (a code error, CUDA OOM, /dev/shm, NCCL misuse), that
finding is the answer and this analyzer stays quiet; so does an exit the kubelet or the kernel caused
(137 / 143 / OOMKilled: training.terminated). Otherwise the answer is training.crash_loop with the exit
code, restart count and the last error lines of the previous container.

kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go: the waiting reason
``CrashLoopBackOff`` and message ``back-off <d> restarting failed container=<c> pod=<p>``;
``lastState.terminated`` keeps ``exitCode``, ``reason`` and ``finishedAt`` of the previous run.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.analyzers import evidence as ev
from playbooks.analyzers.scan import signals
from playbooks.codes import CRASH_CAUSES
from playbooks.explain import template_for
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.model import Evidence, Finding
from playbooks.signatures.details import View, describe

CODE = "training.crash_loop"
LAST_LINES = 3
_ERRORISH = linear.compile(r"Error|Exception|error:|ERROR|FATAL|Fatal|failed|Traceback|Killed|Aborted|panic:")
_KILLED = (137, 143)


def analyze(facts: Facts):
    for pod in facts.pods:
        explained = _explained(pod, facts)
        for status in pod.container_statuses():
            waiting = (status.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") != "CrashLoopBackOff":
                continue
            term = (status.get("lastState") or {}).get("terminated") or {}
            if explained or term.get("exitCode") in _KILLED or term.get("reason") == "OOMKilled":
                continue  # another finding says why it crashes
            yield _finding(pod, status, term, facts)


def _explained(pod: PodFacts, facts: Facts) -> bool:
    return any(loc.pod is pod and loc.origin == "log" and loc.signal.severity != "info"
               and loc.signal.code.startswith(CRASH_CAUSES) for loc in signals(facts))


def last_error_lines(text: str, limit: int = LAST_LINES) -> list[str]:
    """The last lines that read like an error; the last lines at all when none does."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if _ERRORISH.search(line)]
    return (errors or lines)[-limit:]


def _finding(pod: PodFacts, status: dict, term: dict, facts: Facts) -> Finding:
    name = status.get("name", "")
    previous = name in {c for c, prev in pod.logs if prev}
    log = pod.logs.get((name, True)) or pod.logs.get((name, False)) or ""
    source = f"log {pod.ref} container {name}" + (" (previous)" if previous else "")
    lines = last_error_lines(log)
    exit_code = term.get("exitCode")
    fields = {"container": name}
    if exit_code is not None:
        fields["exit_code"] = str(exit_code)
    if lines:
        fields["last_error"] = " | ".join(lines)
    detail = describe(View(code=CODE, fields=fields, values={}, count=1, confidence="medium", codes=frozenset()))
    if not log:
        why = "reading pod logs was not possible" if "pod logs" in facts.unread else "the container left no log"
        detail += f" Its previous log could not be quoted: {why}."
    restarts = status.get("restartCount", 0)
    state = {"state.waiting.reason": "CrashLoopBackOff", "restartCount": restarts,
             "lastState.terminated": {k: term[k] for k in ("exitCode", "reason", "finishedAt") if k in term}}
    exited = f", last exit code {exit_code}" if exit_code is not None else ""
    return Finding(
        code=CODE, severity="error" if facts.is_target_pod(pod) else "warning", confidence="medium",
        title=f"{pod.name}: container {name} is crash-looping ({restarts} restarts{exited})",
        detail=detail,
        evidence=[ev.field(pod.ref, f"status.containerStatuses[{name}]", state)]
        + [Evidence(source=source, text=ev.trim(line)) for line in lines],
        fix=render_fix(template_for(CODE), container=name, pod=pod.name,
                       **({"exit_code": str(exit_code)} if exit_code is not None else {})),
    )
