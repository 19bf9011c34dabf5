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

# kubernetes-sigs/karpenter pkg/apis/v1/labels.go RestrictedLabelDomains / IsRestrictedLabel. v1.0-v1.8:
# kubernetes.io, k8s.io and karpenter.sh by suffix, minus LabelDomainExceptions. v1.9.0 (#2586, commit
# 37f5de7 "simplify RestrictedLabel filtering and relax cel restrictions") keeps only karpenter.sh, the
# domain itself or a subdomain, so node-role.kubernetes.io/... is a legal template label from v1.9.
# aws/karpenter-provider-aws pkg/apis/v1/labels.go init() adds its own group to RestrictedLabelDomains in
# every release; RestrictedLabels (kubernetes.io/hostname) stays.
RESTRICTED_DOMAINS_V1_9 = ("karpenter.sh", "karpenter.k8s.aws")
RESTRICTED_DOMAINS_V1_0 = ("kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws")
DOMAIN_EXCEPTIONS_V1_0 = ("kops.k8s.io", "node.kubernetes.io", "node-restriction.kubernetes.io")
RESTRICTED_LABELS = frozenset({HOSTNAME})
RESTRICTION_RELAXED_IN = (1, 9)

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


def version_tuple(version: str | None) -> tuple[int, int] | None:
    """"1.9.2" / "v1.10.0" -> (1, 9) / (1, 10); None when absent or not a release tag."""
    parts = str(version or "").removeprefix("v").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return None


def at_least(version: str | None, release: tuple[int, int]) -> bool:
    """Whether ``version`` is ``release`` or newer; an unknown version counts as the newest."""
    found = version_tuple(version)
    return found is None or found >= release


def is_restricted(key: str, *, karpenter_version: str | None = None) -> bool:
    """Whether a NodePool may not set this label itself (Karpenter's validation refuses it)."""
    # kubernetes-sigs/karpenter pkg/apis/v1/labels.go IsRestrictedLabel: well-known labels are always allowed
    if key in CORE_WELL_KNOWN or key in AWS_WELL_KNOWN or key in AUTO_WELL_KNOWN:
        return False
    if key in RESTRICTED_LABELS:
        return True
    dom = domain(key)
    if at_least(karpenter_version, RESTRICTION_RELAXED_IN):
        return any(dom == r or dom.endswith("." + r) for r in RESTRICTED_DOMAINS_V1_9)
    if any(dom.endswith(e) for e in DOMAIN_EXCEPTIONS_V1_0):  # strings.HasSuffix, as v1.0-v1.8 wrote it
        return False
    return any(dom.endswith(r) for r in RESTRICTED_DOMAINS_V1_0)


def nodeclass_label(nodepool: dict) -> tuple[str, str] | None:
    """The label naming the node's NodeClass, "<group>/<lowercase kind>" = name (karpenter.k8s.aws/ec2nodeclass,
    eks.amazonaws.com/nodeclass on EKS Auto Mode). kubernetes-sigs/karpenter pkg/controllers/provisioning/
    scheduling/nodeclaimtemplate.go NewNodeClaimTemplate sets it on every NodeClaim from v1.1.0, with
    pkg/apis/v1/labels.go NodeClassLabelKey; v1.0 set only karpenter.sh/nodepool."""
    ref = ((nodepool.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}
    if not ref.get("group") or not ref.get("kind") or not ref.get("name"):
        return None
    return f"{ref['group']}/{str(ref['kind']).lower()}", str(ref["name"])


NODECLASS_LABEL_SINCE = (1, 1)


def template_labels(nodepool: dict, *, karpenter_version: str | None = None) -> dict[str, str]:
    """Labels every node of the NodePool carries whatever its instance type: template labels,
    karpenter.sh/nodepool and (v1.1+) the NodeClass label."""
    template = (nodepool.get("spec") or {}).get("template") or {}
    labels = {str(k): str(v) for k, v in ((template.get("metadata") or {}).get("labels") or {}).items()}
    labels[NODEPOOL] = (nodepool.get("metadata") or {}).get("name", "")
    nodeclass = nodeclass_label(nodepool)
    if nodeclass is not None and at_least(karpenter_version, NODECLASS_LABEL_SINCE):
        labels[nodeclass[0]] = nodeclass[1]
    return labels


@dataclass(frozen=True)
class LabelHint:
    """What to tell a user whose pod requires a label no node of the NodePool will have."""

    text: str
    replacement: str | None = None  # a key that really exists on this NodePool's nodes
    value_map: dict | None = None  # value spellings for the replacement key


def hint_for(key: str, *, auto_mode: bool, nodepool: str, karpenter_version: str | None = None) -> LabelHint:
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
    if key.endswith(("/ec2nodeclass", "/nodeclass")) and not at_least(karpenter_version, NODECLASS_LABEL_SINCE):
        return LabelHint(f" Karpenter {karpenter_version} does not label nodes with {key} (it does from v1.1); select "
                         f"karpenter.sh/nodepool instead, or upgrade.")
    if is_restricted(key, karpenter_version=karpenter_version):
        since = "" if at_least(karpenter_version, RESTRICTION_RELAXED_IN) else (
            f" on Karpenter {karpenter_version} (from v1.9 only the karpenter.sh and karpenter.k8s.aws domains are)")
        return LabelHint(f" {key} is in a domain Karpenter reserves{since}, so a NodePool cannot set it either; drop "
                         f"it from the pod or use a custom label.")
    return LabelHint(" Add the label to the NodePool's spec.template.metadata.labels (not spec.template.spec), or "
                     "drop it from the pod.")
