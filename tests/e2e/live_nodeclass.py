"""Live placements for what the pod never names itself: an EC2NodeClass condition that keeps its NodePool
from launching anything, and an unbound claim of a pending pod with its provisioner's events.

Both build on live_signals.pending_pod_event (a Pending pod and the scheduler's FailedScheduling):
- the line ``Type  Status  Reason  Message`` is a condition of EC2NodeClass ``gpu-live`` (Ready False with
  UnhealthyDependents, as aws/karpenter-provider-aws pkg/controllers/nodeclass/readiness.go sets it), used
  by NodePool ``gpu-live`` (NodeClassReady False), which the pod selects;
- the line is an event on PersistentVolumeClaim ``ckpt`` that the pod mounts (gather reads the events of
  a pending pod's unbound claims).
"""
from __future__ import annotations

import re

from tests.e2e import live_signals as live

NAME = "gpu-live"


def _nodeclass(condition: dict) -> dict:
    others = [{"type": t, "status": "True", "reason": t, "message": ""}
              for t in ("AMIsReady", "SubnetsReady", "SecurityGroupsReady", "InstanceProfileReady")
              if t != condition["type"]]
    ready = {"type": "Ready", "status": "False", "reason": "UnhealthyDependents", "message": f"{condition['type']}=False"}
    return {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
            "metadata": {"name": NAME, "creationTimestamp": "-2d", "generation": 1},
            "spec": {"amiSelectorTerms": [{"alias": "al2@latest"}], "role": "KarpenterNodeRole-live",
                     "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "live"}}],
                     "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "live"}}]},
            "status": {"conditions": [{"lastTransitionTime": "-1h", "observedGeneration": 1, **c}
                                      for c in (*others, condition, ready)]}}


def _nodepool(name: str = NAME, *, nodeclass: str = NAME, ready: bool = False) -> dict:
    conditions = [{"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": "-2d",
                   "observedGeneration": 1} for t in ("ValidationSucceeded", "NodeClassReady", "Ready")]
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {"name": name, "creationTimestamp": "-2d", "generation": 1},
            "spec": {"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"},
                     "template": {"spec": {
                         "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": nodeclass},
                         "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                           "values": ["p4d.24xlarge"]}],
                         "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]}}},
            "status": {"conditions": conditions if ready else [
                {"type": "ValidationSucceeded", "status": "True", "reason": "ValidationSucceeded", "message": "",
                 "lastTransitionTime": "-2d", "observedGeneration": 1},
                {"type": "NodeClassReady", "status": "False", "reason": "NodeClassNotReady",
                 "message": "EC2NodeClass not ready", "lastTransitionTime": "-1h", "observedGeneration": 1},
                {"type": "Ready", "status": "False", "reason": "UnhealthyDependents", "message": "NodeClassReady=False",
                 "lastTransitionTime": "-1h", "observedGeneration": 1}]}}


def nodeclass_condition(code: str, line: str) -> live.Scenario:
    kind, status, reason, message = re.split(r"\s{2,}", line.strip(), maxsplit=3)
    scenario = live.pending_pod_event(code, "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 "
                                            "nodes are available: 3 No preemption victims found for incoming pod.")
    scenario.objects[0]["spec"]["nodeSelector"] = {"karpenter.sh/nodepool": NAME}
    # NodePools are cluster-wide and the live scenarios share one cluster: a Ready pool (on the base's Ready
    # EC2NodeClass "default") keeps the broken one from being every other pending pod's only way to a node.
    scenario.objects += [_nodeclass({"type": kind, "status": status, "reason": reason, "message": message}), _nodepool(),
                         _nodepool(f"{NAME}-ready", nodeclass="default", ready=True)]
    scenario.where = f"EC2NodeClass condition {kind} of the pod's NodePool"
    return scenario


def claim_event(code: str, line: str) -> live.Scenario:
    ns = live.slug(code)
    said = live.described(line)
    scenario = live.pending_pod_event(code, 'running PreBind plugin "VolumeBinding": binding volumes: provisioning '
                                            'failed for PVC "ckpt"')
    pod = scenario.objects[0]
    pod["spec"]["volumes"] = [{"name": "ckpt", "persistentVolumeClaim": {"claimName": "ckpt"}}]
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "ckpt", "mountPath": "/ckpt"}]
    scenario.objects += [
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "ckpt", "namespace": ns, "creationTimestamp": "-20m",
                      "annotations": {"volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com"}},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "500Gi"}},
                  "storageClassName": "gp3-encrypted", "volumeMode": "Filesystem"},
         "status": {"phase": "Pending"}},
        live.event(ns, "PersistentVolumeClaim", "ckpt", said, suffix="18a0f9")]
    scenario.where = f"{said.reason} event from {said.component} on the pod's claim"
    return scenario
