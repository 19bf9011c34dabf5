"""Findings for the blockers playbooks/karpenter/evaluate.py finds: one wording, evidence and fix per kind
of blocker, each naming what Karpenter itself would answer."""
from __future__ import annotations

import copy

from playbooks.analyzers import evidence as ev
from playbooks.analyzers.fixes import owner_patch
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.karpenter import labels as lbl
from playbooks.karpenter import offerings as off
from playbooks.karpenter import resources as res
from playbooks.karpenter.evaluate import Blocker, Verdict
from playbooks.karpenter.limits import raised_limits
from playbooks.karpenter.nodeconfig import DEFAULT as DEFAULT_NODE, NodeConfig
from playbooks.karpenter.requirements import is_auto_mode, nodepool_requirements
from playbooks.model import Evidence, Finding

GPU, EFA = res.GPU, res.EFA


def finding_for(pod: PodFacts, nodepool: dict, blocker: Blocker, *, verdict: Verdict, facts: Facts,
             quoted: list[Evidence]) -> Finding:
    code, title, detail, evidence, fix = _WORDING[blocker.kind](pod, nodepool, blocker, facts)
    terms = blocker.data.get("terms", 1)
    if terms > 1:
        detail += (f" The pod has {terms} required nodeSelectorTerms; Karpenter tries each in turn and none of "
                   f"them can be met (shown: term {blocker.data['term'] + 1}).")
    # the embedded catalogue may lack a type EC2 would list: what it does not hold is not proof of absence
    partial = facts.ec2.source != "ec2" and blocker.kind in ("no_types", "type_requirements")
    confident = (verdict.verified and not partial) or blocker.kind in ("taint", "nodeclass", "label", "limit")
    return Finding(code=code, severity="error", confidence="high" if confident else "medium", title=title,
                   detail=detail, evidence=evidence + quoted, fix=fix, labels=_labels(nodepool, blocker))


def _labels(nodepool: dict, blocker: Blocker) -> dict[str, str]:
    """The blocker as structured fields (Finding.labels): the limit that is used up, or the one offering
    that is missing; none where the blocker names several offerings."""
    name = nodepool["metadata"]["name"]
    if blocker.kind == "limit":
        block = blocker.data["block"]
        return {"nodepool": name, "resource_type": block.resource, "used": res.show(block.resource, block.used),
                "limit": res.show(block.resource, block.limit)}
    if blocker.kind == "offering":
        offers = blocker.data["offerings"]
        types, zones, capacity = sorted(blocker.data["types"]), sorted(offers.zones or ()), sorted(offers.capacity_types)
        if len(types) == len(zones) == len(capacity) == 1:
            return {"nodepool": name, "instance_type": types[0], "zone": zones[0], "capacity_type": capacity[0]}
    return {}


def _np_field(nodepool: dict, path: str, value) -> Evidence:
    return ev.field(f"nodepool/{nodepool['metadata']['name']}", path, value)


def _np_requirements(nodepool: dict) -> Evidence:
    return _np_field(nodepool, "spec.template.spec.requirements",
                     ((nodepool.get("spec") or {}).get("template") or {}).get("spec", {}).get("requirements") or [])


def list_names(names) -> str:
    names = sorted(names)
    return ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")


def pod_selector_evidence(pod: PodFacts) -> Evidence:
    spec = pod.pod.get("spec") or {}
    if spec.get("nodeSelector"):
        return ev.field(pod.ref, "spec.nodeSelector", spec["nodeSelector"])
    return ev.field(pod.ref, "spec.affinity.nodeAffinity", (spec.get("affinity") or {}).get("nodeAffinity"))


# -- taints and the NodeClass --------------------------------------------------------------------------

