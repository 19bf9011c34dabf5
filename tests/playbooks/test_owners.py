"""Which workload owns a pod (PyTorchJob, TFJob, MPIJob v1/v2beta1, JobSet, TrainJob, Job), where a fix
copied from the pod goes in that owner, and that nothing the cluster injected into the live pod comes
along. Pod shapes follow what each controller writes (see playbooks/analyzers/owners.py for the
upstream files): labels, ownerReferences, and the fields admission adds."""
from __future__ import annotations

import copy

from playbooks.analyzers.fixes import owner_patch
from playbooks.analyzers.injected import clean_pod_spec
from playbooks.analyzers.owners import Owner, pod_owner, pod_selector
from playbooks.facts import PodFacts
from playbooks.validation import validate_patch


def pod(name: str, *, labels: dict, owner: tuple[str, str, str] | None = None) -> PodFacts:
    meta = {"name": name, "namespace": "ml", "labels": labels, "uid": "0b0e5d7c", "resourceVersion": "42"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": owner[0], "kind": owner[1], "name": owner[2], "uid": "u",
                                    "controller": True, "blockOwnerDeletion": True}]
    return PodFacts(pod={"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": live_spec(),
                         "status": {"phase": "Running"}})


def live_spec() -> dict:
    """A pod spec as `kubectl get pod -o yaml` shows it after admission on EKS with IRSA."""
    return {
        "nodeName": "ip-10-0-1-7.ec2.internal",
        "serviceAccountName": "trainer", "serviceAccount": "trainer",
        "priorityClassName": "training", "priority": 1000, "preemptionPolicy": "PreemptLowerPriority",
        "containers": [{
            "name": "pytorch", "image": "nvcr.io/nvidia/pytorch:25.01-py3",
            "resources": {"limits": {"nvidia.com/gpu": "8"}, "requests": {"nvidia.com/gpu": "8"}},
            "env": [{"name": "NCCL_DEBUG", "value": "INFO"},
                    {"name": "AWS_ROLE_ARN", "value": "arn:aws:iam::111122223333:role/trainer"},
                    {"name": "AWS_WEB_IDENTITY_TOKEN_FILE",
                     "value": "/var/run/secrets/eks.amazonaws.com/serviceaccount/token"}],
            "volumeMounts": [{"name": "data", "mountPath": "/data"},
                             {"name": "kube-api-access-x7k2p", "readOnly": True,
                              "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"},
                             {"name": "aws-iam-token", "readOnly": True,
                              "mountPath": "/var/run/secrets/eks.amazonaws.com/serviceaccount"}],
        }],
        "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "aws-iam-token", "projected": {"sources": [{"serviceAccountToken": {
                "audience": "sts.amazonaws.com", "expirationSeconds": 86400, "path": "token"}}]}},
            {"name": "kube-api-access-x7k2p", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                             "fieldPath": "metadata.namespace"}}]}}]}},
        ],
        "tolerations": [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ],
    }


# Labels as each controller writes them on the pods it creates.
PYTORCH = {"training.kubeflow.org/job-name": "llama", "training.kubeflow.org/replica-type": "master",
           "training.kubeflow.org/operator-name": "pytorchjob-controller"}
TF = {"training.kubeflow.org/job-name": "resnet", "training.kubeflow.org/replica-type": "ps",
      "training.kubeflow.org/operator-name": "tfjob-controller"}
MPI_V2 = {"training.kubeflow.org/job-name": "bert", "training.kubeflow.org/replica-type": "worker",
          "training.kubeflow.org/job-role": "worker", "training.kubeflow.org/operator-name": "mpi-operator"}
JOBSET = {"jobset.sigs.k8s.io/jobset-name": "llm", "jobset.sigs.k8s.io/replicatedjob-name": "workers",
          "jobset.sigs.k8s.io/job-index": "0", "batch.kubernetes.io/job-name": "llm-workers-0",
          "job-name": "llm-workers-0"}


def test_kubeflow_owners_by_reference_and_by_operator_label():
    assert pod_owner(pod("llama-master-0", labels=PYTORCH, owner=("kubeflow.org/v1", "PyTorchJob", "llama"))) == \
        Owner("pytorchjob", "llama", "kubeflow.org/v1", "Master")
    assert pod_owner(pod("resnet-ps-0", labels=TF, owner=("kubeflow.org/v1", "TFJob", "resnet"))) == \
        Owner("tfjob", "resnet", "kubeflow.org/v1", "PS")
    # no ownerReference at hand: the operator-name label says which kind and which API
    assert pod_owner(pod("resnet-ps-0", labels=TF)) == Owner("tfjob", "resnet", "kubeflow.org/v1", "PS")
    assert pod_owner(pod("bert-worker-0", labels=MPI_V2)) == Owner("mpijob", "bert", "kubeflow.org/v2beta1", "Worker")
    v1 = {**MPI_V2, "training.kubeflow.org/operator-name": "mpijob-controller"}
    assert pod_owner(pod("bert-worker-0", labels=v1)).api_version == "kubeflow.org/v1"


