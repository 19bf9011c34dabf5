"""Fixtures for the simulated cluster: a throwaway scenario directory and a running sim over HTTP."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest
from kubernetes import client, config

from sim.serve import SimHandle, start_sim

BASE = """\
name: _base
objects:
  - {apiVersion: v1, kind: Namespace, metadata: {name: kube-system}}
  - apiVersion: v1
    kind: Pod
    metadata: {name: karpenter-0, namespace: kube-system, labels: {app.kubernetes.io/name: karpenter}}
    spec: {nodeName: node-sys, containers: [{name: controller, image: karpenter}]}
    status: {phase: Running}
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: gpu}
    spec: {disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s}}
logs:
  - {namespace: kube-system, pod: karpenter-0, container: controller, text: "base line\\n"}
"""

ALPHA = """\
name: alpha
seed: "002"
description: a job whose master crashed
target: pytorchjob/trainer
namespace: team-a
expect: {first_finding: runtime.cuda_oom}
objects:
  - {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}
  - apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata: {name: trainer}
    spec: {pytorchReplicaSpecs: {Master: {replicas: 1}}}
  - apiVersion: v1
    kind: Pod
    metadata: {name: trainer-master-0, labels: {job-name: trainer, role: master}}
    spec:
      nodeName: node-a
      containers: [{name: pytorch, image: trainer}]
    status: {phase: Running}
  - apiVersion: v1
    kind: Pod
    metadata: {name: trainer-worker-0, labels: {job-name: trainer, role: worker}}
    spec:
      nodeName: node-a
      containers: [{name: pytorch, image: trainer}, {name: sidecar, image: proxy}]
    status: {phase: Running}
  - apiVersion: v1
    kind: Pod
    metadata: {name: trainer-worker-1, labels: {job-name: trainer, role: worker, tier: spot}}
    spec: {containers: [{name: pytorch, image: trainer}]}
    status: {phase: Pending}
  - apiVersion: v1
    kind: Event
    metadata: {name: trainer-worker-1.1}
    involvedObject: {kind: Pod, name: trainer-worker-1, namespace: team-a}
    reason: FailedScheduling
    type: Warning
    source: {component: default-scheduler}
    message: "0/3 nodes are available"
  - apiVersion: v1
    kind: Event
    metadata: {name: trainer-master-0.1}
    involvedObject: {kind: Pod, name: trainer-master-0, namespace: team-a}
    reason: BackOff
    type: Warning
    source: {component: kubelet}
  - apiVersion: example.com/v1
    kind: Widget
    metadata: {name: w1, namespace: team-a}
    spec: {size: 1}
  - apiVersion: v1
    kind: Node
    metadata: {name: node-a, labels: {karpenter.sh/nodepool: gpu}}
    status: {conditions: [{type: Ready, status: "True"}]}
logs:
  - {pod: trainer-master-0, container: pytorch, text: "step 1\\nstep 2\\nstep 3\\n"}
  - {pod: trainer-master-0, container: pytorch, previous: true, file: logs/alpha/master-previous.log}
  - {namespace: kube-system, pod: karpenter-0, container: controller, text: "alpha line\\n"}
"""

BETA = """\
name: beta
seed: "004"
description: a pending job
target: job/beta-job
namespace: team-b
expect: {first_finding: karpenter.no_instance_type}
objects:
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: gpu}
    spec: {disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s}}
  - apiVersion: batch/v1
    kind: Job
    metadata: {name: beta-job}
    spec:
      parallelism: 1
      template: {spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}}
logs:
  - {namespace: kube-system, pod: karpenter-0, container: controller, text: "beta line\\n"}
"""


def write_scenarios(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text))
    return directory


@pytest.fixture
def scenario_dir(tmp_path: Path) -> Path:
    return write_scenarios(
        tmp_path / "scenarios",
        {
            "_base.yaml": BASE,
            "alpha.yaml": ALPHA,
            "beta.yaml": BETA,
            "logs/alpha/master-previous.log": "Traceback\nCUDA out of memory\n",
        },
    )


@pytest.fixture
def sim(scenario_dir: Path) -> SimHandle:
    with start_sim(scenarios=None, ec2=False, directory=scenario_dir) as handle:
        yield handle


@pytest.fixture
def api_client(sim: SimHandle) -> client.ApiClient:
    """Built from the kubeconfig, the same code path production uses."""
    api = config.new_client_from_config(config_file=str(sim.kubeconfig), context=sim.context)
    yield api
    api.close()


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def custom(api_client: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api_client)
