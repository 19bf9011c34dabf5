"""PersistentVolumeClaims that cannot be provisioned or bound: the claim's own events and the scheduler's
word on the pod that waits for it.

=============================  ===========================  ====================================================
rule                           code                         fields
=============================  ===========================  ====================================================
volume.provisioning_failed     storage.provisioning_failed  storageclass, pvc, problem, operation
volume.prebind_failed          storage.provisioning_failed  pvc, problem
volume.no_storage_class        storage.provisioning_failed  problem (no_storage_class)
volume.waiting_for_provisioner storage.provisioning_failed  provisioner, problem (waiting) — info
=============================  ===========================  ====================================================

``problem``: ``unauthorized`` (the CSI controller's IAM role may not call EC2: ``UnauthorizedOperation``,
``AccessDenied``, ``not authorized to perform``), ``kms`` (the volume's KMS key refuses the role),
``missing_storage_class`` (the StorageClass the claim names does not exist), ``no_storage_class`` (the claim
names none and the cluster has no default), ``capacity`` (EC2 has no capacity for the volume type in the
zone), ``invalid_parameter`` (the StorageClass asks for what EBS does not offer), ``rescheduled`` (the
provisioner gave up on the node the scheduler chose), ``waiting`` (provisioning is under way: info).

Sources:
- kubernetes/kubernetes pkg/controller/volume/persistentvolume/pv_controller.go: ``syncUnboundClaim``
  records Normal ``FailedBinding`` ``no persistent volumes available for this claim and no storage class is
  set``; ``provisionClaim`` records Normal ``ExternalProvisioning`` ``waiting for a volume to be created,
  either by external provisioner %q or manually created by system administrator``; ``Warning
  ProvisioningFailed`` ``storageclass.storage.k8s.io %q not found``.
- kubernetes-csi/external-provisioner pkg/controller (sig-storage-lib-external-provisioner
  controller.go ``provisionClaimOperation``): Warning ``ProvisioningFailed`` ``failed to provision volume
  with StorageClass %q: %v``; on a final error for a WaitForFirstConsumer claim it removes the
  ``volume.kubernetes.io/selected-node`` annotation so the scheduler tries again.
- pkg/scheduler/framework/plugins/volumebinding/binder.go ``checkBindings``: ``provisioning failed for PVC
  %q`` when that annotation is gone; volume_binding.go ``PreBind`` wraps it ``binding volumes: %w`` and
  schedule_one.go ``running PreBind plugin %q: %w``: the pod's FailedScheduling.
- kubernetes-sigs/aws-ebs-csi-driver pkg/cloud/cloud.go ``CreateDisk``: ``could not create volume in EC2:
  %w`` around the EC2 error (``UnauthorizedOperation: You are not authorized to perform this operation.``,
  kubernetes-sigs/aws-ebs-csi-driver#963, #1449), pkg/driver/controller.go ``Could not create volume %q:
  %v`` (codes.Internal).
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict

_NAME = r"[a-z0-9][-a-z0-9.]{0,252}"

# What the provisioner or EC2 said, most specific first.
_PROBLEMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("kms", ("KMS key", "kms:", "KMS.", "KmsKey", "Client.InvalidKMSKey")),
    ("unauthorized", ("UnauthorizedOperation", "AccessDenied", "not authorized to perform", "is not authorized",
                      "WebIdentityErr", "NoCredentialProviders", "no EC2 IMDS role found")),
    ("missing_storage_class", ('storageclass.storage.k8s.io "', 'storageclass.storage.k8s.io \\"')),
    ("capacity", ("InsufficientVolumeCapacity", "VolumeLimitExceeded", "MaxIOPSLimitExceeded")),
    ("invalid_parameter", ("InvalidParameterValue", "InvalidParameterCombination", "InvalidZone",
                           "invalid parameter", "invalid argument")),
)


def problem_of(text: str) -> str:
    return next((name for name, markers in _PROBLEMS if any(m in text for m in markers)), "")


def _provisioning(fields: dict[str, str], text: str) -> Verdict:
    problem = problem_of(text)
    title = {
        "unauthorized": "The CSI driver may not create the volume[ for StorageClass {storageclass}]: EC2 says "
                        "UnauthorizedOperation",
        "kms": "The volume's KMS key refuses the CSI driver[ (StorageClass {storageclass})]",
        "missing_storage_class": "StorageClass[ {storageclass}] does not exist: the claim cannot be provisioned",
        "capacity": "EC2 has no capacity for the volume[ of StorageClass {storageclass}]",
        "invalid_parameter": "EC2 refuses the volume StorageClass[ {storageclass}] asks for",
    }.get(problem)
    return Verdict(title=title, fields={"problem": problem} if problem else {})


RULES: tuple[Rule, ...] = (
    Rule(
        name="volume.provisioning_failed",
        code="storage.provisioning_failed",
        severity="error",
        confidence="high",
        title="The volume[ of StorageClass {storageclass}] could not be provisioned",
        keywords=("failed to provision volume with StorageClass", "Failed to provision volume with StorageClass",
                  "could not create volume in EC2"),
        extract=(
            linear.compile(rf"[Ff]ailed to provision volume with StorageClass \\?\"(?P<storageclass>{_NAME})\\?\""),
            linear.compile(rf"Could not create volume \\?\"(?P<volume>pvc-[-a-z0-9]{{1,60}})\\?\""),
            linear.compile(r"(?P<operation>CreateVolume|CreateTags|DescribeAvailabilityZones)\b"),
        ),
        refine=_provisioning,
        fields_doc="storageclass, volume, operation, problem (unauthorized, kms, missing_storage_class, capacity, "
                   "invalid_parameter)",
        example='Warning  ProvisioningFailed  2m (x9 over 14m)  ebs.csi.aws.com_ebs-csi-controller-6c8b7f5d9c-x2kqz_'
                '0a1b2c3d  failed to provision volume with StorageClass "gp3-encrypted": rpc error: code = Internal '
                'desc = Could not create volume "pvc-3f1c9a2e-77d4-4b8e-9a51-2f0c6d1e8b40": could not create volume '
                'in EC2: UnauthorizedOperation: You are not authorized to perform this operation.',
    ),
    Rule(
        name="volume.prebind_failed",
        code="storage.provisioning_failed",
        severity="error",
        confidence="high",
        title="The scheduler placed the pod but its volume[ {pvc}] was not provisioned",
        keywords=("provisioning failed for PVC", 'running PreBind plugin "VolumeBinding"',
                  'running PreBind plugin \\"VolumeBinding\\"'),
        extract=(linear.compile(rf"provisioning failed for PVC \\?\"(?P<pvc>{_NAME})\\?\""),),
        refine=lambda f, t: Verdict(fields={"problem": "rescheduled"} if "provisioning failed" in t else {}),
        fields_doc="pvc, problem (rescheduled)",
        example='Warning  FailedScheduling  40s  default-scheduler  running PreBind plugin "VolumeBinding": binding '
                'volumes: provisioning failed for PVC "llama-ckpt"',
    ),
    Rule(
        name="volume.no_storage_class",
        code="storage.provisioning_failed",
        severity="error",
        confidence="high",
        title="The claim names no StorageClass and the cluster has no default: nothing provisions it",
        keywords=("no storage class is set",),
        refine=lambda f, t: Verdict(fields={"problem": "no_storage_class"}),
        fields_doc="problem (no_storage_class)",
        example="Normal  FailedBinding  16s (x42 over 10m)  persistentvolume-controller  no persistent volumes "
                "available for this claim and no storage class is set",
    ),
    Rule(
        name="volume.waiting_for_provisioner",
        code="storage.provisioning_failed",
        severity="info",
        confidence="medium",
        title="The claim waits for provisioner[ {provisioner}] to create its volume",
        keywords=("waiting for a volume to be created",),
        extract=(linear.compile(r"external provisioner \\?\"(?P<provisioner>[A-Za-z0-9][-A-Za-z0-9._/]{0,252})\\?\""),),
        refine=lambda f, t: Verdict(fields={"problem": "waiting"}),
        fields_doc="provisioner, problem (waiting)",
        example='Normal  ExternalProvisioning  3s (x26 over 6m)  persistentvolume-controller  waiting for a volume '
                'to be created, either by external provisioner "ebs.csi.aws.com" or manually created by system '
                'administrator',
    ),
)
