"""Scenario documents that put one real line per finding code where a live cluster carries it.

Each line is the one tests/playbooks/lines.py LINES holds for the code (real output: upstream format
strings, upstream tests, public issue reports; see that module). Here it is placed where a cluster shows
it, in the shape the API returns it (sim/scenarios/README.md), one namespace per code:

- container log of a training pod of a batch Job: ``kubectl logs`` (``--previous`` after a crash);
- core/v1 Event on a pod or a node, its reason and reporting component taken from the
  ``kubectl describe`` line itself (kubectl pkg/describe: Type, Reason, Age, From, Message columns);
- a pod condition, a NodeClaim condition (kubernetes-sigs/karpenter pkg/apis/v1/nodeclaim_status.go);
- the Karpenter leader's log: ``failed launching nodeclaim`` with the NodeClaim's name
  (kubernetes-sigs/karpenter pkg/controllers/nodeclaim/lifecycle/launch.go logs the launch error
  there, and deletes the NodeClaim on insufficient capacity, so the log outlives the object);
- the NVIDIA device plugin pod's log on a GPU node.
"""
from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone

from tests.playbooks.lines import LINES

IMAGE = "public.ecr.aws/deep-learning-containers/pytorch-training:2.8.0-gpu-py312-cu129-ubuntu22.04-ec2-v1.0"
REGION = "us-west-2"
CLAIM_LINE = re.compile(r"^NodeClaim (?P<claim>\S+) event: (?P<error>.*)$")


def line_for(code: str, index: int = 0) -> str:
    """The ``index``-th LINES line for a code."""
    return [line for c, line, _ in LINES if c == code][index]


@dataclass(frozen=True)
class Described:
    """One ``kubectl describe`` event row: Type, Reason, Age, From, Message (two or more spaces apart)."""

    type: str
    reason: str
    component: str
    message: str


def described(line: str, *, reason: str = "FailedScheduling", component: str = "default-scheduler") -> Described:
    """The event a describe row shows; a bare message is the scheduler's FailedScheduling."""
    parts = re.split(r"\s{2,}", line.strip(), maxsplit=4)
    if len(parts) == 5 and parts[0] in ("Normal", "Warning"):
        return Described(parts[0], parts[1], parts[3], parts[4])
    return Described("Warning", reason, component, line.strip())


def slug(code: str) -> str:
    return "live-" + code.replace(".", "-").replace("_", "-")


@dataclass
class Scenario:
    code: str
    target: str
    objects: list[dict] = field(default_factory=list)
    logs: list[dict] = field(default_factory=list)
    where: str = ""  # where the signal lives, for the failure message

    @property
    def namespace(self) -> str:
        return slug(self.code)

    def document(self) -> dict:
        return {"name": self.namespace, "description": f"{self.code}: {self.where}", "base": "karpenter",
                "region": REGION, "target": self.target, "namespace": self.namespace,
                "expect": {"first_finding": self.code}, "objects": self.objects, "logs": self.logs}


# -- object builders -------------------------------------------------------------------------------

def _container(name: str = "trainer", *, gpus: int = 8) -> dict:
    return {"name": name, "image": IMAGE, "command": ["torchrun", "--nproc-per-node=8", "/workspace/train.py"],
            "resources": {"requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": str(gpus)},
                          "limits": {"nvidia.com/gpu": str(gpus)}}}


def job(ns: str, name: str) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": ns, "creationTimestamp": "-40m"},
            "spec": {"backoffLimit": 6, "completions": 1, "parallelism": 1,
                     "selector": {"matchLabels": {"batch.kubernetes.io/job-name": name}},
                     "template": {"metadata": {"labels": {"batch.kubernetes.io/job-name": name, "job-name": name}},
                                  "spec": {"restartPolicy": "OnFailure", "containers": [_container()]}}},
            "status": {"active": 1, "startTime": "-40m"}}


