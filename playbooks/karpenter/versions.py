"""Karpenter objects served at older API versions, converted to the ``karpenter.sh/v1`` shape the
analyzers read.

Clusters run Karpenter releases from v0.2x (``karpenter.sh/v1alpha5`` Provisioner / Machine with
``karpenter.k8s.aws/v1alpha1`` AWSNodeTemplate) through v0.32-v0.37 (``karpenter.sh/v1beta1`` NodePool /
NodeClaim, ``karpenter.k8s.aws/v1beta1`` EC2NodeClass) to v1.x. Reading what the cluster serves and
converting it here lets one model judge all of them; nothing in the conversion invents a field the
source does not state. Pure functions over plain dicts in their REST shape (camelCase).
"""
from __future__ import annotations

import copy

V1 = "karpenter.sh/v1"
V1_NODECLASS = "karpenter.k8s.aws/v1"
DEFAULT_NODECLASS_GROUP = "karpenter.k8s.aws"
DEFAULT_NODECLASS_KIND = "EC2NodeClass"

# The label that names a node's NodePool, and its pre-v1beta1 name.
NODEPOOL_LABEL = "karpenter.sh/nodepool"
PROVISIONER_LABEL = "karpenter.sh/provisioner-name"

# kubernetes-sigs/karpenter pkg/apis/v1alpha5/machine_status.go: the Machine's conditions before they
# became the NodeClaim's Launched / Registered / Initialized.
_MACHINE_CONDITIONS = {
    "MachineLaunched": "Launched",
    "MachineRegistered": "Registered",
    "MachineInitialized": "Initialized",
    "MachineDrifted": "Drifted",
    "MachineEmpty": "Empty",
    "MachineExpired": "Expired",
}


def _meta(obj: dict) -> dict:
    meta = copy.deepcopy(obj.get("metadata") or {})
    labels = meta.get("labels") or {}
    if PROVISIONER_LABEL in labels and NODEPOOL_LABEL not in labels:
        labels[NODEPOOL_LABEL] = labels[PROVISIONER_LABEL]
        meta["labels"] = labels
    return meta


def _class_ref(ref: dict | None) -> dict:
    """v1beta1 / v1alpha5 ``{apiVersion, kind, name}`` to v1 ``{group, kind, name}``.

    kubernetes-sigs/karpenter pkg/apis/v1/nodepool_conversion.go (NodeClaimTemplate.convertFrom): the
    group is apiVersion's group, and an empty apiVersion or kind means the provider's default NodeClass
    (EC2NodeClass in karpenter.k8s.aws on AWS).
    """
    ref = ref or {}
    api_version = str(ref.get("apiVersion") or "")
    return {
        "group": api_version.split("/")[0] if api_version else DEFAULT_NODECLASS_GROUP,
        "kind": ref.get("kind") or DEFAULT_NODECLASS_KIND,
        "name": ref.get("name", ""),
    }


def nodepool_from_v1beta1(obj: dict) -> dict:
    """A ``karpenter.sh/v1beta1`` NodePool in the v1 shape.

    kubernetes-sigs/karpenter pkg/apis/v1/nodepool_conversion.go (NodePoolSpec.convertFrom,
    Disruption.convertFrom): ``disruption.expireAfter`` moves to ``template.spec.expireAfter``;
    ``WhenUnderutilized`` becomes ``WhenEmptyOrUnderutilized`` with ``consolidateAfter: 0s``;
    ``nodeClassRef.apiVersion`` becomes ``nodeClassRef.group``; weight, limits, taints, startupTaints,
    requirements (with minValues) and the template's labels carry over unchanged.
    """
    spec = copy.deepcopy(obj.get("spec") or {})
    template = spec.get("template") or {}
    tspec = template.get("spec") or {}
    disruption = dict(spec.get("disruption") or {})
    expire = disruption.pop("expireAfter", None)
    if expire is not None and "expireAfter" not in tspec:
        tspec["expireAfter"] = expire
    if disruption.get("consolidationPolicy") == "WhenUnderutilized":
        disruption["consolidationPolicy"] = "WhenEmptyOrUnderutilized"
        disruption["consolidateAfter"] = "0s"
    tspec["nodeClassRef"] = _class_ref(tspec.get("nodeClassRef"))
    # The v1beta1 kubelet block moved to the EC2NodeClass in v1; keep it where the analyzers of
    # kube-reserved can still find it on the NodePool.
    template["spec"] = tspec
    spec["template"] = template
    spec["disruption"] = disruption
    return {"apiVersion": V1, "kind": "NodePool", "metadata": _meta(obj), "spec": spec,
            "status": copy.deepcopy(obj.get("status") or {})}


