"""Every container state of the target's pods: a container that waits because its image cannot be pulled
or its spec cannot be turned into a container, and one that ended for a reason gpubot must not pass over.

A waiting container is the state now, whether or not the pod has a node: the kubelet's status message
carries the runtime's own words (``rpc error: code = NotFound desc = failed to pull and unpack image ...``,
``couldn't find key HF_TOKEN in Secret ml/hf``), and its Warning events (``Failed to pull image``,
``Error: ...``) say the same at more length. Both are read through the text rules (signatures/images.py,
containers.py) and become one finding per code that names the pod and container.

A terminated container whose reason has no finding elsewhere (OOMKilled and SIGKILL / SIGTERM exits are
training.terminated's, a crash loop crash_loop.py's, an exit whose log names the error that log's
finding) is quoted as a gap: never silence.

kubernetes/kubernetes sources:
- pkg/kubelet/images/types.go: ``ImagePullBackOff``, ``ImageInspectError``, ``ErrImagePull``,
  ``ErrImageNeverPull``, ``InvalidImageName`` (``RegistryUnavailable`` before 1.29).
- pkg/kubelet/kuberuntime/kuberuntime_container.go: ``CreateContainerConfigError``, ``PreCreateHookError``,
  ``CreateContainerError``, ``PreStartHookError``, ``PostStartHookError``; ``startContainer`` records the
  Warning ``Failed`` event ``Error: <err>`` with the same words.
- pkg/kubelet/container/sync_result.go: ``RunContainerError``, ``VerifyNonRootError``,
  ``RunInitContainerError``, ``CreatePodSandboxError``, ``CrashLoopBackOff``.
- containerd internal/cri/server/container_start.go and pkg/kubelet/kuberuntime: terminated reasons
  ``StartError`` / ``ContainerCannotRun`` (the runtime could not start the process), ``Error`` (non-zero
  exit), ``OOMKilled``, ``Completed``; pod-level ``Evicted`` and ``DeadlineExceeded``
  (activeDeadlineSeconds, pkg/kubelet/active_deadline.go).
"""
from __future__ import annotations

from dataclasses import dataclass

from playbooks.analyzers import evidence as ev
from playbooks.analyzers.history import recovered
from playbooks.analyzers.scan import signals
from playbooks.explain import fix_context, template_for
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.model import Evidence, Finding
from playbooks.signatures import Signal, scan_line
from playbooks.signatures.details import View, describe

PULL_REASONS = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
                          "ImageInspectError", "RegistryUnavailable", "SignatureValidationFailed"})
CONFIG_REASONS = frozenset({"CreateContainerConfigError", "CreateContainerError", "RunContainerError",
                            "PreCreateHookError", "PreStartHookError", "PostStartHookError", "VerifyNonRootError",
                            "RunInitContainerError"})
START_FAILED = frozenset({"StartError", "ContainerCannotRun"})
# Waiting reasons that are the normal way to start or another analyzer's: not news by themselves.
ORDINARY_WAITING = frozenset({"ContainerCreating", "PodInitializing", "CrashLoopBackOff"})
# Terminated reasons another analyzer owns (training.terminated, crash_loop) or that are no problem.
OWNED_TERMINATED = frozenset({"Completed", "OOMKilled"})
_KILLED = (137, 143)


@dataclass
class _Seen:
    """What one code's containers said: the signals, the evidence and where."""

    signals: list[tuple[Signal, PodFacts, str]]
    evidence: list[Evidence]


def analyze(facts: Facts):
    seen: dict[str, _Seen] = {}
    for pod in facts.pods:
        for status in pod.container_statuses():
            _waiting(pod, status, seen)
            _terminated(pod, status, seen, facts)
        _pod_ended(pod, facts)
    for code, found in seen.items():
        yield _finding(code, found, facts)


def _waiting(pod: PodFacts, status: dict, seen: dict[str, _Seen]) -> None:
    waiting = (status.get("state") or {}).get("waiting") or {}
    reason, message = waiting.get("reason") or "", (waiting.get("message") or "").strip()
    name = status.get("name", "")
    if reason in PULL_REASONS:
        code = "image.pull_failed"
    elif reason in CONFIG_REASONS:
        code = "container.config_error"
    else:
        return
    source = f"{pod.ref} status.containerStatuses[{name}].state.waiting"
    line = f"{reason}: {message}" if message else reason
    _note(seen, code, pod, name, scan_line(line, source=source), Evidence(source=source, text=ev.trim(line)))
    _events(pod, name, code, seen)


