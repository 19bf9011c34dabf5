"""GPU devices: GPUs the device plugin marked unhealthy, Xid faults, nodes advertising no GPUs.

The EKS node monitoring agent's verdict is read from the node itself: ``AcceleratedHardwareReady=False`` with
the agent's reason (aws/eks-node-monitoring-agent v1.7.0 pkg/reasons/reasons.yaml: ``NvidiaNVLinkError``,
``NvidiaXID<n>Error``, ``DCGMHealthCode<n>``, ...; a Fatal reason is a condition, not an event,
pkg/manager/node_exporter.go). Karpenter's node repair acts on that condition after 10 minutes
(analyzers/disruption.py ``repairs``): the GPU fault is the cause and leads; the repair, or why it is held back
(``NodeRepairBlocked``), is told as what followed.
"""
from __future__ import annotations

from datetime import datetime, timezone

from playbooks.analyzers import ami
from playbooks.analyzers import evidence as ev
from playbooks.analyzers.disruption import Repair, repairs
from playbooks.analyzers.scan import Located, signals
from playbooks.explain import fix_context, template_for
from playbooks.facts import Facts
from playbooks.fixes import render_fix
from playbooks.model import Evidence, Finding, Remediation
from playbooks.remediations import InvalidRemediation, cordon_gpu_node
from playbooks.signatures import scan_line
from playbooks.speakers import SPEAKERS_NAMED, voice_of

GPU = "nvidia.com/gpu"
NODEPOOL_LABEL = "karpenter.sh/nodepool"


def _gpu_counts(node: dict | None) -> tuple[str | None, str | None]:
    status = (node or {}).get("status") or {}
    return (status.get("capacity") or {}).get(GPU), (status.get("allocatable") or {}).get(GPU)


def analyze_unhealthy(facts: Facts):
    yield from agent_conditions(facts, "gpu.unhealthy_device")
    rejected = [p for p in facts.pods if any(e.get("reason") == "UnexpectedAdmissionError" for e in p.events)
                or (p.pod.get("status") or {}).get("reason") == "UnexpectedAdmissionError"]
    short = {n: _gpu_counts(node) for n, node in facts.nodes.items()}
    short = {n: (c, a) for n, (c, a) in short.items() if c is not None and a is not None and str(c) != str(a)}
    # a device plugin's log counts from the namespaces the plugin is installed in (playbooks/speakers.py)
    plugin_hits = [loc for loc in signals(facts) if loc.origin == "device-plugin" and loc.vouched
                   and loc.signal.code == "gpu.unhealthy_device"]
    if not (rejected or short or plugin_hits):
        return
    node = (rejected[0].node_name if rejected and rejected[0].node_name else None) or next(iter(short), None) \
        or (plugin_hits[0].node if plugin_hits else None)
    evidence: list[Evidence] = []
    for pod in rejected[:2]:
        evidence += ev.events(pod, reasons=("UnexpectedAdmissionError",))
        if (pod.pod.get("status") or {}).get("message"):
            evidence.append(ev.field(pod.ref, "status.message", pod.pod["status"]["message"]))
    for name, (cap, alloc) in list(short.items())[:3]:
        evidence.append(ev.field(f"node/{name}", "status", {"capacity": {GPU: cap}, "allocatable": {GPU: alloc}}))
    evidence += [Evidence(loc.signal.source, loc.signal.line) for loc in plugin_hits[:2]]
    cap, alloc = short.get(node or "", (None, None))
    lost = f" ({int(cap) - int(alloc)} of {cap} GPUs unhealthy)" if cap and alloc else ""
    plugin_pod = next((ref for ref, _ in facts.device_plugin_logs.get(node or "", [])), None)
    _, plugin_namespace, plugin_name = (plugin_pod or "//").split("/", 2)
    fix = render_fix("unhealthy_gpu.sh.j2", **({"node": node} if node else {}), plugin_namespace=plugin_namespace,
                     plugin_pod=plugin_name)
    own = any(facts.is_target_pod(p) for p in rejected)
    # Anyone who may write events in the pod's namespace can write an UnexpectedAdmissionError; the pod's
    # status (kubelet's), the node's allocatable or the plugin's own log are what a cordon may rest on.
    borne_out = node in short or any(loc.node == node for loc in plugin_hits) or any(
        (p.pod.get("status") or {}).get("reason") == "UnexpectedAdmissionError" and p.node_name == node for p in rejected)
    yield Finding(
        code="gpu.unhealthy_device", severity="critical" if own else "error", confidence="high" if borne_out else "low",
        title=f"GPU marked unhealthy on {node}{lost}" + (f": kubelet rejected {rejected[0].name}" if rejected else ""),
        detail=(f"The NVIDIA device plugin marked GPU(s) on {node} unhealthy{lost}: they still count in capacity but "
                f"not in allocatable, and kubelet refuses to hand them out ('Allocate failed due to no healthy devices "
                f"present', pod rejected with UnexpectedAdmissionError). The plugin does not recover by itself. "
                f"Cordon the node so no new GPU pods land there, then replace it (delete its NodeClaim) or, after a "
                f"transient fault, restart the device plugin pod on it."),
        evidence=evidence, fix=fix, remediations=_cordon(node) if borne_out else [],
    )