def _taint(pod, nodepool, blocker, facts):
    name = nodepool["metadata"]["name"]
    missing = blocker.data["taints"]
    tolerations = (pod.pod.get("spec") or {}).get("tolerations") or []
    taint = missing[0]
    shown = f"{taint['key']}{'=' + str(taint['value']) if taint.get('value') else ''}:{taint['effect']}"
    added = [{"key": t["key"], "operator": "Exists", "effect": t["effect"]} for t in missing]
    fix = render_fix("toleration.yaml.j2", **owner_patch(pod, {"tolerations": tolerations + added}), taint=shown)
    detail = (f"Every node NodePool {name} creates carries the taint {shown}; the pod has no matching toleration, so "
              f"Karpenter will not launch a node for it there ('did not tolerate taint') and the scheduler reports "
              f"'had untolerated taint'. Add the toleration to the pod (or its job's pod template).")
    return ("scheduling.untolerated_taint", f"{pod.name} does not tolerate taint {shown} of NodePool {name}", detail,
            [_np_field(nodepool, "spec.template.spec.taints", blocker.data["all"]),
             ev.field(pod.ref, "spec.tolerations", tolerations)], fix)


def _nodeclass(pod, nodepool, blocker, facts):
    name = nodepool["metadata"]["name"]
    key, cond = blocker.data["nodeclass"], blocker.data["condition"]
    group, _, nc_name = key.partition("/")
    kind, resource = ("NodeClass", "nodeclasses.eks.amazonaws.com") if group == "eks.amazonaws.com" else (
        "EC2NodeClass", "ec2nodeclass")
    said = f"{cond.condition}=False" + (f" ({cond.reason})" if cond.reason else "") + (f": {cond.message}" if cond.message else "")
    detail = (f"NodePool {name} uses {kind} {nc_name}, which is not Ready ({said}). Karpenter gets no instance types "
              f"from a NodeClass that is not Ready, so it launches nothing for this NodePool.")
    # the codes playbooks/signatures/karpenter_nodeclass.py gives the same conditions, so the two agree
    code = "karpenter.subnet_problem" if cond.condition == "SubnetsReady" else "karpenter.nodeclass_not_ready"
    fix = render_fix("nodeclass_not_ready.sh.j2", kind=kind, name=nc_name, resource=resource,
                     condition=cond.condition, reason=cond.reason)
    conditions = ((facts.nodeclasses.get(key) or {}).get("status") or {}).get("conditions") or []
    return (code, f"{kind} {nc_name} of NodePool {name} is not Ready: {cond.message or cond.reason or cond.condition}",
            detail, [ev.field(f"{kind.lower()}/{nc_name}", "status.conditions",
                              [c for c in conditions if c.get("status") == "False"])], fix)


# -- labels and requirements ---------------------------------------------------------------------------

def _label(pod, nodepool, blocker, facts):
    name = nodepool["metadata"]["name"]
    bad = blocker.data["incompatible"]
    auto = is_auto_mode(nodepool)
    if bad.undefined:
        hint = lbl.hint_for(bad.key, auto_mode=auto, nodepool=name, karpenter_version=facts.karpenter.version)
        detail = f"Karpenter answers 'label \"{bad.key}\" does not have known values' for NodePool {name}.{hint.text}"
        np_ev = _np_field(nodepool, "spec.template", {
            "labels": ((nodepool["spec"]["template"].get("metadata") or {}).get("labels") or {}),
            "requirementKeys": sorted(r["key"] for r in nodepool["spec"]["template"].get("spec", {}).get("requirements") or [])})
        title = f"{pod.name} selects label {bad.key}, which no node of NodePool {name} will have"
        fix = _selector_fix(pod, nodepool, bad.key, replacement=hint.replacement, value_map=hint.value_map)
    else:
        allowed = bad.existing.describe() if bad.existing else "its requirements"
        detail = (f"Karpenter rejects NodePool {name} with \"incompatible requirements, key {bad.key}\": the pod's "
                  f"{bad.incoming.describe()} and the NodePool's {allowed} have no value in common.")
        np_ev = _np_requirements(nodepool)
        title = f"{pod.name} requires {bad.incoming.describe()}, but NodePool {name} only allows {allowed}"
        fix = _selector_fix(pod, nodepool, bad.key)
    return "scheduling.node_selector_mismatch", title, detail, [pod_selector_evidence(pod), np_ev], fix