def nodeclaim_from_v1beta1(obj: dict) -> dict:
    """A ``karpenter.sh/v1beta1`` NodeClaim in the v1 shape.

    kubernetes-sigs/karpenter pkg/apis/v1/nodeclaim_conversion.go: the same fields, with
    ``nodeClassRef.apiVersion`` read as its group; status conditions keep their names.
    """
    spec = copy.deepcopy(obj.get("spec") or {})
    spec["nodeClassRef"] = _class_ref(spec.get("nodeClassRef"))
    return {"apiVersion": V1, "kind": "NodeClaim", "metadata": _meta(obj), "spec": spec,
            "status": copy.deepcopy(obj.get("status") or {})}


def _seconds(value: object) -> str | None:
    try:
        return f"{int(value)}s" if value is not None else None  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def nodepool_from_provisioner(obj: dict) -> dict:
    """A ``karpenter.sh/v1alpha5`` Provisioner as a v1 NodePool of the same name.

    kubernetes-sigs/karpenter pkg/apis/v1alpha5/provisioner.go (ProvisionerSpec) and the upstream
    v1beta1 migration guide: labels / annotations become the template's metadata; taints, startupTaints
    and requirements the template's spec; ``limits.resources`` becomes ``limits``; ``providerRef`` the
    ``nodeClassRef`` (an inline ``provider`` block has no NodeClass to point to); ``ttlSecondsAfterEmpty``
    is ``WhenEmpty`` with that ``consolidateAfter``, ``consolidation.enabled`` is consolidation when
    underutilized, and ``ttlSecondsUntilExpired`` is ``expireAfter``.
    """
    src = obj.get("spec") or {}
    tmeta = {k: copy.deepcopy(src[k]) for k in ("labels", "annotations") if src.get(k)}
    # kubernetes-sigs/karpenter pkg/apis/v1alpha5/labels.go: every node a Provisioner launches carries
    # karpenter.sh/provisioner-name=<name> (as v1 nodes carry karpenter.sh/nodepool), so pods of that era
    # select it; the converted template states it so that such a selector matches.
    name = (obj.get("metadata") or {}).get("name", "")
    tmeta["labels"] = {**(tmeta.get("labels") or {}), PROVISIONER_LABEL: name}
    tspec: dict = {k: copy.deepcopy(src[k]) for k in ("taints", "startupTaints", "requirements") if src.get(k)}
    tspec.setdefault("requirements", [])
    if src.get("providerRef"):
        tspec["nodeClassRef"] = _class_ref(
            {"apiVersion": src["providerRef"].get("apiVersion") or "karpenter.k8s.aws/v1alpha1",
             "kind": src["providerRef"].get("kind") or "AWSNodeTemplate", "name": src["providerRef"].get("name")})
    expire = _seconds(src.get("ttlSecondsUntilExpired"))
    tspec["expireAfter"] = expire or "Never"
    disruption: dict = {}
    if (src.get("consolidation") or {}).get("enabled"):
        disruption = {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s"}
    elif src.get("ttlSecondsAfterEmpty") is not None:
        disruption = {"consolidationPolicy": "WhenEmpty", "consolidateAfter": _seconds(src["ttlSecondsAfterEmpty"])}
    spec: dict = {"template": {"metadata": tmeta, "spec": tspec}, "disruption": disruption}
    limits = (src.get("limits") or {}).get("resources")
    if limits:
        spec["limits"] = copy.deepcopy(limits)
    if src.get("weight") is not None:
        spec["weight"] = src["weight"]
    return {"apiVersion": V1, "kind": "NodePool", "metadata": _meta(obj), "spec": spec,
            "status": copy.deepcopy(obj.get("status") or {})}


def nodeclaim_from_machine(obj: dict) -> dict:
    """A ``karpenter.sh/v1alpha5`` Machine as a v1 NodeClaim.

    kubernetes-sigs/karpenter pkg/apis/v1alpha5/machine.go: ``machineTemplateRef`` is the NodeClass
    reference; conditions ``MachineLaunched`` / ``MachineRegistered`` / ``MachineInitialized`` are the
    later ``Launched`` / ``Registered`` / ``Initialized``; the ``karpenter.sh/provisioner-name`` label
    names the NodePool.
    """
    spec = copy.deepcopy(obj.get("spec") or {})
    ref = spec.pop("machineTemplateRef", None)
    spec["nodeClassRef"] = _class_ref(
        {"apiVersion": (ref or {}).get("apiVersion") or "karpenter.k8s.aws/v1alpha1",
         "kind": (ref or {}).get("kind") or "AWSNodeTemplate", "name": (ref or {}).get("name", "")})
    status = copy.deepcopy(obj.get("status") or {})
    for condition in status.get("conditions") or []:
        condition["type"] = _MACHINE_CONDITIONS.get(condition.get("type"), condition.get("type"))
    return {"apiVersion": V1, "kind": "NodeClaim", "metadata": _meta(obj), "spec": spec, "status": status}


def ec2nodeclass_from_v1beta1(obj: dict) -> dict:
    """A ``karpenter.k8s.aws/v1beta1`` EC2NodeClass in the v1 shape.

    aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass_conversion.go: selector terms, role /
    instanceProfile, tags and block devices keep their names; ``amiFamily`` without ``amiSelectorTerms``
    became an ``alias`` term in v1. Status (subnets with zones, conditions) keeps its shape.
    """
    spec = copy.deepcopy(obj.get("spec") or {})
    family = spec.get("amiFamily")
    if family and not spec.get("amiSelectorTerms") and family.lower() != "custom":
        spec["amiSelectorTerms"] = [{"alias": f"{family.lower()}@latest"}]
    return {"apiVersion": V1_NODECLASS, "kind": "EC2NodeClass", "metadata": _meta(obj), "spec": spec,
            "status": copy.deepcopy(obj.get("status") or {})}


def _selector_terms(selector: dict | None) -> list[dict]:
    """v1alpha1 selector maps (``{"karpenter.sh/discovery": "x"}``, ``{"aws-ids": "subnet-1,subnet-2"}``)
    as v1 selector terms.

    aws/karpenter-provider-aws pkg/apis/v1alpha1/awsnodetemplate.go: ``aws-ids`` lists ids separated by
    commas; every other key is a tag filter, all of which must match.
    """
    selector = dict(selector or {})
    terms = [{"id": i.strip()} for i in str(selector.pop("aws-ids", "")).split(",") if i.strip()]
    if selector:
        terms.append({"tags": selector})
    return terms


def ec2nodeclass_from_awsnodetemplate(obj: dict) -> dict:
    """A ``karpenter.k8s.aws/v1alpha1`` AWSNodeTemplate as a v1 EC2NodeClass of the same name."""
    src = obj.get("spec") or {}
    spec: dict = {
        "subnetSelectorTerms": _selector_terms(src.get("subnetSelector")),
        "securityGroupSelectorTerms": _selector_terms(src.get("securityGroupSelector")),
    }
    if src.get("amiSelector"):
        spec["amiSelectorTerms"] = _selector_terms(src["amiSelector"])
    elif src.get("amiFamily") and str(src["amiFamily"]).lower() != "custom":
        spec["amiSelectorTerms"] = [{"alias": f"{str(src['amiFamily']).lower()}@latest"}]
    for key in ("amiFamily", "instanceProfile", "tags", "blockDeviceMappings", "metadataOptions", "userData"):
        if src.get(key) is not None:
            spec[key] = copy.deepcopy(src[key])
    return {"apiVersion": V1_NODECLASS, "kind": "EC2NodeClass", "metadata": _meta(obj), "spec": spec,
            "status": copy.deepcopy(obj.get("status") or {})}


# (group, version) -> (plural read there, converter to the v1 shape)
NODEPOOLS = {
    "v1": ("nodepools", lambda o: o),
    "v1beta1": ("nodepools", nodepool_from_v1beta1),
    "v1alpha5": ("provisioners", nodepool_from_provisioner),
}
NODECLAIMS = {
    "v1": ("nodeclaims", lambda o: o),
    "v1beta1": ("nodeclaims", nodeclaim_from_v1beta1),
    "v1alpha5": ("machines", nodeclaim_from_machine),
}
EC2NODECLASSES = {
    "v1": ("ec2nodeclasses", lambda o: o),
    "v1beta1": ("ec2nodeclasses", ec2nodeclass_from_v1beta1),
    "v1alpha1": ("awsnodetemplates", ec2nodeclass_from_awsnodetemplate),
}
# Newest first: a cluster mid-upgrade serves several, and the newest is the one Karpenter stores.
KARPENTER_VERSIONS = ("v1", "v1beta1", "v1alpha5")
NODECLASS_VERSIONS = ("v1", "v1beta1", "v1alpha1")


def pick(served: list[str] | tuple[str, ...], *, known: tuple[str, ...]) -> str | None:
    """The newest version we can convert among those the cluster serves; None when none is."""
    return next((v for v in known if v in served), None)


def era(group: str, version: str) -> str:
    """Which Karpenter releases serve ``group/version``, for a gap that says why a version was read."""
    if version == "v1":
        return "Karpenter v1.0 or later"
    if version == "v1beta1":
        return "Karpenter v0.32 to v0.37, before v1.0"
    return "Karpenter before v0.32"