def pod(ns: str, name: str, *, state: str, node: str | None = None, job_name: str | None = None,
        started: str = "-30m", gates: list[str] | None = None, conditions: list[dict] | None = None,
        reason: str | None = None, message: str | None = None) -> dict:
    """state: running | crashing | pending | failed."""
    meta: dict = {"name": name, "namespace": ns, "creationTimestamp": "-40m"}
    if job_name:
        meta["labels"] = {"batch.kubernetes.io/job-name": job_name, "job-name": job_name}
        meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": job_name,
                                    "uid": f"00000000-0000-4000-8000-{zlib.crc32((ns + '/' + job_name).encode()):012d}",
                                    "controller": True, "blockOwnerDeletion": True}]
    spec: dict = {"containers": [_container()], "restartPolicy": "OnFailure" if job_name else "Always",
                  "schedulerName": "default-scheduler", "tolerations": [
                      {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}
    if node:
        spec["nodeName"] = node
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    status: dict = {"phase": {"running": "Running", "crashing": "Running", "pending": "Pending", "failed": "Failed"}[state]}
    if state == "pending":
        status["conditions"] = conditions or [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                               "lastTransitionTime": "-10m",
                                               "message": "0/3 nodes are available"}]
    elif state in ("running", "crashing"):
        container: dict = {"name": "trainer", "image": IMAGE, "imageID": "", "ready": state == "running",
                           "started": state == "running", "restartCount": 0 if state == "running" else 3}
        if state == "running":
            container["state"] = {"running": {"startedAt": started}}
            container["lastState"] = {}
        else:
            container["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message": (
                f"back-off 40s restarting failed container=trainer pod={name}_{ns}")}}
            container["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": "-3m",
                                                     "finishedAt": "-2m"}}
        status.update(containerStatuses=[container], startTime="-35m", hostIP="10.0.3.10", podIP="10.0.3.77",
                      conditions=[{"type": "PodScheduled", "status": "True", "lastTransitionTime": "-35m"}])
    else:
        status.update(reason=reason, message=message, startTime="-35m")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def gpu_node(name: str, *, nodepool: str = "gpu", gpus: int | None = 8, ready: dict | None = None,
             claim: str | None = None, taints: list[dict] | None = None) -> dict:
    capacity = {"cpu": "96", "memory": "1165680964Ki", "pods": "737"}
    if gpus is not None:
        capacity["nvidia.com/gpu"] = str(gpus)
    meta: dict = {"name": name, "creationTimestamp": "-2h", "labels": {
        "karpenter.sh/nodepool": nodepool, "karpenter.sh/capacity-type": "on-demand",
        "karpenter.sh/registered": "true", "karpenter.sh/initialized": "true",
        "karpenter.k8s.aws/instance-gpu-count": "8", "karpenter.k8s.aws/instance-gpu-name": "a100",
        "node.kubernetes.io/instance-type": "p4d.24xlarge", "kubernetes.io/hostname": name,
        "topology.kubernetes.io/zone": f"{REGION}b", "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"}}
    if claim:
        meta["ownerReferences"] = [{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": claim,
                                    "uid": "00000000-0000-4000-8000-000000000c1a", "blockOwnerDeletion": True}]
    ready = ready or {"type": "Ready", "status": "True", "reason": "KubeletReady",
                      "message": "kubelet is posting ready status", "lastHeartbeatTime": "-20s",
                      "lastTransitionTime": "-2h"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta,
            "spec": {"providerID": f"aws:///{REGION}b/i-0{zlib.crc32(name.encode()):016x}", "taints": taints or []},
            "status": {"capacity": capacity, "allocatable": dict(capacity), "conditions": [ready]}}


def nodeclaim(name: str, *, nodepool: str, conditions: list[dict], created: str = "-40m") -> dict:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": name, "creationTimestamp": created, "labels": {"karpenter.sh/nodepool": nodepool}},
            "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                     "requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": [nodepool]},
                                      {"key": "node.kubernetes.io/instance-type", "operator": "In",
                                       "values": ["p4d.24xlarge"]}],
                     "resources": {"requests": {"nvidia.com/gpu": "8"}}},
            "status": {"conditions": [{"lastTransitionTime": created, **c} for c in conditions]}}


def event(ns: str | None, kind: str, name: str, said: Described, *, suffix: str, last: str = "-1m",
          host: str | None = None) -> dict:
    involved = {"apiVersion": "v1", "kind": kind, "name": name}
    if ns:
        involved["namespace"] = ns
    source = {"component": said.component, **({"host": host} if host else {})}
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.{suffix}", "namespace": ns or "default"},
            "involvedObject": involved, "reason": said.reason, "message": said.message, "source": source,
            "type": said.type, "count": 1, "firstTimestamp": last, "lastTimestamp": last}