def _type_requirements(pod, nodepool, blocker, facts):
    name = nodepool["metadata"]["name"]
    term = blocker.data["requirements"]
    wanted = [r for r in term if r.key != lbl.ZONE and (r.key in lbl.well_known(auto_mode=is_auto_mode(nodepool)))]
    shown = "; ".join(r.describe() for r in wanted) or "its requirements"
    candidates = blocker.data["candidates"]
    detail = (f"NodePool {name} allows {list_names(candidates)}; none of them meets the pod's {shown}. Karpenter answers "
              f"'incompatible requirements' / 'no instance type met all requirements'. Either select an allowed type "
              f"or add the type to the NodePool.")
    key = wanted[0].key if wanted else lbl.INSTANCE_TYPE
    fix = _selector_fix(pod, nodepool, key)
    evidence = [pod_selector_evidence(pod), _np_requirements(nodepool), _ec2_evidence(candidates.values(), facts)]
    ids = off.subnet_zone_ids(off.nodeclass_of(nodepool, facts.nodeclasses)[1]) if lbl.ZONE_ID in term else None
    if ids:  # zone-id values come from the NodeClass subnets (offerings.type_zone_ids)
        shown_ids = ", ".join(f"{z}={i}" for z, i in sorted(ids.items()))
        detail += (f" A node's {lbl.ZONE_ID} is the zone id of a subnet of its EC2NodeClass ({shown_ids}): require "
                   f"one of those, or add a subnet in the zone id the pod needs to the EC2NodeClass.")
        evidence.append(Evidence(source="ec2nodeclass status.subnets", text=f"subnet zone ids: {shown_ids}"))
    return ("scheduling.node_selector_mismatch", f"{pod.name} requires {shown}, which NodePool {name} does not allow",
            detail, evidence, fix)


def _selector_fix(pod: PodFacts, nodepool: dict, key: str, *, replacement: str | None = None,
                  value_map: dict | None = None):
    """A merge patch of the pod's nodeSelector: the offending key (as the pod spells it, aliases included)
    removed, replaced by a key that exists, or set to a value the NodePool allows."""
    selector = dict((pod.pod.get("spec") or {}).get("nodeSelector") or {})
    spelled = next((k for k in selector if lbl.normalize(k) == key), key)
    patch: dict = {spelled: None}
    if spelled in selector:
        value = str(selector[spelled])
        if replacement:
            patch[replacement] = (value_map or {}).get(value, value)
        else:
            allowed = _allowed_values(nodepool, key)
            if allowed:
                patch[key] = allowed[0]
    return render_fix("node_selector.yaml.j2", **owner_patch(pod, {"nodeSelector": patch}),
                      nodepool=nodepool["metadata"]["name"])


def _allowed_values(nodepool: dict, key: str) -> list[str]:
    req = nodepool_requirements(nodepool).by_key.get(key)
    return sorted(req.values) if req is not None and req.operator == "In" else []


# -- instance types and resources ----------------------------------------------------------------------

def _ec2_evidence(infos, facts: Facts) -> Evidence:
    parts = []
    for i in sorted(infos, key=lambda i: i.name)[:8]:
        alloc = res.allocatable(i)
        text = f"{i.name}: {i.vcpus} vCPU, {i.memory_mib // 1024} GiB, {i.gpu_count}x {i.gpu_name or 'no GPU'}"
        text += f" {round((i.gpu_memory_mib or 0) / 1024)} GiB" if i.gpu_count else ""
        text += f", EFA x{i.max_efa_interfaces}" if i.max_efa_interfaces else ", no EFA"
        text += f" (allocatable cpu {res.show('cpu', alloc['cpu'])}, memory {res.show('memory', alloc['memory'])})"
        parts.append(text)
    source = "ec2 DescribeInstanceTypes" if facts.ec2.source == "ec2" else facts.ec2.source
    return Evidence(source=source, text="; ".join(parts))


