"""Live objects for the remediation definitions' tests, shaped like the upstream examples (Kubeflow
training-operator and mpi-operator examples, the JobSet "paralleljobs" example, Karpenter's NodePool
docs) and as the API server returns them: resourceVersion, uid, status, pods labelled by their
controller."""
from __future__ import annotations

import copy
import zlib

import yaml

PYTORCHJOB = yaml.safe_load("""
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: llama
  namespace: ml
  uid: 5c1a4a44-7d0b-4bd5-9a4c-2f1e9d1b7a10
  resourceVersion: "48113"
  generation: 1
spec:
  runPolicy:
    cleanPodPolicy: None
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727
              command: [python3, /opt/pytorch-mnist/mnist.py, --epochs=1]
              resources:
                limits: {nvidia.com/gpu: 8}
    Worker:
      replicas: 3
      restartPolicy: OnFailure
      template:
        metadata:
          annotations:
            sidecar.istio.io/inject: "false"
        spec:
          containers:
            - name: pytorch
              image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727
              command: [python3, /opt/pytorch-mnist/mnist.py, --epochs=1]
              resources:
                limits: {nvidia.com/gpu: 8}
status:
  conditions:
    - {type: Created, status: "True", reason: PyTorchJobCreated}
    - {type: Running, status: "True", reason: PyTorchJobRunning}
  replicaStatuses:
    Master: {active: 1}
    Worker: {active: 3}
""")

TFJOB = yaml.safe_load("""
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: dist-mnist, namespace: ml, uid: 0b7c1f7e-31a2-4f5e-8f0e-11c2e4d6a901, resourceVersion: "7710"}
spec:
  tfReplicaSpecs:
    PS:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
            - {name: tensorflow, image: kubeflow/tf-dist-mnist-test:latest}
    Worker:
      replicas: 2
      restartPolicy: Never
      template:
        metadata: {labels: {team: vision}}
        spec:
          containers:
            - name: tensorflow
              image: kubeflow/tf-dist-mnist-test:latest
              resources: {limits: {nvidia.com/gpu: 1}}
status:
  conditions: [{type: Running, status: "True"}]
""")

MPIJOB = yaml.safe_load("""
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: pi, namespace: hpc, uid: 2d1f3a9c-8b6e-4c1d-a0f7-5e9b3c2d1a44, resourceVersion: "90211"}
spec:
  slotsPerWorker: 1
  runPolicy:
    cleanPodPolicy: Running
    ttlSecondsAfterFinished: 60
  sshAuthMountPath: /home/mpiuser/.ssh
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
            - image: mpioperator/mpi-pi:openmpi
              name: mpi-launcher
              securityContext: {runAsUser: 1000}
              command: [mpirun]
              args: [-n, "2", /home/mpiuser/pi]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - image: mpioperator/mpi-pi:openmpi
              name: mpi-worker
              securityContext: {runAsUser: 1000}
              command: [/usr/sbin/sshd]
              args: [-De, -f, /home/mpiuser/.sshd_config]
              resources: {limits: {nvidia.com/gpu: 1}}
""")

JOBSET = yaml.safe_load("""
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: paralleljobs, namespace: ml, uid: 7e0c2b1d-1f3a-4d5e-9b8c-6a7d5e4c3b21, resourceVersion: "3301"}
spec:
  suspend: true
  replicatedJobs:
    - name: leader
      replicas: 1
      template:
        spec:
          parallelism: 1
          completions: 1
          backoffLimit: 0
          template:
            spec:
              containers:
                - {name: leader, image: bash:latest, command: [bash, -xc, sleep 1000]}
    - name: workers
      replicas: 2
      template:
        spec:
          parallelism: 2
          completions: 2
          backoffLimit: 0
          template:
            metadata:
              annotations: {kueue.x-k8s.io/podset: workers}
            spec:
              containers:
                - name: worker
                  image: bash:latest
                  command: [bash, -xc, sleep 1000]
                  resources: {limits: {nvidia.com/gpu: 8}}
status:
  replicatedJobsStatus:
    - {name: leader, active: 0, ready: 0, succeeded: 0, failed: 0, suspended: 1}
    - {name: workers, active: 0, ready: 0, succeeded: 0, failed: 0, suspended: 2}
""")