def karpenter_error(claim: str, error: str) -> str:
    """The leader's log line for a failed launch (Karpenter v1 JSON logger, controller nodeclaim.lifecycle)."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return json.dumps({"level": "ERROR", "time": now, "logger": "controller", "message": "failed launching nodeclaim",
                       "commit": "1ad0d78", "controller": "nodeclaim.lifecycle", "controllerGroup": "karpenter.sh",
                       "controllerKind": "NodeClaim", "NodeClaim": {"name": claim}, "namespace": "", "name": claim,
                       "reconcileID": "5f0c2e7d", "error": error}, separators=(",", ":"))


# -- placements: where a cluster carries each kind of signal ----------------------------------------

def _node_name(code: str) -> str:
    return f"ip-10-0-{len(code)}-{sum(map(ord, code)) % 250}.{REGION}.compute.internal"


def training_log(code: str, line: str, *, crashed: bool) -> Scenario:
    """The line in the trainer's log of a batch Job's pod: the previous run's log of a pod in
    CrashLoopBackOff (``crashed``), else the running container's log."""
    ns, name, node = slug(code), "train", _node_name(code)
    text = f"[2026-01-01 12:00:00] step 118 loss 2.314\n{line}\n"
    return Scenario(code, f"job/{name}", where="log of a training pod" + (" (previous run)" if crashed else ""),
                    objects=[job(ns, name), gpu_node(node),
                             pod(ns, f"{name}-0", state="crashing" if crashed else "running", node=node, job_name=name)],
                    logs=[{"namespace": ns, "pod": f"{name}-0", "container": "trainer", "previous": crashed, "text": text}])


def pending_pod_event(code: str, line: str, *, nominated: str | None = None) -> Scenario:
    """The line as an event on a Pending pod (FailedScheduling from the scheduler or Karpenter)."""
    ns, name = slug(code), "train-0"
    said = described(line)
    objects = [pod(ns, name, state="pending"), event(ns, "Pod", name, said, suffix="18a0f1")]
    if nominated:
        objects.append(event(ns, "Pod", name, Described("Normal", "Nominated", "karpenter",
                                                        f"Pod should schedule on: nodeclaim/{nominated}"),
                             suffix="18a0f0", last="-3m"))
    return Scenario(code, f"pod/{name}", objects=objects, where=f"{said.reason} event from {said.component} on a Pending pod")