def _terminated(pod: PodFacts, status: dict, seen: dict[str, _Seen], facts: Facts) -> None:
    name = status.get("name", "")
    now = (status.get("state") or {}).get("terminated")
    past = None if recovered(pod.pod, name) else (status.get("lastState") or {}).get("terminated")
    for which, term in (("state", now), ("lastState", past)):
        if not term:
            continue
        reason, message, code = term.get("reason") or "", (term.get("message") or "").strip(), term.get("exitCode")
        source = f"{pod.ref} status.containerStatuses[{name}].{which}.terminated"
        line = f"{reason}: {message}" if message else reason
        if reason in START_FAILED:
            _note(seen, "container.config_error", pod, name, scan_line(line, source=source),
                  Evidence(source=source, text=ev.trim(f"{line} (exit code {code})")))
            _events(pod, name, "container.config_error", seen)
        elif reason in OWNED_TERMINATED or code in _KILLED or code == 0:
            continue
        elif not _explained(pod, facts, status):
            # Read and not understood: the floor's finding (analyzers/unrecognised.py), never a gap.
            facts.cache.setdefault("unexplained", []).append(
                (pod, source, f"{line} (exit code {code})" if line else f"exit code {code}",
                 f"container {name} of pod {pod.name} ended ({reason or 'no reason given'}, exit code {code}) and "
                 "nothing gpubot read says why"))


def _pod_ended(pod: PodFacts, facts: Facts) -> None:
    """A pod the kubelet ended as a whole (Evicted, DeadlineExceeded, an admission rejection): the status
    message is scanned with the pod's texts; one no rule knows is quoted."""
    status = pod.pod.get("status") or {}
    reason, message = status.get("reason") or "", (status.get("message") or "").strip()
    if not reason or not message or scan_line(message, source=""):
        return
    facts.cache.setdefault("unexplained", []).append(
        (pod, f"{pod.ref} status.reason", f"{reason}: {message}",
         f"pod {pod.name} is {status.get('phase') or 'ended'} with reason {reason}, which no rule explains"))


def _explained(pod: PodFacts, facts: Facts, status: dict) -> bool:
    """Whether another analyzer speaks for a non-zero exit: a crash loop, or a finding read from the pod's log."""
    if ((status.get("state") or {}).get("waiting") or {}).get("reason") == "CrashLoopBackOff":
        return True
    return any(loc.pod is pod and loc.origin == "log" and loc.signal.severity != "info" for loc in signals(facts))


def _events(pod: PodFacts, container: str, code: str, seen: dict[str, _Seen]) -> None:
    """The kubelet's Warning events about the container that say the same (``Failed to pull image``,
    ``Error: couldn't find key``): they carry the registry's or the runtime's whole message."""
    for event in pod.events:
        if event.get("type") != "Warning":
            continue
        path = str((event.get("involvedObject") or event.get("regarding") or {}).get("fieldPath") or "")
        if path and not path.endswith("{" + container + "}"):
            continue
        message = event.get("message") or event.get("note") or ""
        found = [s for s in scan_line(message, source=ev.event_source(pod.ref, event)) if s.code == code]
        if found:
            _note(seen, code, pod, container, found, Evidence(source=ev.event_source(pod.ref, event), text=ev.trim(message)))


def _note(seen: dict[str, _Seen], code: str, pod: PodFacts, container: str, found: list[Signal],
          evidence: Evidence) -> None:
    entry = seen.setdefault(code, _Seen([], []))
    entry.signals.extend((s, pod, container) for s in found if s.code == code)
    if all(e.text != evidence.text for e in entry.evidence):
        entry.evidence.append(evidence)


def _finding(code: str, found: _Seen, facts: Facts) -> Finding:
    """One finding per code: the most specific signal's words (the one that says what the registry or the
    runtime answered), the fields of all of them, the pod and container it is about."""
    ranked = sorted(found.signals, key=lambda item: (item[0].rank, -len(item[0].fields)))
    if ranked:
        best, pod, container = ranked[0]
    else:  # a reason no rule words: the state itself is the evidence
        best, pod, container = None, facts.pods[0], ""
    fields: dict[str, str] = {}
    values: dict[str, tuple[str, ...]] = {}
    for sig, _, _ in ranked:
        for key, value in sig.fields.items():
            fields.setdefault(key, value)
            if value not in values.get(key, ()):
                values[key] = values.get(key, ()) + (value,)
    pods = sorted({p.name for _, p, _ in ranked})
    target = any(facts.is_target_pod(p) for _, p, _ in ranked) or not ranked
    confidence = min((s.confidence for s, _, _ in ranked), key=("high", "medium", "low").index, default="medium")
    view = View(code=code, fields=fields, values=values, count=len(ranked), confidence=confidence,
                codes=frozenset({code}))
    title = best.title if best is not None else code
    others = f" (and {len(pods) - 1} more pod{'s' if len(pods) > 2 else ''})" if len(pods) > 1 else ""
    context = {"pod": pod.name, "namespace": pod.namespace, **({"container": container} if container else {}),
               **fix_context(code, fields)}
    context["namespace"] = fields.get("namespace") or pod.namespace
    return Finding(
        code=code, severity="error" if target else "warning", confidence=confidence,
        title=f"{pod.name}{' container ' + container if container else ''}: {title}{others}",
        detail=describe(view), evidence=found.evidence[:6],
        fix=render_fix(template_for(code), **context),
    )