def analyze_xid(facts: Facts):
    yield from agent_conditions(facts, "gpu.xid_error")
    hits = [loc for loc in signals(facts) if loc.signal.code == "gpu.xid_error" and loc.signal.severity != "info"]
    if not hits:
        return
    # what speakers for the node said first, borne out before alone (stable otherwise)
    hits.sort(key=lambda loc: (not loc.vouched, loc.alone))
    if not hits[0].vouched:
        yield _claimed_xid(hits)
        return
    if hits[0].alone:
        yield _single_report(hits)
        return
    sig = hits[0].signal
    xid = sig.fields.get("xid", "?")
    yield Finding(
        code="gpu.xid_error", severity=sig.severity, confidence=sig.confidence,
        title=f"GPU Xid {xid} reported" + (f" on {hits[0].node}" if hits[0].node else ""),
        detail=(f"The NVIDIA driver reported Xid {xid}, a hardware or driver fault (79: GPU fell off the bus; 48: "
                f"double-bit ECC; 63/64: ECC page retirement; 94/95: contained/uncontained ECC). Critical Xids make the "
                f"device plugin mark the GPU unhealthy. Cordon the node so no new GPU pods land there, then replace "
                f"it; keep its instance ID for an AWS support case."),
        evidence=[Evidence(loc.signal.source, loc.signal.line) for loc in hits[:3]],
        remediations=_cordon(hits[0].node),
    )


def _claimed_xid(hits: list[Located]) -> Finding:
    """Xids only writers that cannot speak for the node reported, and the node's status does not show:
    said, with who said it, and nothing to cordon (scan.py has capped the signals already)."""
    lead = hits[0]
    xid = lead.signal.fields.get("xid", "?")
    where = f" on {lead.node}" if lead.node else ""
    return Finding(
        code="gpu.xid_error", severity=lead.signal.severity, confidence="low",
        title=f"GPU Xid {xid}{where} reported by {lead.speaker}, not corroborated",
        detail=(f"An event in {lead.speaker.split('/', 1)[0]} says the GPU driver reported Xid {xid}{where}, but it was "
                f"not written by a component that can speak for the node ({SPEAKERS_NAMED}) in a namespace they "
                f"write to, and the node's status shows no lost GPU (allocatable equals capacity) and no "
                f"AcceleratedHardwareReady=False. Treat it as a claim to check (nvidia-smi -q on the node, the device "
                f"plugin's log), not as a fault: nothing is offered to cordon."),
        evidence=[Evidence(loc.signal.source, loc.signal.line) for loc in hits[:3]],
    )


