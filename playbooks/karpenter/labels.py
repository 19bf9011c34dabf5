"""Which node labels Karpenter knows values for, which it renames, which it refuses, and which label a
pod meant when it names one that Karpenter's nodes never carry."""
from __future__ import annotations

from dataclasses import dataclass

from playbooks import linear

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
HOSTNAME = "kubernetes.io/hostname"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
NODEPOOL = "karpenter.sh/nodepool"
ZONE_ID = "topology.k8s.aws/zone-id"
OSS_PREFIX = "karpenter.k8s.aws/"
AUTO_PREFIX = "eks.amazonaws.com/"

CAPACITY_TYPES = ("on-demand", "spot", "reserved")  # kubernetes-sigs/karpenter pkg/apis/v1/labels.go

# kubernetes-sigs/karpenter pkg/apis/v1/labels.go: WellKnownLabels
CORE_WELL_KNOWN = frozenset({
    NODEPOOL, ZONE, REGION, INSTANCE_TYPE, ARCH, OS, CAPACITY_TYPE, "node.kubernetes.io/windows-build",
})

# aws/karpenter-provider-aws pkg/apis/v1/labels.go: the suffixes of the karpenter.k8s.aws/ labels its
# init() adds to WellKnownLabels (instance types carry values for them).
AWS_SUFFIXES = frozenset({
    "capacity-reservation-id", "capacity-reservation-type", "capacity-reservation-interruptible",
    "instance-hypervisor", "instance-encryption-in-transit-supported", "nitro-sandbox", "instance-category",
    "instance-capability-flex", "instance-family", "instance-generation", "instance-size", "instance-local-nvme",
    "instance-cpu", "instance-cpu-manufacturer", "instance-cpu-sustained-clock-speed-mhz", "instance-memory",
    "instance-ebs-bandwidth", "instance-network-bandwidth", "instance-gpu-name", "instance-gpu-manufacturer",
    "instance-gpu-count", "instance-gpu-memory", "instance-accelerator-name", "instance-accelerator-manufacturer",
    "instance-accelerator-count", "instance-tenancy", "placement-group-id", "placement-group-partition",
})
AWS_WELL_KNOWN = frozenset({OSS_PREFIX + s for s in AWS_SUFFIXES} | {ZONE_ID})

# EKS Auto Mode (docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html, "Supported labels"):
# the same instance labels under eks.amazonaws.com/, a narrower set than the open-source provider's.
AUTO_SUFFIXES = frozenset({
    "instance-hypervisor", "instance-encryption-in-transit-supported", "instance-category", "instance-generation",
    "instance-family", "instance-size", "instance-cpu", "instance-cpu-manufacturer", "instance-memory",
    "instance-ebs-bandwidth", "instance-network-bandwidth", "instance-gpu-name", "instance-gpu-manufacturer",
    "instance-gpu-count", "instance-gpu-memory", "instance-local-nvme",
})
AUTO_WELL_KNOWN = frozenset({AUTO_PREFIX + s for s in AUTO_SUFFIXES} | {AUTO_PREFIX + "compute-type", ZONE_ID})

# kubernetes-sigs/karpenter pkg/apis/v1/labels.go: NormalizedLabels. Pod requirements on the aliases
# are read as the GA keys (pkg/scheduling/requirement.go NewRequirementWithFlexibility).
NORMALIZED = {
    "failure-domain.beta.kubernetes.io/zone": ZONE,
    "failure-domain.beta.kubernetes.io/region": REGION,
    "beta.kubernetes.io/arch": ARCH,
    "beta.kubernetes.io/os": OS,
    "beta.kubernetes.io/instance-type": INSTANCE_TYPE,
}

# kubernetes-sigs/karpenter pkg/apis/v1/labels.go (v1.0-v1.14): RestrictedLabelDomains with
# LabelDomainExceptions, plus RestrictedLabels; aws/karpenter-provider-aws adds its own group.
RESTRICTED_DOMAINS = ("kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws")
DOMAIN_EXCEPTIONS = ("kops.k8s.io", "node.kubernetes.io", "node-restriction.kubernetes.io")
RESTRICTED_LABELS = frozenset({HOSTNAME})

# Labels EKS managed node groups put on their nodes; Karpenter never sets them.
MANAGED_NODE_GROUP = {
    "eks.amazonaws.com/nodegroup": NODEPOOL,
    "eks.amazonaws.com/capacityType": CAPACITY_TYPE,
    "eks.amazonaws.com/nodegroup-image": None,
    "eks.amazonaws.com/sourceLaunchTemplateId": None,
    "eks.amazonaws.com/sourceLaunchTemplateVersion": None,
}
# eks.amazonaws.com/capacityType values and their karpenter.sh/capacity-type spelling
MANAGED_CAPACITY_VALUES = {"ON_DEMAND": "on-demand", "SPOT": "spot", "CAPACITY_BLOCK": "reserved"}


# aws/karpenter-provider-aws pkg/providers/instancetype/types.go (v0.32-v1.x): instanceTypeScheme.
# computeRequirements sets instance-category to the letters before the first digit group and
# instance-generation to that group ("trn1.32xlarge": trn / 1, "p5.48xlarge": p / 5, "u-6tb1.metal":
# u / 1), and neither label when the name does not match.
_INSTANCE_TYPE_SCHEME = linear.compile(r"(^[a-z]+)(-[0-9]+tb)?([0-9]+).*\.")


