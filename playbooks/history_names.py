"""Names that tie a job to objects already deleted: the pod names its owner gives, and the nodes and
NodeClaims its pods' events name. Plain functions over gathered data; gather.py does the reads.

Events outlive their objects (kube-apiserver ``--event-ttl``, 1 h by default), so after a spot
interruption or a forced expiry the evicted pod, its node and its NodeClaim are gone while their events
remain. They are found by name, and the names come from the owners' naming rules:

- Kubeflow training-operator (PyTorchJob, TFJob, MPIJob): ``<job>-<replica type lowercased>-<index>``
  (kubeflow/training-operator pkg/controller.v1/common/util.go ``GenGeneralName``); a replaced pod keeps
  its name, so its old events are read with the new pod's.
- batch/v1 Job: ``<job>-<5 random>``, or ``<job>-<index>-<5 random>`` for Indexed Jobs
  (kubernetes/kubernetes pkg/controller/job/indexed_job_utils.go ``podGenerateNameWithIndex``).
- JobSet (and a TrainJob, whose JobSet has its name): ``<jobset>-<replicated job>-<job index>-<pod
  index>-<5 random>`` (kubernetes-sigs/jobset pkg/controllers/jobset_controller.go ``placeholderPodName``
  / ``GenJobName`` plus the Job's suffix).
"""
from __future__ import annotations

import re

from playbooks.karpenter.nodeclaim import nominated_claims

# kube-scheduler's Scheduled event (pkg/scheduler/schedule_one.go): "Successfully assigned <ns>/<pod> to <node>"
_ASSIGNED = re.compile(r"Successfully assigned \S+ to (?P<node>\S+)")
_SUFFIX = "[a-z0-9]{5}"


def pod_name_pattern(key: str, name: str, *, replica_types: tuple[str, ...] = ()) -> re.Pattern | None:
    """The names an owner of kind ``key`` gives its pods; None for kinds whose pods cannot be named."""
    job = re.escape(name)
    if key in ("pytorchjob", "tfjob", "mpijob"):
        types = "|".join(re.escape(t.lower()) for t in replica_types) or "[a-z]+"
        return re.compile(rf"^{job}-(?:{types})-\d+$")
    if key == "job":
        return re.compile(rf"^{job}-(?:\d+-)?{_SUFFIX}$")
    if key in ("jobset", "trainjob"):
        return re.compile(rf"^{job}-[a-z0-9]+(?:-[a-z0-9]+)*-\d+-\d+-{_SUFFIX}$")
    return None


def event_object(event: dict) -> tuple[str, str]:
    """(kind, name) an event is about, in either event shape (involvedObject / regarding)."""
    ref = event.get("involvedObject") or event.get("regarding") or {}
    return str(ref.get("kind") or ""), str(ref.get("name") or "")


def event_text(event: dict) -> str:
    return str(event.get("message") or event.get("note") or "")


def nodes_named(events: list[dict]) -> set[str]:
    """Nodes a pod's events put it on: kube-scheduler's Scheduled, and Karpenter's Nominated to a node."""
    found: set[str] = set()
    for event in events:
        text = event_text(event)
        if event.get("reason") == "Scheduled":
            found.update(m.group("node") for m in _ASSIGNED.finditer(text))
        elif event.get("reason") == "Nominated":
            found.update(m.group(1) for m in re.finditer(r"\bnode/(\S+?)(?:[,\s]|$)", text))
    return found


def claims_named(events: list[dict]) -> set[str]:
    """NodeClaims Karpenter nominated a pod to (``Pod should schedule on: nodeclaim/<n>``)."""
    return {c for event in events if event.get("reason") == "Nominated" for c in nominated_claims(event_text(event))}
