"""Detail paragraphs for what keeps a pod from its volume or its node from being launched at all: a claim
nothing provisions, an EC2NodeClass that is not Ready.

Registered into ``details.WRITERS`` / ``NEXT_STEPS``. Fields come from signatures/volumes.py
(``problem``, ``storageclass``, ``pvc``, ``provisioner``) and karpenter_nodeclass.py / karpenter_nodeclaim.py
(``condition``, ``reason``, ``message``), and from analyzers/volumes.py, which names the claim.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from playbooks.signatures.details import View

_WAITS = ("The pod stays Pending (or ContainerCreating) until the claim is bound; the provisioner retries with a "
          "back-off, so once the cause is fixed the volume is created without touching the pod.")


def _claim(view: View) -> str:
    pvc = view.get("pvc")
    return f"claim {pvc}" if pvc else "the claim"


def _class(view: View) -> str:
    return f" StorageClass {view.get('storageclass')}" if view.get("storageclass") else " its StorageClass"


_PROVISIONING: dict[str, Callable[[View], str]] = {
    "unauthorized": lambda view: (
        f"The CSI driver tried to create the volume for {_claim(view)} ({_class(view).strip()}) and EC2 refused: "
        "UnauthorizedOperation. The EBS CSI controller calls ec2:CreateVolume with the IAM role of its "
        "ServiceAccount (ebs-csi-controller-sa, through IRSA or EKS Pod Identity), not the node role; that role "
        "lacks AmazonEBSCSIDriverPolicy, or the add-on was installed without a role at all. " + _WAITS
    ),
    "kms": lambda view: (
        f"The volume for {_claim(view)} is encrypted with a KMS key ({_class(view).strip()} kmsKeyId) that the EBS "
        "CSI driver's role may not use: it needs kms:CreateGrant, kms:GenerateDataKeyWithoutPlainText and "
        "kms:Decrypt on that key, in the key policy or its own policy. " + _WAITS
    ),
    "missing_storage_class": lambda view: (
        f"{_claim(view)[0].upper() + _claim(view)[1:]} names{_class(view)}, which does not exist, so no provisioner "
        "is asked to create its volume. Create the StorageClass or recreate the claim with one that exists "
        "(storageClassName cannot be changed on an existing claim). " + _WAITS
    ),
    "no_storage_class": lambda view: (
        f"{_claim(view)[0].upper() + _claim(view)[1:]} names no StorageClass and no StorageClass is marked default "
        "(storageclass.kubernetes.io/is-default-class), so the persistent volume controller can only bind it to "
        "an existing PersistentVolume, and none matches. EKS clusters created recently have no default class: "
        "mark one (a gp3 class of the EBS CSI driver) as default, and the claim gets it (Kubernetes 1.28+ assigns "
        "the default to claims without a class retroactively). " + _WAITS
    ),
    "capacity": lambda view: (
        f"EC2 could not create the volume for {_claim(view)}: no capacity for that volume type in the zone, or an "
        "account limit on volumes or IOPS. Another volume type, a smaller IOPS figure or a quota increase helps; "
        "retrying alone may."
    ),
    "invalid_parameter": lambda view: (
        f"EC2 refused the volume{_class(view)} asks for (InvalidParameterValue / InvalidZone): a type, size, "
        "IOPS or throughput EBS does not offer together, or a zone the volume type is not in. Correct the "
        "StorageClass parameters; claims made from it fail until then."
    ),
    "rescheduled": lambda view: (
        f"The scheduler chose a node for the pod and waited for {_claim(view)} to be provisioned there "
        "(WaitForFirstConsumer), but the provisioner gave up and released the node (running PreBind plugin "
        "\"VolumeBinding\": provisioning failed), so the pod went back to Pending. The claim's own "
        "ProvisioningFailed event says why; the scheduler retries and fails the same way until that is fixed."
    ),
    "waiting": lambda view: (
        f"{_claim(view)[0].upper() + _claim(view)[1:]} waits for"
        f"{' ' + view.get('provisioner') if view.get('provisioner') else ' its provisioner'} to create its volume. "
        "That is normal for a few seconds; for longer, the provisioner is not running (the CSI driver add-on is "
        "not installed) or is failing: its controller's log and the claim's ProvisioningFailed events say which."
    ),
}


def provisioning_failed(view: View) -> str:
    writer = _PROVISIONING.get(view.get("problem"))
    if writer is not None:
        return writer(view)
    return (f"The volume for {_claim(view)}{' (StorageClass ' + view.get('storageclass') + ')' if view.get('storageclass') else ''} "
            "could not be provisioned; the provisioner's own words are quoted below. " + _WAITS)


_CONDITIONS = {
    "AMIsReady": "no AMI: spec.amiSelectorTerms resolves nothing (an alias, id, name or tag no image matches, or an "
                 "owner that does not share it)",
    "SecurityGroupsReady": "no security group: spec.securityGroupSelectorTerms matches none (the cluster's node "
                           "security group is not tagged as the terms say)",
    "InstanceProfileReady": "no instance profile: the controller could not create one from spec.role (IAM "
                            "permissions, a role that does not exist) or the named spec.instanceProfile does not exist",
    "ValidationSucceeded": "validation failed: the controller's dry runs of ec2:CreateFleet, CreateLaunchTemplate and "
                           "RunInstances with this class were refused, or its tags or kubelet settings are invalid",
    "CapacityReservationsReady": "its capacity reservation selector could not be resolved",
    "NodeClassReady": "the NodePool's NodeClass is not Ready",
}


def nodeclass_not_ready(view: View) -> str:
    condition, reason, message = view.get("condition"), view.get("reason"), view.get("message")
    said = f"{condition}=False" + (f" ({reason})" if reason else "") + (f": {message}" if message else "")
    if reason == "UnsupportedAlias":
        cause = ("the AMI alias names a family this Kubernetes version no longer has: Amazon Linux 2 AMIs stop at "
                 "Kubernetes 1.32, so al2@latest resolves nothing on 1.33 and later (Karpenter v1.6+ says so with "
                 "UnsupportedAlias). Move the class to al2023@latest (or bottlerocket@latest) and to AL2023's "
                 "nodeadm user data")
    elif reason == "NodeClassNotFound":
        cause = ("the NodePool's spec.template.spec.nodeClassRef names an EC2NodeClass that does not exist (a typo, or "
                 "one deleted or not yet applied)")
    else:
        cause = _CONDITIONS.get(condition, "one of its conditions is False")
    return (f"The EC2NodeClass{' ' + view.get('nodeclass') if view.get('nodeclass') else ''} is not Ready ({said}): "
            f"{cause}. Karpenter returns no instance types for a NodeClass that is not Ready, so every NodePool "
            "that uses it is not Ready either (NodeClassReady=False) and is left out of scheduling: Karpenter "
            "launches nothing and often writes nothing on the pod, and only kube-scheduler's 'no node fits' "
            "remains. Fix the condition; the class becomes Ready on the controller's next reconcile.")


WRITERS: dict[str, Callable[[View], str]] = {
    "storage.provisioning_failed": provisioning_failed,
    "karpenter.nodeclass_not_ready": nodeclass_not_ready,
}

NEXT_STEPS: dict[str, str] = {
    "storage.provisioning_failed": "the claim's events (kubectl describe pvc), its StorageClass and the CSI "
                                   "controller's log (kubectl logs -n kube-system deploy/ebs-csi-controller -c "
                                   "csi-provisioner)",
    "karpenter.nodeclass_not_ready": "the EC2NodeClass's conditions (kubectl get ec2nodeclass NAME -o yaml) and the "
                                     "Karpenter controller log around its reconcile",
}