def instance_category(instance_type: str) -> str | None:
    m = _INSTANCE_TYPE_SCHEME.match(instance_type)
    return m.group(1) if m else None


def instance_generation(instance_type: str) -> str | None:
    m = _INSTANCE_TYPE_SCHEME.match(instance_type)
    return m.group(3) if m else None


def kebab_value(ec2_name: str) -> str:
    """A GPU or accelerator name as the label value: types.go lowerKabobCase, lowercase with spaces
    as dashes ("A100" -> "a100", "L40S" -> "l40s", "Radeon Pro V520" -> "radeon-pro-v520")."""
    return ec2_name.lower().replace(" ", "-")


def normalize(key: str) -> str:
    return NORMALIZED.get(key, key)


def well_known(*, auto_mode: bool) -> frozenset[str]:
    """Keys instance types, zones and capacity types give values for on this kind of NodePool: a pod
    may require them even when the NodePool does not mention them (AllowUndefinedWellKnownLabels)."""
    # kubernetes-sigs/karpenter pkg/scheduling/requirements.go: Compatible(..., AllowUndefinedWellKnownLabels)
    return CORE_WELL_KNOWN | (AUTO_WELL_KNOWN if auto_mode else AWS_WELL_KNOWN)


def domain(key: str) -> str:
    return key.split("/", 1)[0] if "/" in key else ""


def is_restricted(key: str) -> bool:
    """Whether a NodePool may not set this label itself (Karpenter's validation refuses it)."""
    # kubernetes-sigs/karpenter pkg/apis/v1/labels.go IsRestrictedLabel (v1.0-v1.14)
    if key in CORE_WELL_KNOWN or key in AWS_WELL_KNOWN or key in AUTO_WELL_KNOWN:
        return False
    if key in RESTRICTED_LABELS:
        return True
    dom = domain(key)
    if any(dom == e or dom.endswith("." + e) for e in DOMAIN_EXCEPTIONS):
        return False
    return any(dom == r or dom.endswith("." + r) for r in RESTRICTED_DOMAINS)


def template_labels(nodepool: dict) -> dict[str, str]:
    """Labels every node of the NodePool carries whatever its instance type: template labels and
    karpenter.sh/nodepool."""
    template = (nodepool.get("spec") or {}).get("template") or {}
    labels = {str(k): str(v) for k, v in ((template.get("metadata") or {}).get("labels") or {}).items()}
    labels[NODEPOOL] = (nodepool.get("metadata") or {}).get("name", "")
    return labels


@dataclass(frozen=True)
class LabelHint:
    """What to tell a user whose pod requires a label no node of the NodePool will have."""

    text: str
    replacement: str | None = None  # a key that really exists on this NodePool's nodes
    value_map: dict | None = None  # value spellings for the replacement key


def hint_for(key: str, *, auto_mode: bool, nodepool: str) -> LabelHint:
    """A fix that names only labels that exist: the other prefix where that suffix really exists there,
    the Karpenter equivalent of a managed-node-group label, or plain advice."""
    if key in MANAGED_NODE_GROUP:
        other = MANAGED_NODE_GROUP[key]
        text = (f" {key} is a label of EKS managed node group nodes; Karpenter nodes never carry it, so NodePool "
                f"{nodepool} cannot satisfy it.")
        if other:
            text += f" The Karpenter label for the same thing is {other}."
            return LabelHint(text, other, MANAGED_CAPACITY_VALUES if key.endswith("capacityType") else None)
        return LabelHint(text + " Drop it, or select a label that Karpenter nodes carry.")
    suffix = key.split("/", 1)[1] if "/" in key else key
    if auto_mode and key.startswith(OSS_PREFIX):
        if suffix in AUTO_SUFFIXES:
            other = AUTO_PREFIX + suffix
            return LabelHint(f" NodePool {nodepool} is an EKS Auto Mode NodePool: its nodes carry {other}, never {key} "
                             f"(open-source Karpenter's prefix). Use {other}.", other)
        return LabelHint(f" NodePool {nodepool} is an EKS Auto Mode NodePool, which has no equivalent of {key} "
                         f"(open-source Karpenter only). Drop it from the pod.")
    if not auto_mode and key.startswith(AUTO_PREFIX):
        if suffix in AWS_SUFFIXES:
            other = OSS_PREFIX + suffix
            return LabelHint(f" NodePool {nodepool} runs on open-source Karpenter, whose nodes carry {other}, not {key}. "
                             f"Use {other}.", other)
        return LabelHint(f" {key} exists only on EKS Auto Mode nodes; NodePool {nodepool} runs on open-source "
                         f"Karpenter. Drop it from the pod.")
    if is_restricted(key):
        return LabelHint(f" {key} is in a domain Karpenter reserves, so a NodePool cannot set it either; drop it "
                         f"from the pod or use a custom label.")
    return LabelHint(" Add the label to the NodePool's spec.template.metadata.labels (not spec.template.spec), or "
                     "drop it from the pod.")
