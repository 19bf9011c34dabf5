"""Reading plain Kubernetes objects (REST-shaped dicts) the way every sweep detector needs them."""
from __future__ import annotations

from datetime import datetime

from playbooks.analyzers.evidence import parse_time
from playbooks.analyzers.owners import pod_owner
from playbooks.karpenter.resources import pod_requests

# Devices a pod asks for that make it part of the accelerator fleet. EFA is asked for together with
# GPUs by training pods (vpc.amazonaws.com/efa), so a pod asking for EFA alone is counted too.
ACCELERATORS = ("nvidia.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "vpc.amazonaws.com/efa")


def meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def name_of(obj: dict) -> str:
    return str(meta(obj).get("name") or "")


def labels_of(obj: dict) -> dict:
    return meta(obj).get("labels") or {}




def seconds_since(value: object, now: datetime) -> float | None:
    when = parse_time(value)
    return None if when is None else (now - when).total_seconds()


def show_age(seconds: float) -> str:
    """25m, 3h10m, 2d4h: how long, as on call reads it."""
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{max(minutes, 0)}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h{minutes:02d}m" if minutes else f"{hours}h"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours}h" if hours else f"{days}d"


def condition(obj: dict, kind: str) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), None)


def accelerators(pod: dict) -> dict[str, float]:
    """Accelerator devices the pod asks for (requests, or limits standing in for them)."""
    requests = pod_requests(pod)
    return {name: requests[name] for name in ACCELERATORS if requests.get(name)}


def workload(pod: dict) -> tuple[str, str]:
    """(kind, name) of the training workload a pod belongs to; ("pod", its name) for a bare pod.

    Read as fixes read it (playbooks.analyzers.owners.pod_owner): a JobSet's pods belong to the JobSet,
    not to the batch Job between them; Kubeflow and batch pods to their controller (ownerReferences),
    else to the job their labels name (the operator-name label telling PyTorchJob, TFJob and MPIJob v1
    or v2beta1 apart). A TrainJob's pods show only their JobSet, which has the TrainJob's name.
    """
    owner = pod_owner(pod)
    return owner.key, owner.name


def owned_by_daemonset(pod: dict) -> bool:
    return any(ref.get("kind") == "DaemonSet" for ref in meta(pod).get("ownerReferences") or [])