def _single_report(hits: list[Located]) -> Finding:
    """An Xid one speaker for the node reported and nothing else bears out (no second reporter, no node
    status): said, below critical (scan.py capped it), with nothing offered to cordon until one agrees."""
    lead = hits[0]
    sig, xid = lead.signal, lead.signal.fields.get("xid", "?")
    return Finding(
        code="gpu.xid_error", severity=sig.severity, confidence=sig.confidence,  # capped by scan.py
        title=f"GPU Xid {xid} reported on {lead.node} by {lead.speaker} alone",
        detail=(f"{lead.speaker} reported Xid {xid} on {lead.node}, and nothing else bears it out yet: no second "
                f"component reported it, and the node's status shows no lost GPU (allocatable equals capacity) and "
                f"no AcceleratedHardwareReady=False, though a fatal Xid makes the device plugin take the GPU out "
                f"of allocatable. Check the node (nvidia-smi -q, the device plugin's log) before "
                f"acting. Nothing is offered to cordon on one report."),
        evidence=[Evidence(loc.signal.source, loc.signal.line) for loc in hits[:3]],
    )


def _cordon(node: str | None) -> list[Remediation]:
    """Cordoning, behind an approval, is offered only for the one node the finding names."""
    if not node:
        return []
    try:
        return [cordon_gpu_node(node=node)]
    except InvalidRemediation:  # a name from a log line that is no node name: the fix text still says what to do
        return []


def analyze_plugin_missing(facts: Facts):
    seen: set[str] = set()
    for name, node in facts.nodes.items():
        labels = ((node or {}).get("metadata") or {}).get("labels") or {}
        gpu_count = labels.get("karpenter.k8s.aws/instance-gpu-count") or labels.get("eks.amazonaws.com/instance-gpu-count")
        if not node or not gpu_count or gpu_count == "0":
            continue
        cap, _ = _gpu_counts(node)
        if cap is not None:
            continue
        seen.add(name)
        claim = _claim_of(facts, name, node)
        found = _driverless(facts, name, node, claim)
        if found:
            yield found
            continue
        plugins = [d["metadata"]["name"] for d in facts.device_plugins if "nvidia" in d["metadata"]["name"]]
        yield Finding(
            code="gpu.device_plugin_missing", severity="error", confidence="high" if not plugins else "medium",
            title=f"GPU node {name} advertises no {GPU}",
            detail=(f"{name} is a {labels.get('node.kubernetes.io/instance-type', 'GPU')} instance with {gpu_count} GPUs, "
                    f"but its capacity has no {GPU}: the NVIDIA device plugin is not running there"
                    + (" (no NVIDIA device plugin DaemonSet found)." if not plugins else
                       f" (DaemonSet {plugins[0]} exists: check that it tolerates the node's taints and selects it).")),
            evidence=[ev.field(f"node/{name}", "status.capacity", (node.get("status") or {}).get("capacity") or {}),
                      ev.field(f"node/{name}", "spec.taints", (node.get("spec") or {}).get("taints") or [])],
        )
    # A pending pod's NodeClaim waiting for nvidia.com/gpu (Initialized=Unknown, ResourceNotRegistered) on a
    # node whose AMI has no driver: the wait never ends, whatever the device plugin tolerates.
    for claim in facts.nodeclaims.values():
        node_name = (claim.get("status") or {}).get("nodeName")
        if not node_name or node_name in seen or not _waits_for_gpu(claim):
            continue
        seen.add(node_name)
        found = _driverless(facts, node_name, facts.nodes.get(node_name), claim)
        if found:
            yield found