JOB = yaml.safe_load("""
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  namespace: ml
  uid: 9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d
  resourceVersion: "12007"
  labels: {batch.kubernetes.io/job-name: finetune, job-name: finetune}
spec:
  parallelism: 2
  completions: 2
  backoffLimit: 4
  completionMode: NonIndexed
  suspend: false
  selector:
    matchLabels: {batch.kubernetes.io/controller-uid: 9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d}
  template:
    metadata:
      labels:
        batch.kubernetes.io/controller-uid: 9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d
        batch.kubernetes.io/job-name: finetune
        controller-uid: 9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d
        job-name: finetune
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: nvcr.io/nvidia/pytorch:24.05-py3
          resources: {limits: {nvidia.com/gpu: 4}}
status:
  active: 2
  startTime: "2025-08-10T15:30:00Z"
""")

BARE_POD = yaml.safe_load("""
apiVersion: v1
kind: Pod
metadata: {name: notebook, namespace: research, uid: 1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9, resourceVersion: "661"}
spec:
  nodeName: ip-10-0-7-21.ec2.internal
  containers:
    - name: jupyter
      image: quay.io/jupyter/pytorch-notebook:cuda12-latest
      resources: {limits: {nvidia.com/gpu: 1}}
status:
  phase: Running
""")

NODEPOOL = yaml.safe_load("""
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-a100
  uid: 3c2b1a09-8f7e-4d6c-b5a4-93827160f5e4
  resourceVersion: "812"
  generation: 3
spec:
  template:
    metadata:
      labels: {team: ml}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p4d, p5]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      taints:
        - {key: nvidia.com/gpu, effect: NoSchedule}
      expireAfter: 720h
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
    budgets:
      - nodes: 10%
      - nodes: "0"
        schedule: "0 9 * * mon-fri"
        duration: 8h
  limits:
    nvidia.com/gpu: 64
status:
  conditions:
    - {type: Ready, status: "True", reason: Ready, message: "", lastTransitionTime: "2025-08-01T10:00:00Z"}
  resources: {nodes: "2", nvidia.com/gpu: "16"}
""")

GPU_NODE = yaml.safe_load("""
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-7-21.ec2.internal
  uid: 8d7c6b5a-4e3f-4a2b-9c1d-0e9f8a7b6c5d
  resourceVersion: "99012"
  labels:
    karpenter.sh/nodepool: gpu-a100
    karpenter.k8s.aws/instance-gpu-count: "8"
    node.kubernetes.io/instance-type: p4d.24xlarge
spec:
  providerID: aws:///us-east-1a/i-0abc123def4567890
  taints:
    - {key: nvidia.com/gpu, effect: NoSchedule}
status:
  capacity: {cpu: "96", memory: 1176024616Ki, nvidia.com/gpu: "8", pods: "737"}
  allocatable: {cpu: 95690m, memory: 1161672232Ki, nvidia.com/gpu: "7", pods: "737"}
""")

CPU_NODE = yaml.safe_load("""
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-3-4.ec2.internal
  resourceVersion: "99013"
  labels: {karpenter.sh/nodepool: general, node.kubernetes.io/instance-type: m7i.2xlarge}
spec:
  providerID: aws:///us-east-1a/i-0fedcba9876543210
status:
  capacity: {cpu: "8", memory: 32196748Ki, pods: "58"}
  allocatable: {cpu: 7910m, memory: 31179916Ki, pods: "58"}
""")


def pod(name: str, namespace: str, labels: dict, *, phase: str = "Running", annotations: dict | None = None,
        node: str = "ip-10-0-7-21.ec2.internal") -> dict:
    """A pod as a controller creates it: its controller's labels, scheduled, with a status."""
    meta = {"name": name, "namespace": namespace, "labels": dict(labels), "resourceVersion": str(5000 + len(name)),
            "uid": f"00000000-0000-4000-8000-{zlib.crc32(name.encode()):012d}"}
    if annotations is not None:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node, "containers": [{"name": "main", "image": "busybox"}]},
            "status": {"phase": phase}}


def kubeflow_pods(job: str, namespace: str, replicas: dict[str, int]) -> list[dict]:
    return [pod(f"{job}-{rtype.lower()}-{i}", namespace,
                {"training.kubeflow.org/job-name": job, "training.kubeflow.org/replica-type": rtype.lower(),
                 "training.kubeflow.org/replica-index": str(i), "training.kubeflow.org/operator-name": "pytorchjob-controller"})
            for rtype, count in replicas.items() for i in range(count)]


def fresh(obj: dict) -> dict:
    return copy.deepcopy(obj)