def gated_pod(code: str, line: str) -> Scenario:
    """A pod held by spec.schedulingGates, whose PodScheduled condition is the line."""
    ns, name = slug(code), "train-0"
    kind, status, reason, message = re.split(r"\s{2,}", line.strip(), maxsplit=3)
    condition = {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": "-5m"}
    return Scenario(code, f"pod/{name}", where="PodScheduled condition of a gated pod", objects=[
        pod(ns, name, state="pending", gates=["example.com/quota-check"], conditions=[condition])])


def launch_failure(code: str, line: str) -> Scenario:
    """A Pending pod nominated for a NodeClaim whose launch failed: the Karpenter leader logged the
    error under the NodeClaim's name (the event went to the NodeClaim, which Karpenter deleted)."""
    said = described(line, reason="InsufficientCapacityError", component="karpenter")
    found = CLAIM_LINE.match(said.message)
    claim, error = (found["claim"], found["error"]) if found else (f"{slug(code)[5:20]}-x1", said.message)
    if said.message.startswith("{"):  # already the controller's JSON line
        error = json.loads(said.message)["error"]
    scenario = pending_pod_event(code, "Normal  Nominated  3m  karpenter  Pod should schedule on: nodeclaim/" + claim)
    scenario.logs.append({"karpenter": "leader", "text": karpenter_error(claim, error) + "\n"})
    scenario.where = "Karpenter leader log (failed launching nodeclaim) for the pod's nominated NodeClaim"
    return scenario


def claim_condition(code: str, line: str) -> Scenario:
    """A Pending pod nominated for a NodeClaim whose condition (as describe prints it) is the line;
    the claim is past Karpenter's registration TTL (15 min), so Unknown is a failure, not a launch."""
    claim = "gpu-live1"
    kind, status, reason, message = re.split(r"\s{2,}", line.strip(), maxsplit=3)
    conditions = [{"type": "Launched", "status": "True", "reason": "Launched", "message": ""},
                  {"type": "Registered", "status": "True", "reason": "Registered", "message": ""},
                  {"type": kind, "status": status, "reason": reason, "message": message}]
    scenario = pending_pod_event(code, "Normal  Nominated  30m  karpenter  Pod should schedule on: nodeclaim/" + claim)
    scenario.objects.append(nodeclaim(claim, nodepool="gpu", conditions=conditions, created="-40m"))
    scenario.where = f"NodeClaim condition {kind}"
    return scenario


def nominated_launching(code: str, line: str) -> Scenario:
    """The line is Karpenter's Nominated event on a Pending pod; the NodeClaim it names was created a
    minute ago and is launching (Launched Unknown, as a new NodeClaim starts)."""
    said = described(line)
    [claim] = re.findall(r"nodeclaim/(\S+)", said.message)
    scenario = pending_pod_event(code, "Normal  Nominated  1m  karpenter  Pod should schedule on: nodeclaim/" + claim)
    kind, status, reason, message = re.split(r"\s{2,}", line_for("karpenter.provisioning", 1), maxsplit=3)
    scenario.objects.append(nodeclaim(claim, nodepool="gpu", created="-1m", conditions=[
        {"type": kind, "status": status, "reason": reason, "message": message}]))
    scenario.where = "Nominated event from karpenter on a Pending pod, its NodeClaim launching"
    return scenario


def failed_pod_event(code: str, line: str) -> Scenario:
    """A pod kubelet rejected at admission: its event is the line, its status.reason the event reason."""
    ns, name, node = slug(code), "train-0", _node_name(code)
    said = described(line)
    return Scenario(code, f"pod/{name}", where=f"{said.reason} event from {said.component} on a rejected pod", objects=[
        gpu_node(node), pod(ns, name, state="failed", node=node, reason=said.reason,
                            message=f"Pod was rejected: {said.message}"),
        event(ns, "Pod", name, said, suffix="18a0f2", host=node)])


def node_event(code: str, line: str, *, ready: dict | None = None, node: str | None = None) -> Scenario:
    """A node event (node-controller, Karpenter, node-problem-detector) on the node a running training
    pod is on."""
    ns, name = slug(code), "train"
    node = node or _node_name(code)
    said = described(line, reason="NVRMXid", component="kernel-monitor")
    return Scenario(code, f"job/{name}", where=f"{said.reason} event from {said.component} on the pod's node", objects=[
        job(ns, name), gpu_node(node, ready=ready), pod(ns, f"{name}-0", state="running", node=node, job_name=name),
        event(None, "Node", node, said, suffix="18a0f3")])


def starting_pod_event(code: str, line: str) -> Scenario:
    """A kubelet event on a pod that started two minutes ago (Pulled)."""
    ns, name, node = slug(code), "train-0", _node_name(code)
    said = described(line)
    return Scenario(code, f"pod/{name}", where=f"{said.reason} event from kubelet on a pod still starting", objects=[
        gpu_node(node), pod(ns, name, state="running", node=node, started="-2m"),
        event(ns, "Pod", name, said, suffix="18a0f4", last="-2m", host=node)])


def crash_loop_event(code: str, line: str) -> Scenario:
    """A pod in CrashLoopBackOff with kubelet's BackOff event and a previous log with no known cause."""
    scenario = training_log(code, "Traceback (most recent call last):\n  File \"/workspace/train.py\", line 9\n"
                                  "TrainerStateError: 'labels'", crashed=True)
    said = described(line)
    said = Described(said.type, said.reason, said.component,
                     said.message.replace("llama-3-8b-worker-0_ml-train", f"train-0_{scenario.namespace}"))
    scenario.objects.append(event(scenario.namespace, "Pod", "train-0", said, suffix="18a0f5"))
    scenario.where = "BackOff event from kubelet on a pod in CrashLoopBackOff"
    return scenario


def gpu_node_without_gpus(code: str, line: str) -> Scenario:
    """A p4d node whose capacity lacks nvidia.com/gpu, its device plugin pod logging the line."""
    ns, node = slug(code), _node_name(code)
    plugin = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "nvidia-device-plugin-daemonset-live1", "namespace": "kube-system", "creationTimestamp": "-2h",
        "labels": {"app.kubernetes.io/name": "nvidia-device-plugin", "name": "nvidia-device-plugin-ds"}},
        "spec": {"nodeName": node, "containers": [{"name": "nvidia-device-plugin-ctr",
                                                   "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"}]},
        "status": {"phase": "Running", "containerStatuses": [{
            "name": "nvidia-device-plugin-ctr", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.1", "imageID": "",
            "ready": True, "restartCount": 0, "state": {"running": {"startedAt": "-2h"}}}]}}
    return Scenario(code, f"node/{node}", where="GPU node with no nvidia.com/gpu; its device plugin's log",
                    objects=[{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
                             gpu_node(node, gpus=None), plugin],
                    logs=[{"namespace": "kube-system", "pod": plugin["metadata"]["name"],
                           "container": "nvidia-device-plugin-ctr", "text": line + "\n"}])