def test_a_jobset_pod_belongs_to_the_jobset_not_the_job_between():
    p = pod("llm-workers-0-0", labels=JOBSET, owner=("batch/v1", "Job", "llm-workers-0"))
    assert pod_owner(p) == Owner("jobset", "llm", "jobset.x-k8s.io/v1alpha2", "workers")
    assert pod_owner(pod("plain-abcde", labels={"batch.kubernetes.io/job-name": "plain"},
                         owner=("batch/v1", "Job", "plain"))).key == "job"
    assert pod_owner(pod("notebook", labels={})) == Owner("pod", "notebook", "v1")


def test_pod_selectors_per_kind():
    assert pod_selector("trainjob", "ft") == ["jobset.sigs.k8s.io/jobset-name=ft"]
    assert pod_selector("tfjob", "resnet") == ["training.kubeflow.org/job-name=resnet"]
    assert pod_selector("job", "x") == ["batch.kubernetes.io/job-name=x", "job-name=x"]


def test_injected_fields_never_reach_a_fix():
    spec = clean_pod_spec(live_spec())
    assert "nodeName" not in spec and "serviceAccount" not in spec and "priority" not in spec
    assert spec["serviceAccountName"] == "trainer" and spec["priorityClassName"] == "training"
    assert [v["name"] for v in spec["volumes"]] == ["data"]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert spec["containers"][0]["env"] == [{"name": "NCCL_DEBUG", "value": "INFO"}]
    assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def test_a_toleration_the_user_wrote_with_another_value_is_kept():
    mine = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}
    assert clean_pod_spec({"tolerations": [mine]})["tolerations"] == [mine]
    # a user volume that merely starts like the token volume but is not a token stays
    keep = {"name": "kube-api-access-cache", "emptyDir": {}}
    assert clean_pod_spec({"volumes": [keep]})["volumes"] == [keep]


def test_fix_for_a_pytorchjob_pod_patches_its_replica_and_validates():
    p = pod("llama-master-0", labels=PYTORCH, owner=("kubeflow.org/v1", "PyTorchJob", "llama"))
    spec = p.pod["spec"]
    ctx = owner_patch(p, {"tolerations": spec["tolerations"], "containers": copy.deepcopy(spec["containers"])})
    template = ctx["patch"]["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    assert "kube-api-access" not in str(template) and "tolerationSeconds" not in str(template)
    assert ctx["apply"].startswith("kubectl patch pytorchjob llama -n ml --type merge")
    live = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "llama", "namespace": "ml"},
            "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "pytorch", "image": "nvcr.io/nvidia/pytorch:25.01-py3"}]}}}}}}
    assert validate_patch(live, ctx["patch"]) == []


def test_fix_for_tfjob_and_mpijob_pods_uses_their_replica_specs():
    tf = owner_patch(pod("resnet-ps-0", labels=TF), {"nodeSelector": {"a": "b"}})
    assert tf["patch"]["kind"] == "TFJob" and "PS" in tf["patch"]["spec"]["tfReplicaSpecs"]
    assert tf["apply"].startswith("kubectl patch tfjob resnet")
    mpi = owner_patch(pod("bert-worker-0", labels=MPI_V2), {"nodeSelector": {"a": "b"}})
    assert mpi["patch"]["apiVersion"] == "kubeflow.org/v2beta1"
    assert mpi["patch"]["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"] == {"nodeSelector": {"a": "b"}}


def test_fix_for_a_jobset_pod_names_its_replicated_job():
    p = pod("llm-workers-0-0", labels=JOBSET, owner=("batch/v1", "Job", "llm-workers-0"))
    ctx = owner_patch(p, {"tolerations": p.pod["spec"]["tolerations"]})
    [rj] = ctx["patch"]["spec"]["replicatedJobs"]
    assert rj["name"] == "workers"
    assert rj["template"]["spec"]["template"]["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert ctx["patch"]["apiVersion"] == "jobset.x-k8s.io/v1alpha2" and "kubectl delete jobset llm" in ctx["apply"]


def test_fix_for_a_trainjob_pod_uses_pod_template_overrides_and_trainer_resources():
    p = pod("ft-node-0-0", labels={**JOBSET, "jobset.sigs.k8s.io/jobset-name": "ft",
                                   "jobset.sigs.k8s.io/replicatedjob-name": "node"})
    p.owner = Owner("trainjob", "ft", "trainer.kubeflow.org/v1alpha1", "node")  # what gather found
    spec = p.pod["spec"]
    ctx = owner_patch(p, {"tolerations": spec["tolerations"], "containers": copy.deepcopy(spec["containers"]),
                          "nodeName": "ip-1"})
    body = ctx["patch"]["spec"]
    assert ctx["patch"]["kind"] == "TrainJob" and ctx["patch"]["apiVersion"] == "trainer.kubeflow.org/v1alpha1"
    [override] = body["podTemplateOverrides"]
    assert override["targetJobs"] == [{"name": "node"}]
    assert override["spec"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert override["spec"]["containers"] == [{"name": "pytorch", "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
                                               "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]
    assert body["trainer"]["resourcesPerNode"] == {"limits": {"nvidia.com/gpu": "8"}, "requests": {"nvidia.com/gpu": "8"}}
    # the image cannot be overridden per container: the apply text says where it belongs
    assert "containers[pytorch].image" in ctx["apply"] and "TrainingRuntime" in ctx["apply"]
