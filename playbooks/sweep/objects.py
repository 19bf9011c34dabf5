"""Reading plain Kubernetes objects (REST-shaped dicts) the way every sweep detector needs them."""
from __future__ import annotations

from datetime import datetime

from playbooks.analyzers.evidence import parse_time
from playbooks.gather import BATCH_JOB_LABELS, KUBEFLOW_JOB_LABEL
from playbooks.karpenter.resources import pod_requests

# Devices a pod asks for that make it part of the accelerator fleet. EFA is asked for together with
# GPUs by training pods (vpc.amazonaws.com/efa), so a pod asking for EFA alone is counted too.
ACCELERATORS = ("nvidia.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "vpc.amazonaws.com/efa")
JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
# Controllers whose pods are a training workload, and the kind gpubot names them by.
WORKLOAD_OWNERS = {"PyTorchJob": "pytorchjob", "TFJob": "tfjob", "MPIJob": "mpijob", "JobSet": "jobset",
                   "Job": "job", "TrainJob": "trainjob"}
# kubeflow/training-operator pkg/controller.v1/*: the operator-name label says which job kind made the pod
# when its ownerReference is not at hand.
_OPERATORS = {"pytorchjob-controller": "pytorchjob", "tfjob-controller": "tfjob", "mpijob-controller": "mpijob"}


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

    A JobSet's pods belong to the JobSet, not to the batch Job between them; Kubeflow and batch pods to
    their controller (ownerReferences), else to the job their labels name.
    """
    labels = labels_of(pod)
    if labels.get(JOBSET_LABEL):
        return "jobset", labels[JOBSET_LABEL]
    for ref in meta(pod).get("ownerReferences") or []:
        kind = WORKLOAD_OWNERS.get(str(ref.get("kind")))
        if kind and ref.get("name"):
            return kind, str(ref["name"])
    if labels.get(KUBEFLOW_JOB_LABEL):
        operator = labels.get("training.kubeflow.org/operator-name", "")
        return _OPERATORS.get(operator, "pytorchjob"), labels[KUBEFLOW_JOB_LABEL]
    for key in BATCH_JOB_LABELS:
        if labels.get(key):
            return "job", labels[key]
    return "pod", name_of(pod)


def owned_by_daemonset(pod: dict) -> bool:
    return any(ref.get("kind") == "DaemonSet" for ref in meta(pod).get("ownerReferences") or [])
