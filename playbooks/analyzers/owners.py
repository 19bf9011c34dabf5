"""Which training workload a pod belongs to, read from its labels and ownerReferences.

Where each controller says so on the pods it creates:
- Kubeflow training-operator (PyTorchJob, TFJob, MPIJob kubeflow.org/v1): ``training.kubeflow.org/job-name``,
  ``.../replica-type`` (the replica type lowercased) and ``.../operator-name`` ("pytorchjob-controller",
  "tfjob-controller", "mpijob-controller"): kubeflow/training-operator pkg/apis/kubeflow.org/v1/common_types.go
  and pkg/controller.v1/*/..._controller.go (controllerName).
- MPI operator v2 (MPIJob kubeflow.org/v2beta1): the same job-name and replica-type labels, operator-name
  "mpi-operator" (kubeflow/mpi-operator pkg/apis/kubeflow/v2beta1/constants.go: OperatorName).
- JobSet (jobset.x-k8s.io/v1alpha2): ``jobset.sigs.k8s.io/jobset-name`` and
  ``jobset.sigs.k8s.io/replicatedjob-name`` on every pod (kubernetes-sigs/jobset api/jobset/v1alpha2/
  jobset_types.go: JobSetNameKey, ReplicatedJobNameKey); the pod's ownerReference is the batch Job between.
- Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org/v1alpha1): it creates a JobSet of the same name that
  it owns (ownerReference TrainJob -> JobSet -> Job -> Pod); nothing on the pod itself names the
  TrainJob, so ``gather`` follows the JobSet's ownerReferences and records the answer on the pod
  (``PodFacts.owner``).
- batch Job: ``batch.kubernetes.io/job-name`` (1.27+) and the legacy ``job-name``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Workload:
    key: str  # what users type: "pytorchjob", "trainjob", ...
    kind: str
    api_version: str
    plural: str
    replica_specs: str | None = None  # Kubeflow's map of replica type -> {replicas, template}
    replica_types: tuple[str, ...] = ()  # in the order the operator documents them


WORKLOADS: dict[str, Workload] = {w.key: w for w in (
    Workload("pytorchjob", "PyTorchJob", "kubeflow.org/v1", "pytorchjobs", "pytorchReplicaSpecs", ("Master", "Worker")),
    # kubeflow/training-operator pkg/apis/kubeflow.org/v1/tensorflow_types.go: TFJobReplicaType*
    Workload("tfjob", "TFJob", "kubeflow.org/v1", "tfjobs", "tfReplicaSpecs", ("Chief", "Master", "PS", "Worker", "Evaluator")),
    Workload("mpijob", "MPIJob", "kubeflow.org/v2beta1", "mpijobs", "mpiReplicaSpecs", ("Launcher", "Worker")),
    Workload("jobset", "JobSet", "jobset.x-k8s.io/v1alpha2", "jobsets"),
    Workload("trainjob", "TrainJob", "trainer.kubeflow.org/v1alpha1", "trainjobs"),
    Workload("job", "Job", "batch/v1", "jobs"),
    Workload("pod", "Pod", "v1", "pods"),
)}
BY_KIND = {w.kind: w for w in WORKLOADS.values()}
# Kinds a user may name for `diagnose` whose object is read as a whole (the pods are found by label).
OWNER_KINDS = ("pytorchjob", "tfjob", "mpijob", "jobset", "trainjob", "job")

KUBEFLOW_JOB = "training.kubeflow.org/job-name"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
OPERATOR_NAME = "training.kubeflow.org/operator-name"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
BATCH_JOB = ("batch.kubernetes.io/job-name", "job-name")
# kubeflow/trainer pkg/constants/constants.go: LabelTrainJobAncestor (on the runtime's Job templates)
TRAINJOB_ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_NODE = "node"  # kubeflow/trainer constants.Node: the trainer's replicated job and container

# operator-name label -> (workload key, apiVersion of the kind that operator serves)
_OPERATORS = {
    "pytorchjob-controller": ("pytorchjob", "kubeflow.org/v1"),
    "tfjob-controller": ("tfjob", "kubeflow.org/v1"),
    "mpijob-controller": ("mpijob", "kubeflow.org/v1"),
    "mpi-operator": ("mpijob", "kubeflow.org/v2beta1"),
}


@dataclass(frozen=True)
class Owner:
    """The object whose pod template makes this pod: where a fix belongs."""

    key: str
    name: str
    api_version: str
    replica: str | None = None  # Kubeflow replica type ("Worker") or JobSet replicated job ("workers")

    @property
    def workload(self) -> Workload:
        return WORKLOADS[self.key]

    @property
    def kind(self) -> str:
        return self.workload.kind


def _meta(pod: Any) -> dict:
    raw = getattr(pod, "pod", pod)
    return (raw or {}).get("metadata") or {}


def replica_type(key: str, label: str | None) -> str | None:
    """The replica type as the owner's spec spells it ("ps" -> "PS"), from the lowercased label."""
    if not label:
        return None
    for name in WORKLOADS[key].replica_types:
        if name.lower() == label.lower():
            return name
    return label


def pod_owner(pod: Any) -> Owner:
    """The workload of a pod (a dict or PodFacts): the chain gather followed when it did, else the
    pod's own labels and ownerReferences; the pod itself when nothing owns it."""
    known = getattr(pod, "owner", None)
    if isinstance(known, Owner):
        return known
    meta = _meta(pod)
    labels = meta.get("labels") or {}
    if labels.get(JOBSET_NAME):
        return Owner("jobset", labels[JOBSET_NAME], WORKLOADS["jobset"].api_version, labels.get(REPLICATED_JOB))
    for ref in meta.get("ownerReferences") or []:
        workload = BY_KIND.get(str(ref.get("kind")))
        if workload is not None and workload.key != "pod" and ref.get("name"):
            api_version = str(ref.get("apiVersion") or workload.api_version)
            replica = replica_type(workload.key, labels.get(REPLICA_TYPE)) if workload.replica_specs else None
            return Owner(workload.key, str(ref["name"]), api_version, replica)
    if labels.get(KUBEFLOW_JOB):
        key, api_version = _OPERATORS.get(labels.get(OPERATOR_NAME, ""), ("pytorchjob", "kubeflow.org/v1"))
        return Owner(key, labels[KUBEFLOW_JOB], api_version, replica_type(key, labels.get(REPLICA_TYPE)))
    for label in BATCH_JOB:
        if labels.get(label):
            return Owner("job", labels[label], "batch/v1")
    return Owner("pod", str(meta.get("name") or ""), "v1")


def owner_of_object(obj: dict) -> Owner | None:
    """The controller of a JobSet (a TrainJob) or of any object, from its ownerReferences."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        workload = BY_KIND.get(str(ref.get("kind")))
        if workload is not None and ref.get("name"):
            return Owner(workload.key, str(ref["name"]), str(ref.get("apiVersion") or workload.api_version))
    return None


def pod_selector(key: str, name: str) -> list[str]:
    """Label selectors that list the pods of a workload, the first that matches wins. A TrainJob's
    pods are those of its JobSet, which has the TrainJob's name."""
    if key in ("jobset", "trainjob"):
        return [f"{JOBSET_NAME}={name}"]
    if key in ("pytorchjob", "tfjob", "mpijob"):
        return [f"{KUBEFLOW_JOB}={name}"]
    if key == "job":
        return [f"{label}={name}" for label in BATCH_JOB]
    return []
