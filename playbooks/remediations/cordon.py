"""cordon-gpu-node: mark a node with a faulty GPU unschedulable, so no new GPU pod lands there while
people look at it. Nothing running is evicted. gpubot uncordons only a node it cordoned itself: the
undo is planned only when the node was schedulable, and it tests that it still is cordoned."""
from __future__ import annotations

from playbooks.model import Remediation
from playbooks.remediations.diff import object_diff
from playbooks.remediations.model import (
    JSON_PATCH, MERGE_PATCH, Change, NothingToDo, ObjectRef, Permission, Plan, Reads,
)
from playbooks.remediations.proposals import InvalidRemediation
from playbooks.remediations.readback import verify_change

GPU = "nvidia.com/gpu"
UNSCHEDULABLE = "/spec/unschedulable"
# Node labels that say a GPU is there even when the device plugin does not advertise it (a faulty
# GPU can take the plugin down with it): Karpenter's, EKS Auto Mode's, GPU feature discovery's.
GPU_COUNT_LABELS = ("karpenter.k8s.aws/instance-gpu-count", "eks.amazonaws.com/instance-gpu-count", "nvidia.com/gpu.count")
GPU_PRESENT_LABELS = ("nvidia.com/gpu.present",)


class CordonGpuNode:
    kind = "cordon-gpu-node"
    permissions = (Permission("", "nodes", "get"), Permission("", "nodes", "patch"))

    def reads(self, remediation: Remediation) -> Reads:
        return Reads(owner=ObjectRef("v1", "Node", "nodes", remediation.params["node"]))

    def plan(self, remediation: Remediation, owner: dict, pods: list[dict]) -> Plan:
        ref = self.reads(remediation).owner
        name = (owner.get("metadata") or {}).get("name")
        if owner.get("kind") != "Node" or name != ref.name:
            raise InvalidRemediation(f"expected node {ref.name}, read {owner.get('kind')} {name}")
        if not has_gpu(owner):
            raise InvalidRemediation(f"node {name} has no GPU (no {GPU} in its capacity, no GPU label): gpubot cordons "
                                     f"only GPU nodes; use kubectl cordon {name} if that is what you want")
        before = (owner.get("spec") or {}).get("unschedulable")
        if before is True:
            raise NothingToDo(f"node {name} is already cordoned; gpubot did not cordon it and will not uncordon it")
        change = Change(ref=ref, patch_type=MERGE_PATCH, patch={"spec": {"unschedulable": True}},
                        resource_version=(owner.get("metadata") or {}).get("resourceVersion"),
                        watched={UNSCHEDULABLE: before})
        restore = ({"op": "replace", "path": UNSCHEDULABLE, "value": before} if before is not None
                   else {"op": "remove", "path": UNSCHEDULABLE})
        undo = Change(ref=ref, patch_type=JSON_PATCH, watched={UNSCHEDULABLE: True},
                      patch=[{"op": "test", "path": UNSCHEDULABLE, "value": True}, restore])
        preview = object_diff(ref, {"spec": {"unschedulable": before}} if before is not None else {"spec": {}},
                              {"spec": {"unschedulable": True}})
        return Plan(changes=(change,), undo=(undo,), preview=preview,
                    summary=f"cordon node {name} (schedulable now; nothing is evicted)")

    def verify(self, change: Change, after: dict) -> str | None:
        return verify_change(change, after)


def has_gpu(node: dict) -> bool:
    status = node.get("status") or {}
    if any(_positive((status.get(field) or {}).get(GPU)) for field in ("capacity", "allocatable")):
        return True
    labels = (node.get("metadata") or {}).get("labels") or {}
    return any(_positive(labels.get(key)) for key in GPU_COUNT_LABELS) or any(labels.get(k) == "true" for k in GPU_PRESENT_LABELS)


def _positive(value: object) -> bool:
    return str(value or "").isdigit() and int(str(value)) > 0