def _no_types(pod, nodepool, blocker, facts):
    name = nodepool["metadata"]["name"]
    if blocker.data.get("gpus"):
        title = f"NodePool {name} allows no GPU instance type, and {pod.name} asks for {blocker.data['gpus']:g} {GPU}"
        detail = f"NodePool {name} allows only instance types without GPUs ({list_names(blocker.data['candidates'])})."
    else:
        title = f"NodePool {name}'s requirements allow no EC2 instance type"
        detail = f"Karpenter reports 'nodepool requirements filtered out all available instance types' for {name}."
    fix = render_fix("generic/karpenter.no_instance_type.sh.j2", nodepool=name)
    return "karpenter.no_instance_type", title, detail, [_np_requirements(nodepool)], fix


def _resources(pod, nodepool, blocker, facts):
    name = nodepool["metadata"]["name"]
    requests, overhead, types = blocker.data["requests"], blocker.data["overhead"], blocker.data["types"]
    total = {k: requests.get(k, 0) + overhead.get(k, 0) for k in set(requests) | set(overhead)}
    # the resource that fails on the most types, cpu and memory first among equals
    counts: dict[str, int] = {}
    for missing in blocker.data["missing"].values():
        for r in missing:
            counts[r] = counts.get(r, 0) + 1
    resource = res.shortfall({r: 1 for r in counts if counts[r] == max(counts.values())}, {})[0]
    alloc = blocker.data.get("allocatable") or {t: res.allocatable(i) for t, i in types.items()}
    largest = max(types.values(), key=lambda i: (alloc[i.name].get(resource, 0), i.name))
    has = alloc[largest.name].get(resource, 0)
    want = total.get(resource, 0)
    daemons = blocker.data["daemonsets"]
    over = (f" plus {res.show(resource, overhead[resource])} of daemonset overhead ({list_names(daemons)})"
            if overhead.get(resource) else "")
    title = (f"{pod.name} needs {res.show(resource, want)} {resource}; the largest instance type NodePool {name} "
             f"allows has {res.show(resource, has)} allocatable")
    detail = (f"The pod requests {res.show(resource, requests.get(resource, 0))} {resource}{over}. The most any type "
              f"NodePool {name} allows ({list_names(types)}) can offer is {res.show(resource, has)} on {largest.name}, after "
              f"Karpenter's estimate of kube-reserved, system-reserved, the eviction threshold and the VM memory "
              f"overhead ({_overhead_words(blocker.data.get('config'))}). "
              f"Karpenter answers 'no instance type has enough resources'.")
    evidence = [ev.field(pod.ref, "spec.containers[].resources", _container_resources(pod)),
                _ec2_evidence(types.values(), facts)]
    if resource == GPU and requests.get(GPU, 0) > largest.gpu_count:
        gpus, per_node = int(requests[GPU]), largest.gpu_count
        nodes = -(-gpus // max(per_node, 1))
        detail += (f" A pod cannot span nodes: request at most {per_node} GPUs per pod and run {nodes} pods "
                   f"(for example torchrun --nnodes {nodes} --nproc_per_node {per_node}).")
        efas = int(requests.get(EFA, 0))
        fix = render_fix("gpu_request.yaml.j2",
                         **owner_patch(pod, {"containers": _resized(pod, gpus=per_node, efas=min(efas, largest.max_efa_interfaces))}),
                         requested=gpus, per_node=per_node, nodes=nodes, instance_type=largest.name)
    else:
        fix = render_fix("generic/karpenter.no_instance_type.sh.j2", nodepool=name, resources=res.show_all(total),
                         gpus=f"{requests.get(GPU, 0):g}")
    return "karpenter.no_instance_type", title, detail, evidence, fix


def _overhead_words(config: NodeConfig | None) -> str:
    """The VM memory overhead as the controller applies it, and the NodeClass kubelet settings that changed
    the estimate (aws/karpenter-provider-aws pkg/providers/instancetype/types.go Resolve)."""
    config = config or DEFAULT_NODE
    words = [f"{config.vm_overhead * 100:g} %"]
    if config.discovered_memory:
        # aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/instancetype.go discoveredCapacityCache
        words.append("memory of " + ", ".join(f"{t} as a registered node reported it ({res.show('memory', m)})"
                                              for t, m in sorted(config.discovered_memory.items())))
    for label, value in (("maxPods", config.max_pods), ("podsPerCore", config.pods_per_core),
                         ("kubeReserved", config.kube_reserved), ("systemReserved", config.system_reserved),
                         ("evictionHard", config.eviction_hard)):
        if value:
            words.append(f"kubelet {label} {value}")
    return "; ".join(words)


def _container_resources(pod: PodFacts) -> dict:
    spec = pod.pod.get("spec") or {}
    out = {c["name"]: c.get("resources") or {} for c in spec.get("containers") or []}
    out.update({f"init:{c['name']}": c.get("resources") or {} for c in spec.get("initContainers") or []})
    return out


def _resized(pod: PodFacts, *, gpus: int, efas: int) -> list[dict]:
    """Whole containers (a merge patch replaces lists) with GPU and EFA counts that fit one node."""
    out = []
    for container in (pod.pod.get("spec") or {}).get("containers") or []:
        container = copy.deepcopy(container)
        for section in ("requests", "limits"):
            values = (container.get("resources") or {}).get(section) or {}
            if GPU in values:
                values[GPU] = str(gpus)
            if EFA in values:
                values[EFA] = str(efas)
        out.append(container)
    return out


def _efa(pod, nodepool, blocker, facts):
    name = nodepool["metadata"]["name"]
    types = blocker.data["types"]
    plugin = [d for d in facts.device_plugins if "efa" in d["metadata"]["name"]]
    config = blocker.data.get("config")
    if config is not None and config.efa_only_interfaces == 0 and any(i.max_efa_interfaces for i in types.values()):
        return _efa_network_interfaces(pod, nodepool, blocker, facts)
    detail = (f"The pod requests {blocker.data['requests'][EFA]:g} {EFA}, which only the EFA device plugin advertises, "
              f"and only on instance types with EFA. NodePool {name} allows {list_names(types)}, none of which supports "
              f"EFA, so no node it creates will ever offer the resource ('Insufficient {EFA}'). Allow EFA-capable types "
              f"(p4d.24xlarge, p5.48xlarge, g5.48xlarge, ...) in the NodePool, or drop the EFA request to train over ENA.")
    if not plugin and "daemonsets" not in facts.unread:
        detail += " No aws-efa-k8s-device-plugin DaemonSet was found in the cluster either."
    raw = nodepool["spec"]["template"]["spec"].get("requirements") or []
    keep = [r for r in raw if r["key"] != lbl.INSTANCE_TYPE and not r["key"].endswith(
        ("instance-family", "instance-category", "instance-size", "instance-gpu-name"))]
    wanted = ["p4d.24xlarge", "p5.48xlarge"]
    fix = render_fix("efa_nodepool.yaml.j2", nodepool=name, instance_types=wanted,
                     requirements=keep + [{"key": lbl.INSTANCE_TYPE, "operator": "In", "values": wanted}])
    evidence = [ev.field(pod.ref, "spec.containers[].resources", _container_resources(pod)),
                _ec2_evidence(types.values(), facts)]
    evidence += ev.events(pod, reasons=("FailedScheduling",), components=("default-scheduler",))[-1:]
    return ("efa.resource_unavailable",
            f"{pod.name} requests {EFA}, but NodePool {name} allows only instance types without EFA", detail, evidence, fix)


def _efa_network_interfaces(pod, nodepool, blocker, facts):
    """The EC2NodeClass sets spec.networkInterfaces without an efa-only interface: Karpenter then counts no EFA
    on any type, whatever the type supports (aws/karpenter-provider-aws v1.14.1
    pkg/providers/instancetype/types.go efas(), v1.11+)."""
    name = nodepool["metadata"]["name"]
    types = blocker.data["types"]
    key, _ = off.nodeclass_of(nodepool, facts.nodeclasses)
    nodeclass_name = key.split("/", 1)[1]
    detail = (f"The pod requests {blocker.data['requests'][EFA]:g} {EFA}. NodePool {name} allows EFA-capable types "
              f"({list_names(types)}), but its EC2NodeClass {nodeclass_name} sets spec.networkInterfaces with no "
              f"interfaceType: efa-only entry. When that field is set, Karpenter counts one EFA per efa-only interface "
              f"instead of the type's own maximum, so it sees no node that could offer {EFA}. Add efa-only interfaces "
              f"(one per network card, deviceIndex 0 on cards other than the primary's) or drop the field.")
    evidence = [ev.field(pod.ref, "spec.containers[].resources", _container_resources(pod)),
                ev.field(f"ec2nodeclass/{nodeclass_name}", "spec.networkInterfaces",
                         list(blocker.data["config"].network_interfaces or ())),
                _ec2_evidence(types.values(), facts)]
    fix = render_fix("generic/karpenter.no_instance_type.sh.j2", nodepool=name,
                     resources=res.show_all(blocker.data["requests"]), gpus=f"{blocker.data['requests'].get(GPU, 0):g}")
    return ("efa.resource_unavailable",
            f"{pod.name} requests {EFA}, but EC2NodeClass {nodeclass_name}'s networkInterfaces define no EFA interface",
            detail, evidence, fix)


# -- offerings, minValues, limits ----------------------------------------------------------------------

def _offering(pod, nodepool, blocker, facts):
    name = nodepool["metadata"]["name"]
    if blocker.data.get("nodeclass_incompatible"):
        return _offering_network_interfaces(pod, nodepool, blocker, facts)
    offers = blocker.data["offerings"]
    types = blocker.data["types"]
    zones = offers.zones
    everywhere = {t: w for t, w in offers.where.items()}
    in_zone = {t: {z: c for z, c in w.items() if zones is None or z in zones} for t, w in everywhere.items()}
    wanted_ct = sorted(offers.capacity_types)
    # capacity type: some type is offered in an allowed zone, but not with an allowed capacity type
    ct_problem = any(w for w in in_zone.values()) and bool(wanted_ct)
    where = "; ".join(
        f"{t} offered in " + (", ".join(f"{z} ({'/'.join(sorted(c)) if c else 'capacity types not checked'})"
                                        for z, c in sorted(w.items())) or f"no zone of {facts.ec2.region or 'this region'}")
        for t, w in sorted(everywhere.items())[:8])
    evidence = [pod_selector_evidence(pod), _np_requirements(nodepool),
                Evidence(source="ec2 DescribeInstanceTypeOfferings", text=ev.trim(where))]
    if offers.subnet_zones is not None:
        evidence.append(Evidence(source="ec2nodeclass status.subnets", text=f"subnet zones: {', '.join(sorted(offers.subnet_zones))}"))
    if not wanted_ct:
        asked = blocker.data["merged"].get(lbl.CAPACITY_TYPE).describe()
        detail = (f"The requirements on karpenter.sh/capacity-type ({asked}) allow none of Karpenter's capacity types "
                  f"({', '.join(lbl.CAPACITY_TYPES)}), so no offering of any instance type can match. Karpenter answers "
                  f"'no instance type has the required offering'. Use one of those values (lower case).")
        fix = _selector_fix(pod, nodepool, lbl.CAPACITY_TYPE, replacement=lbl.CAPACITY_TYPE,
                            value_map=lbl.MANAGED_CAPACITY_VALUES)
        return ("karpenter.offering_unavailable_in_zone", f"{pod.name} requires a capacity type Karpenter never offers",
                detail, evidence, fix)
    if ct_problem:
        have = sorted({c for w in in_zone.values() for cs in w.values() for c in (cs or ())})
        detail = (f"NodePool {name} (with the pod's requirements) allows capacity type {', '.join(wanted_ct)} only, but "
                  f"{list_names(types)} {'is' if len(types) == 1 else 'are'} offered only as {', '.join(have) or 'nothing'} "
                  f"in the allowed zones ({where}). Karpenter answers 'no instance type has the required offering'. "
                  f"Allow {', '.join(have) or 'on-demand'} in karpenter.sh/capacity-type, or allow other instance types.")
        raw = [r for r in nodepool["spec"]["template"]["spec"].get("requirements") or [] if r["key"] != lbl.CAPACITY_TYPE]
        fix = render_fix("nodepool_requirements.yaml.j2", nodepool=name,
                         summary=f"Allow capacity types {', '.join(sorted(set(wanted_ct) | set(have)))} in NodePool {name}",
                         why="allow the capacity types the instance types are offered as",
                         requirements=raw + [{"key": lbl.CAPACITY_TYPE, "operator": "In",
                                              "values": sorted(set(wanted_ct) | set(have))}])
        title = (f"{list_names(types)} {'is' if len(types) == 1 else 'are'} not offered as "
                 f"{'/'.join(wanted_ct)} in the zones NodePool {name} allows")
        return "karpenter.offering_unavailable_in_zone", title, detail, evidence, fix
    wanted = ", ".join(sorted(zones or ()))
    good = sorted({z for w in everywhere.values() for z, c in w.items() if c is None or c & offers.capacity_types})
    detail = (f"The pod may only run in {wanted}, but none of the instance types NodePool {name} allows for it is "
              f"offered there ({where}). Karpenter answers 'no instance type has the required offering' (older "
              f"releases: 'no instance type which had enough resources and the required offering met the scheduling "
              f"requirements'). Allow the zones where the type is offered{' (' + ', '.join(good) + ')' if good else ''}, "
              f"or allow instance types offered in {wanted}.")
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": lbl.ZONE, "operator": "In", "values": good}]}]}}}
    selector = (pod.pod.get("spec") or {}).get("nodeSelector") or {}
    unpin = {k: None for k in selector if lbl.normalize(k) == lbl.ZONE}
    fix = render_fix("zone.yaml.j2", **owner_patch(pod, {"nodeSelector": unpin or {lbl.ZONE: None}, "affinity": affinity}),
                     zones=good, pinned=wanted)
    title = f"{list_names(types)} {'is' if len(types) == 1 else 'are'} not offered in {wanted}, where {pod.name} is pinned"
    return "karpenter.offering_unavailable_in_zone", title, detail, evidence, fix


def _offering_network_interfaces(pod, nodepool, blocker, facts):
    """aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/compatibility/compatibility.go
    networkInterfaceCheck: more efa-only interfaces than a type's MaximumEfaInterfaces make all its offerings
    unavailable."""
    name = nodepool["metadata"]["name"]
    types = {t: blocker.data["types"][t] for t in blocker.data["nodeclass_incompatible"]}
    key, _ = off.nodeclass_of(nodepool, facts.nodeclasses)
    nodeclass_name = key.split("/", 1)[1]
    wanted = blocker.data["config"].efa_only_interfaces or 0
    have = ", ".join(f"{t}: {i.max_efa_interfaces}" for t, i in sorted(types.items())[:8])
    detail = (f"EC2NodeClass {nodeclass_name} sets spec.networkInterfaces with {wanted} efa-only interface(s), more than "
              f"the instance types that fit {pod.name} support ({have}). Karpenter marks every offering of such a type "
              f"unavailable and answers 'no instance type has the required offering'. Use as many efa-only interfaces "
              f"as the types allow, or allow types with more EFA interfaces.")
    evidence = [ev.field(f"ec2nodeclass/{nodeclass_name}", "spec.networkInterfaces",
                         list(blocker.data["config"].network_interfaces or ())),
                _ec2_evidence(types.values(), facts), _np_requirements(nodepool)]
    fix = render_fix("generic/karpenter.no_instance_type.sh.j2", nodepool=name,
                     resources=res.show_all(res.pod_requests(pod.pod)), gpus=f"{pod.count(GPU)}")
    return ("karpenter.offering_unavailable_in_zone",
            f"EC2NodeClass {nodeclass_name} asks for {wanted} EFA interfaces; {list_names(types)} support fewer",
            detail, evidence, fix)


def _min_values(pod, nodepool, blocker, facts):
    name = nodepool["metadata"]["name"]
    unmet = blocker.data["unmet"]
    shown = "; ".join(f"{k} needs {need} distinct values, the remaining types give {have}" for k, (have, need) in sorted(unmet.items()))
    detail = (f"NodePool {name} requires minValues ({shown}) among the instance types left after the pod's "
              f"requirements, resources and offerings ({list_names(blocker.data['types'])}). Karpenter answers 'minValues "
              f"requirement is not met' and launches nothing (the controller's --min-values-policy / MIN_VALUES_POLICY is "
              f"Strict, the default). Lower minValues, allow more instance types, or (Karpenter v1.6+) set "
              f"MIN_VALUES_POLICY=BestEffort on the controller, which then launches with fewer values.")
    raw = copy.deepcopy(nodepool["spec"]["template"]["spec"].get("requirements") or [])
    for r in raw:
        if lbl.normalize(r["key"]) in unmet and r.get("minValues"):
            r["minValues"] = max(1, unmet[lbl.normalize(r["key"])][0])
    fix = render_fix("nodepool_requirements.yaml.j2", nodepool=name, requirements=raw,
                     summary=f"Lower minValues in NodePool {name} to what the allowed instance types can give",
                     why="minValues lowered to the distinct values available")
    return ("karpenter.no_instance_type", f"NodePool {name}'s minValues cannot be met for {pod.name}", detail,
            [_np_requirements(nodepool)], fix)


def _limit(pod, nodepool, blocker, facts):
    name = nodepool["metadata"]["name"]
    block = blocker.data["block"]
    r = block.resource
    detail = (f"NodePool {name} limits {r} to {res.show(r, block.limit)} and its nodes already hold "
              f"{res.show(r, block.used)}. The smallest node that fits this pod ({block.instance_type}) would add "
              f"{res.show(r, block.needed)}, so Karpenter answers 'all available instance types exceed limits for "
              f"nodepool'. Raise spec.limits, free capacity (finished jobs, idle nodes), or let the pod use another NodePool.")
    others = [k for k in block.all_blocking if k != r]
    if others:
        detail += f" The {', '.join(others)} limit{'s are' if len(others) > 1 else ' is'} in the way too."
    fix = render_fix("nodepool_limit.yaml.j2", nodepool=name, limits=raised_limits(nodepool, block), resource=r,
                     used=res.show(r, block.used), limit=res.show(r, block.limit))
    return ("karpenter.nodepool_limit_reached",
            f"NodePool {name} is at its {r} limit ({res.show(r, block.used)}/{res.show(r, block.limit)}); a new node needs "
            f"{res.show(r, block.needed)} more",
            detail, [_np_field(nodepool, "spec.limits", nodepool["spec"].get("limits")),
                     _np_field(nodepool, "status.resources", (nodepool.get("status") or {}).get("resources") or {})], fix)


_WORDING = {
    "taint": _taint, "nodeclass": _nodeclass, "label": _label, "type_requirements": _type_requirements,
    "no_types": _no_types, "resources": _resources, "efa": _efa, "offering": _offering, "min_values": _min_values,
    "limit": _limit,
}