def _waits_for_gpu(claim: dict) -> bool:
    for cond in (claim.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Initialized" and cond.get("reason") == "ResourceNotRegistered":
            return GPU in (cond.get("message") or "")
    return False


def _claim_of(facts: Facts, node_name: str, node: dict | None) -> dict | None:
    owners = {r.get("name") for r in ((node or {}).get("metadata") or {}).get("ownerReferences") or []
              if r.get("kind") == "NodeClaim"}
    return next((c for n, c in facts.nodeclaims.items()
                 if n in owners or (c.get("status") or {}).get("nodeName") == node_name), None)


def _nodeclass_of(facts: Facts, claim: dict | None) -> tuple[str | None, dict | None]:
    """The claim's EC2NodeClass: its name (from the claim, else its NodePool) and the object when read."""
    ref = ((claim or {}).get("spec") or {}).get("nodeClassRef") or {}
    if not ref:
        pool = facts.nodepools.get((((claim or {}).get("metadata") or {}).get("labels") or {}).get(NODEPOOL_LABEL, ""))
        ref = (((pool or {}).get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}
    name = ref.get("name")
    return name, facts.nodeclasses.get(f"{ref.get('group', 'karpenter.k8s.aws')}/{name}") if name else None


def _driverless(facts: Facts, node_name: str, node: dict | None, claim: dict | None) -> Finding | None:
    """gpu.device_plugin_missing pointed at the AMI when the node's image has no NVIDIA driver: an image the
    EC2NodeClass resolved to a non-NVIDIA variant, or (custom AMI) the device plugin saying NVML is missing."""
    image_id = ((claim or {}).get("status") or {}).get("imageID")
    nodeclass_name, nodeclass = _nodeclass_of(facts, claim)
    amis = ((nodeclass or {}).get("status") or {}).get("amis") or []
    ami_name = next((a.get("name") for a in amis if image_id and a.get("id") == image_id), None)
    os_image = (((node or {}).get("status") or {}).get("nodeInfo") or {}).get("osImage")
    image = ami.classify(ami_name, image_id=image_id, os_image=os_image)
    plugin_line = next((line for _, log in facts.device_plugin_logs.get(node_name, [])
                        if (line := ami.says_no_driver(log))), None)
    if image.driver is not False and not (image.driver is None and plugin_line):
        return None
    terms = ((nodeclass or {}).get("spec") or {}).get("amiSelectorTerms") or []
    labels = (((node or claim or {}).get("metadata") or {}).get("labels") or {})
    instance_type = labels.get("node.kubernetes.io/instance-type", "GPU instance")
    what = f"AMI {image.name}" + (f" ({image_id})" if image_id and image.name else "") if image.name else \
        f"AMI {image_id}" if image_id else "its AMI"
    evidence = []
    if claim is not None:
        evidence.append(ev.field(f"nodeclaim/{claim['metadata']['name']}", "status.imageID", image_id or ""))
    if nodeclass is not None:
        evidence.append(ev.field(f"ec2nodeclass/{nodeclass_name}", "spec.amiSelectorTerms", terms))
        if ami_name:
            evidence.append(ev.field(f"ec2nodeclass/{nodeclass_name}", "status.amis", [a for a in amis if a.get("id") == image_id]))
    if os_image and image.family == "bottlerocket" and not ami_name:
        evidence.append(ev.field(f"node/{node_name}", "status.nodeInfo.osImage", os_image))
    if plugin_line:
        evidence.append(Evidence(f"device plugin log on {node_name}", plugin_line))
    by_alias = any("alias" in t for t in terms)
    if image.driver is False:
        why = (f"{what} is the {image.family} image without the NVIDIA driver"
               + (f": the amiSelectorTerms select it by {' and '.join(sorted({k for t in terms for k in t}))}, and such a "
                  "term gives every instance type the same image, GPU or not (only an alias picks the NVIDIA variant "
                  "for GPU types)" if terms and not by_alias else ""))
    else:
        why = (f"{what} has no NVIDIA driver: the device plugin cannot load NVML (libnvidia-ml.so.1), so it registers "
               f"no {GPU}")
    known = {k: v for k, v in (("nodeclass", nodeclass_name), ("nodeclaim", (claim or {}).get("metadata", {}).get("name")))
             if v}
    fix = render_fix("nodeclass_ami.yaml.j2", **known,
                     alias=image.alias or "al2023@latest", current=image.name or image_id or "",
                     custom=image.driver is None, **({"ami_family": _AMI_FAMILY[image.family or "al2023"]}
                                                     if _family_conflicts(nodeclass, image.family or "al2023") else {}))
    return Finding(
        code="gpu.device_plugin_missing", severity="error", confidence="high" if image.driver is False else "medium",
        title=f"GPU node {node_name} runs an AMI without the NVIDIA driver" + (f" ({image.name})" if image.name else ""),
        detail=(f"{node_name} is a {instance_type} but {why}. No device plugin toleration or restart can make it "
                f"advertise {GPU}; its NodeClaim waits for the resource (Initialized=Unknown, ResourceNotRegistered) "
                f"and GPU pods stay Pending. Point the EC2NodeClass{' ' + nodeclass_name if nodeclass_name else ''} at "
                f"an NVIDIA variant: the alias {image.alias or 'al2023@latest'} (Karpenter v1+ picks the NVIDIA build "
                f"for GPU instance types, arm64 from v1.4) or a Bottlerocket nvidia build, then replace the node "
                f"(delete its NodeClaim) so a new one launches from it."),
        evidence=evidence, fix=fix,
    )


# EC2NodeClass CEL rules (karpenter.k8s.aws_ec2nodeclasses.yaml): with an alias, spec.amiFamily may only be
# the alias' family or Custom.
_AMI_FAMILY = {"al2023": "AL2023", "al2": "AL2", "bottlerocket": "Bottlerocket"}


def _family_conflicts(nodeclass: dict | None, family: str) -> bool:
    current = ((nodeclass or {}).get("spec") or {}).get("amiFamily")
    return bool(current) and current not in (_AMI_FAMILY[family], "Custom")


# -- the node monitoring agent's condition, and node repair after it ------------------------------------------

ACCELERATED = "AcceleratedHardwareReady"


def agent_conditions(facts: Facts, code: str):
    """A finding per node of the job whose ``AcceleratedHardwareReady`` is False with a reason the agent's rules
    (signatures/gpu_health.py) file under ``code``; what node repair did after it is part of the finding."""
    for name in sorted({p.node_name for p in facts.pods if p.node_name}):
        node = facts.nodes.get(name)
        cond = next((c for c in ((node or {}).get("status") or {}).get("conditions") or []
                     if c.get("type") == ACCELERATED and str(c.get("status")) == "False"), None)
        if cond is None:
            continue
        line = f"{ACCELERATED}  False  {cond.get('reason') or ''}  {cond.get('message') or ''}".strip()
        sig = next((s for s in scan_line(line, source=f"node/{name} status.conditions[{ACCELERATED}]")
                    if s.code.startswith("gpu.") and s.severity != "info"), None)
        if sig is None or sig.code != code:
            continue
        yield _agent_finding(facts, name, node or {}, cond, sig, repairs(facts).get(name))


def _agent_finding(facts: Facts, name: str, node: dict, cond: dict, sig, repair: Repair | None) -> Finding:
    reason = str(cond.get("reason") or "")
    own = any(p.node_name == name and facts.is_target_pod(p) for p in facts.pods)
    on_it = [p.name for p in facts.pods if p.node_name == name]
    evidence = [ev.field(f"node/{name}", f"status.conditions[{ACCELERATED}]",
                        {k: cond.get(k) for k in ("status", "reason", "message", "lastTransitionTime") if cond.get(k)})]
    for event in facts.node_events.get(name, []):  # the agent's own events about the same fault
        if voice_of(event).component == "eks-node-monitoring-agent" and reason and (
                event.get("reason") == reason or reason in str(event.get("message") or "")):
            evidence.append(Evidence(ev.event_source(f"node/{name}", event), str(event.get("message") or "")))
    what_followed, remediations = _repair_story(facts, name, node, repair, evidence)
    xid = sig.fields.get("xid")
    lead = (f"The EKS node monitoring agent set {ACCELERATED}=False on {name}"
            f"{' (' + reason + ')' if reason else ''}"
            + (f" since {cond.get('lastTransitionTime')}" if cond.get("lastTransitionTime") else "")
            + (f": {str(cond.get('message')).strip()}" if cond.get("message") else "") + ". ")
    meaning = (f"Xid {xid} is a hardware fault of the GPU, not of the job's code. " if xid else
               "The agent sets this condition only for a Fatal reason: a GPU of the node is faulty in hardware "
               "(NVLink, ECC, a missing GPU, the NVSwitch fabric, a failed DCGM check), not the job's code. ")
    runs = (f"{', '.join(on_it[:4])} ran on it; a distributed job loses every rank with it and resumes from its last "
            f"checkpoint on a healthy node. " if on_it else "")
    title = (f"GPU fault on {name}: {ACCELERATED}=False ({reason or 'node monitoring agent'})"
             + (f", Xid {xid}" if xid else ""))
    if repair is not None and repair.deleted:
        title += "; Karpenter's node repair is replacing the node"
    elif repair is not None and repair.blocked:
        title += "; node repair is blocked"
    template = template_for(sig.code)
    context = {**fix_context(sig.code, sig.fields), "node": name}
    if repair is not None and repair.deleted:
        context["repaired"] = repair.claim or name
    return Finding(
        code=sig.code, severity="critical" if own else "error", confidence="high", title=title,
        detail=lead + meaning + runs + what_followed, evidence=evidence,
        fix=render_fix(template, **{k: v for k, v in context.items() if isinstance(v, str)}),
        remediations=remediations,
    )


def _repair_story(facts: Facts, name: str, node: dict, repair: Repair | None,
                  evidence: list[Evidence]) -> tuple[str, list[Remediation]]:
    """What Karpenter's node repair did after the condition (detail text), and the cordon to offer."""
    going = bool((node.get("metadata") or {}).get("deletionTimestamp")) or any(
        t.get("key") == "karpenter.sh/disrupted" for t in (node.get("spec") or {}).get("taints") or [])
    if repair is not None and repair.deleted:
        evidence.extend(repair.deleted[:2])
        evidence.extend(_evictions(facts, name)[:2])
        claim = f"NodeClaim {repair.claim}" if repair.claim else "its NodeClaim"
        after = (f" once the condition had held for its {int(repair.toleration.total_seconds() // 60)}-minute toleration"
                 if repair.toleration else "")
        return ((f"What followed: Karpenter's node repair (feature gate NodeRepair) deleted {claim}{after} and set its "
                 "termination time to that moment, so the node's pods are deleted at once: PodDisruptionBudgets and "
                 "karpenter.sh/do-not-disrupt do not hold node repair back, and no NodePool disruption setting would "
                 "have kept the job on a node whose GPU failed. Karpenter launches a replacement for the pending pods; "
                 "restart the job from its last checkpoint and keep the instance ID for an AWS support case if the "
                 "fault repeats."), [])
    due = repair.due if repair is not None else None
    if repair is not None and repair.blocked:
        evidence.extend(repair.blocked[:1])
        text = (f"Karpenter's node repair is blocked (NodeRepairBlocked: {repair.blocked_why}), so it does not replace "
                "the node: so many unhealthy nodes at once point at a shared cause (a driver or AMI release, an "
                "EC2 issue in the zone) more than at one GPU. Cordon this node and replace it yourself once the "
                "cause is understood.")
    elif due is not None and due > datetime.now(timezone.utc):
        text = (f"With Karpenter's node repair enabled (feature gate NodeRepair, on in EKS Auto Mode), the node is "
                f"replaced at {due.strftime('%Y-%m-%d %H:%M UTC')}, 10 minutes after the condition turned False, PDBs "
                "and do-not-disrupt bypassed; without it nothing replaces the node: cordon it, drain it and delete it.")
    else:
        text = ("Karpenter's node repair (feature gate NodeRepair, on in EKS Auto Mode) replaces a node 10 minutes "
                "after this condition turns False; this one is still here, so repair is off (or blocked): cordon, "
                "drain and replace the node yourself.")
    return text, ([] if going else _cordon(name))


def _evictions(facts: Facts, node: str) -> list[Evidence]:
    """Karpenter's eviction or pod deletion of the node's pods, as their events quote it."""
    out = []
    for pod in facts.pods:
        if pod.node_name != node:
            continue
        out += ev.events(pod, reasons=("Evicted", "Disrupted"), components=("karpenter", "eks-auto-mode"))
    return out
