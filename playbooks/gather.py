"""Gathering facts about one target through the cluster gateway and the EC2 catalogue.

The cost is bounded by the job's size (capped by ``max_pods``), never by the cluster's: objects are
read by name, pods by the job's label, events by ``involvedObject``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Protocol, TypeVar

from playbooks import history_names
from playbooks.facts import Facts, FactsUnavailable, PodFacts
from playbooks.analyzers.owners import (
    JOBSET_NAME, OWNER_KINDS, WORKLOADS, Owner, owner_of_object, pod_owner, pod_selector,
)
from playbooks.model import Target
from playbooks.gather_ec2 import Catalog, considered_nodepools, gather_ec2, gather_node_types
from playbooks.gather_gpu import gather_gpu_usage
from playbooks.gpu_series import GpuMetrics
from playbooks.karpenter.nodeclaim import nominated_claims
from playbooks.karpenter import versions
from playbooks.karpenter.controller_settings import min_values_policy, setting
from playbooks.requirements import is_auto_mode

T = TypeVar("T")

# "Pod should schedule on: nodeclaim/<n>" (v1beta1 and later); "machine/<n>" before v0.32 (v1alpha5).
KUBEFLOW_JOB_LABEL = "training.kubeflow.org/job-name"
BATCH_JOB_LABELS = ("batch.kubernetes.io/job-name", "job-name")
# The NVIDIA device plugin's pods, by installer: the k8s-device-plugin Helm chart
# (NVIDIA/k8s-device-plugin deployments/helm/nvidia-device-plugin/templates/_helpers.tpl:
# app.kubernetes.io/name), the NVIDIA GPU Operator (NVIDIA/gpu-operator assets/state-device-plugin/
# 0500_daemonset.yaml: DaemonSet nvidia-device-plugin-daemonset in gpu-operator, app=...), and the
# static manifest nvidia-device-plugin.yml (name=nvidia-device-plugin-ds).
DEVICE_PLUGIN_SELECTOR = "app.kubernetes.io/name=nvidia-device-plugin"
DEVICE_PLUGIN_SELECTORS = (DEVICE_PLUGIN_SELECTOR, "app=nvidia-device-plugin-daemonset", "name=nvidia-device-plugin-ds")


class ReadFailed(FactsUnavailable):
    """One read the cluster refused or cannot serve (403, 401, an API group that is not installed).

    ``read`` names what was read ("pod logs", "nodepools"); ``reason`` is short ("forbidden", "not
    installed"); ``detail`` is the API's own message. Gathering records it as a gap and goes on.
    """

    def __init__(self, read: str, *, reason: str, detail: str) -> None:
        super().__init__(f"{read}: {reason}: {detail}")
        self.read = read
        self.reason = reason
        self.detail = detail


class Listed(list):
    """A list read under a cap; ``more`` counts items left out (at least that many; 0: none)."""

    def __init__(self, items=(), *, more: int = 0) -> None:
        super().__init__(items)
        self.more = more


class Gateway(Protocol):  # what the engine needs from bot.gateway.ClusterGateway
    name: str

    def get_pod(self, namespace: str, name: str) -> dict | None: ...
    def get_job(self, namespace: str, name: str) -> dict | None: ...
    def get_pytorchjob(self, namespace: str, name: str) -> dict | None: ...
    def get_workload(self, key: str, namespace: str, name: str) -> dict | None: ...
    def get_node(self, name: str) -> dict | None: ...
    def get_nodepool(self, name: str) -> dict | None: ...
    def get_nodeclaim(self, name: str) -> dict | None: ...
    def get_nodeclass(self, group: str, name: str) -> dict | None: ...
    def get_pvc(self, namespace: str, name: str) -> dict | None: ...
    def get_pv(self, name: str) -> dict | None: ...
    def api_versions(self) -> dict[str, str]: ...
    def list_nodepools(self) -> Listed: ...
    def job_pods(self, namespace: str, job_name: str, *, max_items: int,
                 selectors: list[str] | None = None) -> Listed: ...
    def pods_by_label(self, namespace: str, selector: str, *, max_items: int) -> Listed: ...
    def pods_on_node(self, node_name: str, *, label_selector: str | None = None, max_items: int = 200) -> Listed: ...
    def events_for(self, *, kind: str, name: str, namespace: str | None, max_items: int = 200) -> list[dict]: ...
    def pod_log(self, namespace: str, name: str, *, container: str | None, previous: bool) -> str | None: ...
    def recent_events(self, *, namespace: str, kind: str, max_items: int) -> Listed: ...
    def karpenter_namespaces(self) -> tuple[str, ...]: ...
    def karpenter_pods(self, namespace: str, *, max_items: int = 5) -> Listed: ...
    def karpenter_lease(self, namespace: str) -> dict | None: ...
    def daemonsets(self, *, max_items: int = 300) -> Listed: ...


@dataclass(frozen=True)
class Limits:
    max_pods: int = 16
    max_containers: int = 2
    max_claims: int = 8  # PVCs of pending pods read by name (and their PVs)
    max_selectors: int = 4  # distinct spread / affinity selectors whose pods are listed
    max_peers: int = 200  # pods listed per selector
    max_peer_nodes: int = 12  # nodes of those pods read for their zone


# What each read is called in a gap ("Not checked: <label> (...)"); the keys go into Facts.unread.
READS = {
    "pods": "the pods of the job",
    "events": "events",
    "pod logs": "pod logs",
    "nodes": "nodes",
    "nodepools": "NodePools",
    "nodeclaims": "NodeClaims",
    "nodeclasses": "NodeClasses",
    "daemonsets": "DaemonSets",
    "jobsets": "the JobSets of the pods (is a TrainJob their owner?)",
    "karpenter controller": "the Karpenter controller",
    "karpenter lease": "the Karpenter leader-election Lease",
    "karpenter log": "the Karpenter controller log",
    "volumes": "PersistentVolumeClaims and PersistentVolumes",
    "peer pods": "pods matching the spread and affinity selectors",
}


def not_checked(facts: Facts, read: str, exc: ReadFailed, *, then: str = "") -> None:
    """Record a failed read: its name in ``facts.unread`` and a gap quoting the API's own message."""
    facts.unread.add(read)
    detail = f"{exc.reason}: {exc.detail}" if exc.detail else exc.reason
    facts.gaps.append(f"Not checked: {READS.get(read, read)} ({detail}){'; ' + then if then else ''}.")


def _read(facts: Facts, read: str, fn: Callable[[], T], default: T) -> T:
    """One read that may fail on its own: a refusal becomes a gap, and the same read is not retried
    for the next object (a 403 on one pod's log is a 403 on all of them)."""
    if read in facts.unread:
        return default
    try:
        return fn()
    except ReadFailed as exc:
        not_checked(facts, read, exc)
        return default


def gather(target: Target, *, owner: dict | None, pod: dict | None, node: dict | None, nodepool: dict | None,
           gateway: Gateway, catalog: Catalog | None, limits: Limits = Limits(),
           progress: Callable[[str], None] | None = None,
           namespace_allowed: Callable[[str], bool] | None = None, gpu_metrics: GpuMetrics | None = None) -> Facts:
    """Collect facts for an already-resolved target (the engine fetched the named object).

    ``namespace_allowed``: a node's pods in other namespaces are counted, never read or named."""
    step = progress or (lambda _: None)
    facts = Facts(target=target, cluster=gateway.name)
    step("reading pods and events")
    pods: list[dict] = []
    if target.kind in OWNER_KINDS and owner is not None:
        facts.owner, facts.owner_kind = owner, target.kind
        kind = WORKLOADS[target.kind].kind
        facts.owner_events = _read(facts, "events", lambda: gateway.events_for(
            kind=kind, name=target.name, namespace=target.namespace), [])
        listed = _read(facts, "pods", lambda: gateway.job_pods(
            target.namespace or "", target.name, max_items=limits.max_pods * 4,
            selectors=pod_selector(target.kind, target.name)), Listed())
        _note_cap(facts, listed, what=f"pods of {target.kind} {target.name}",
                  then="the pods not running were read first")
        pods = list(listed)
    elif target.kind == "pod" and pod is not None:
        pods = [pod] + _siblings(pod, facts=facts, gateway=gateway, limits=limits)
    elif target.kind == "node" and node is not None:
        facts.nodes[target.name] = node
        listed = _read(facts, "pods", lambda: gateway.pods_on_node(target.name, max_items=limits.max_pods * 4), Listed())
        _note_cap(facts, listed, what=f"pods on node {target.name}")
        pods = [p for p in listed if _uses_gpu(p)]
        if namespace_allowed is not None:
            hidden = [p for p in pods if not namespace_allowed((p.get("metadata") or {}).get("namespace") or "")]
            if hidden:
                pods = [p for p in pods if p not in hidden]
                facts.gaps.append(f"{len(hidden)} GPU pod{'s' if len(hidden) > 1 else ''} on this node "
                                  "belong to namespaces not open here and were not examined.")
    elif target.kind == "nodepool" and nodepool is not None:
        facts.nodepools[target.name] = nodepool

    picked = _pick(pods, limits.max_pods)
    if len(picked) < len(pods):
        facts.gaps.append(f"Events and logs were read for {len(picked)} of {len(pods)} pods (those in trouble "
                          "first); the others were not examined.")
    for raw in picked:
        facts.pods.append(_pod_facts(raw, facts=facts, gateway=gateway, limits=limits))
    _follow_owners(facts, gateway=gateway)

    step("reading nodes and NodePools")
    _gather_nodes(facts, gateway=gateway)
    _gather_nodepools(facts, gateway=gateway)
    _gather_nodeclaims(facts, gateway=gateway)
    _gather_nodeclasses(facts, gateway=gateway)
    _gather_history(facts, gateway=gateway)
    step("reading the Karpenter controller log")
    _gather_karpenter(facts, gateway=gateway)
    _gather_history_claims(facts, gateway=gateway)
    _gather_daemonsets(facts, gateway=gateway)
    _gather_device_plugins(facts, gateway=gateway)
    if facts.pending_pods():
        _gather_volumes(facts, gateway=gateway, limits=limits)
        _gather_peer_pods(facts, gateway=gateway, limits=limits)
    if facts.pending_pods() or target.kind == "nodepool":
        step("checking instance types and zone offerings with EC2")
        facts.ec2 = gather_ec2(facts, catalog=catalog)
    elif any(p.phase == "Pending" and p.node_name for p in facts.pods if facts.is_target_pod(p)):
        # A pod placed on a node and not started: the node's type bounds what it can give the pod (pod IPs).
        facts.ec2.node_types = gather_node_types(facts, catalog=catalog)
    if facts.ec2.unavailable:
        facts.gaps.append(
            f"EC2 facts (GPU count, EFA support, zone offerings per instance type) were not checked: {facts.ec2.unavailable}."
        )
    if gpu_metrics is not None:
        step("reading GPU metrics")
        gather_gpu_usage(facts, metrics=gpu_metrics)
    return facts


def _note_cap(facts: Facts, listed: list, *, what: str, then: str = "") -> None:
    more = getattr(listed, "more", 0)
    if more:
        facts.gaps.append(f"{what[0].upper() + what[1:]}: read {len(listed)} of at least {len(listed) + more}"
                          f"{'; ' + then if then else ''}.")


def _follow_owners(facts: Facts, *, gateway: Gateway) -> None:
    """Pods of a JobSet that a TrainJob owns belong to the TrainJob (TrainJob -> JobSet -> Job -> Pod):
    the pods cannot say so, the JobSet's ownerReferences can. One read per JobSet; a JobSet that
    cannot be read leaves its pods to the JobSet."""
    if facts.owner_kind == "trainjob":
        found = {facts.target.name: Owner("trainjob", facts.target.name, WORKLOADS["trainjob"].api_version)}
    else:
        found = {}
        if facts.owner_kind == "jobset" and facts.owner is not None:
            found[facts.target.name] = owner_of_object(facts.owner)
    for pod in facts.pods:
        base = pod_owner(pod)
        if base.key != "jobset":
            continue
        if base.name not in found and "jobsets" not in facts.unread:
            jobset = _read(facts, "jobsets", lambda: gateway.get_workload("jobset", pod.namespace, base.name), None)
            found[base.name] = owner_of_object(jobset) if jobset else None
        parent = found.get(base.name)
        if parent is not None and parent.key == "trainjob":
            pod.owner = Owner("trainjob", parent.name, parent.api_version, base.replica)


def _siblings(pod: dict, *, facts: Facts, gateway: Gateway, limits: Limits) -> list[dict]:
    """Other pods of the same job: a peer's death often explains this pod's failure."""
    labels = pod["metadata"].get("labels") or {}
    ns = pod["metadata"].get("namespace", "")
    for label in (JOBSET_NAME, KUBEFLOW_JOB_LABEL, *BATCH_JOB_LABELS):
        if labels.get(label):
            others = _read(facts, "pods", lambda: gateway.job_pods(ns, labels[label], max_items=limits.max_pods * 4,
                                                                   selectors=[f"{label}={labels[label]}"]),
                           Listed())
            _note_cap(facts, others, what=f"pods of job {labels[label]}", then="the pods not running were read first")
            return [p for p in others if p["metadata"]["name"] != pod["metadata"]["name"]]
    return []


def _uses_gpu(pod: dict) -> bool:
    return "nvidia.com/gpu" in str((pod.get("spec") or {}).get("containers"))


def _pick(pods: list[dict], limit: int) -> list[dict]:
    """Keep the target (first) and prefer pods in trouble: they carry the evidence."""
    if len(pods) <= limit:
        return pods
    head, rest = pods[:1], pods[1:]
    rest.sort(key=lambda p: 0 if (p.get("status") or {}).get("phase") in ("Pending", "Failed") or _restarted(p) else 1)
    return head + rest[: limit - 1]


def _restarted(pod: dict) -> bool:
    return any(c.get("restartCount") or (c.get("state") or {}).get("terminated")
               for c in (pod.get("status") or {}).get("containerStatuses") or [])


def _pod_facts(pod: dict, *, facts: Facts, gateway: Gateway, limits: Limits) -> PodFacts:
    meta = pod["metadata"]
    ns = meta.get("namespace", "")
    out = PodFacts(pod=pod, events=_read(facts, "events", lambda: gateway.events_for(
        kind="Pod", name=meta["name"], namespace=ns), []))
    statuses = {c.get("name"): c for c in (pod.get("status") or {}).get("containerStatuses") or []}
    containers = [c["name"] for c in (pod.get("spec") or {}).get("containers") or []][: limits.max_containers]
    for name in containers:
        status = statuses.get(name)
        if status is None:
            continue  # never started: no log to read
        started = bool(status.get("state", {}).get("running") or status.get("state", {}).get("terminated"))
        wanted = [False] if started else []
        if status.get("restartCount") or status.get("lastState", {}).get("terminated"):
            wanted.append(True)
        for previous in wanted:
            text = _read(facts, "pod logs", lambda: gateway.pod_log(ns, meta["name"], container=name,
                                                                    previous=previous), None)
            if text:
                out.logs[(name, previous)] = text
    return out


def _gather_nodes(facts: Facts, *, gateway: Gateway) -> None:
    for pod in facts.pods:
        name = pod.node_name
        if name and name not in facts.nodes and "nodes" not in facts.unread:
            try:
                facts.nodes[name] = gateway.get_node(name)
            except ReadFailed as exc:
                not_checked(facts, "nodes", exc)
    for name in list(facts.nodes):
        facts.node_events[name] = _read(facts, "events", lambda: gateway.events_for(
            kind="Node", name=name, namespace=None), [])


def _gather_nodepools(facts: Facts, *, gateway: Gateway) -> None:
    facts.api_versions = dict(gateway.api_versions())
    version = facts.api_versions.get("karpenter.sh")
    if version and version != "v1":
        kinds = "Provisioners and Machines" if version == "v1alpha5" else "NodePools and NodeClaims"
        facts.gaps.append(
            f"{kinds} read at karpenter.sh/{version} ({versions.era('karpenter.sh', version)}) and converted to "
            "the v1 shape: fields that v1 added are not known, and messages may use older wording."
        )
    try:
        listed = gateway.list_nodepools()
    except ReadFailed as exc:
        if exc.reason == "not installed":
            facts.unread.update({"nodepools", "nodeclaims"})
            facts.gaps.append(f"Karpenter CRDs are not installed: NodePools were not checked ({exc.detail}).")
        else:
            not_checked(facts, "nodepools", exc)
        return
    _note_cap(facts, listed, what="NodePools")
    for np in listed:
        facts.nodepools[np["metadata"]["name"]] = np


def _gather_nodeclaims(facts: Facts, *, gateway: Gateway) -> None:
    names = _nominated(facts)
    for node in facts.nodes.values():
        for ref in (node or {}).get("metadata", {}).get("ownerReferences") or []:
            if ref.get("kind") in ("NodeClaim", "Machine"):
                names.add(ref["name"])
    for name in sorted(names)[:16]:
        claim = _read(facts, "nodeclaims", lambda: gateway.get_nodeclaim(name), None)
        if claim is not None:
            facts.nodeclaims[name] = claim
    # Karpenter's own words about a launch it tried for these pods: on Auto Mode (no controller log) or
    # when the log cannot be read, a NodeClaim's events are the only record of an EC2 refusal
    # (kubernetes-sigs/karpenter pkg/controllers/nodeclaim/lifecycle/launch.go publishes them on the
    # NodeClaim before deleting it).
    for name in sorted(_nominated(facts))[:MAX_NOMINATED_CLAIM_EVENTS]:
        facts.nodeclaim_events[name] = _read(facts, "events", lambda: gateway.events_for(
            kind="NodeClaim", name=name, namespace=None), [])


MAX_NODECLASSES = 8
MAX_NOMINATED_CLAIM_EVENTS = 4


def _gather_nodeclasses(facts: Facts, *, gateway: Gateway) -> None:
    """NodeClasses of the NodePools the target runs on, asks for, or (pending) could use: a NodeClass
    that is not Ready is why its NodePools launch nothing, and its subnets bound the zones."""
    pools = list(_relevant_nodepools(facts))
    for pod in facts.pending_pods():
        pools += [facts.nodepools[n] for n in considered_nodepools(pod, facts) if n in facts.nodepools]
    wanted = {(_ref(np).get("group", ""), _ref(np).get("name", "")) for np in pools}
    if len(wanted) > MAX_NODECLASSES:
        facts.gaps.append(f"NodeClasses: read {MAX_NODECLASSES} of the {len(wanted)} the considered NodePools use.")
    for group, name in sorted(wanted)[:MAX_NODECLASSES]:
        if group and name:
            obj = _read(facts, "nodeclasses", lambda: gateway.get_nodeclass(group, name), None)
            if obj is not None:
                facts.nodeclasses[f"{group}/{name}"] = obj


def _ref(nodepool: dict) -> dict:
    return ((nodepool.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}


def _relevant_nodepools(facts: Facts) -> list[dict]:
    """NodePools the target's pods run on or explicitly ask for."""
    names = set()
    for pod in facts.pods:
        node_selector = (pod.pod.get("spec") or {}).get("nodeSelector") or {}
        # Pods of the v1alpha5 era select their Provisioner (read as the NodePool of the same name).
        selector = node_selector.get("karpenter.sh/nodepool") or node_selector.get(versions.PROVISIONER_LABEL)
        if selector:
            names.add(selector)
        node = facts.node_of(pod)
        label = ((node or {}).get("metadata", {}).get("labels") or {}).get("karpenter.sh/nodepool")
        if label:
            names.add(label)
    if facts.target.kind == "nodepool":
        names.add(facts.target.name)
    return [facts.nodepools[n] for n in sorted(names) if n in facts.nodepools]


def _gather_karpenter(facts: Facts, *, gateway: Gateway) -> None:
    """Find the controller (its namespace, replicas, version), then read the log of the leader: only
    the holder of the leader-election Lease schedules pods and logs why (domain-facts: the Helm chart
    runs 2 replicas). Costs at most len(namespaces) + 2 requests."""
    info = facts.karpenter
    namespaces = gateway.karpenter_namespaces()
    pods: list[dict] = []
    refused: list[tuple[str, ReadFailed]] = []
    for ns in namespaces:
        try:
            found = gateway.karpenter_pods(ns)
        except ReadFailed as exc:
            refused.append((ns, exc))
            continue
        if found:
            info.namespace, pods = ns, list(found)
            break
    if not pods:
        relevant = _relevant_nodepools(facts) or list(facts.nodepools.values())
        if refused:
            ns, exc = refused[0]
            not_checked(facts, "karpenter controller", exc,
                        then=f"its log was not read (looked in {', '.join(namespaces)})")
            facts.unread.add("karpenter log")
        elif relevant and all(is_auto_mode(np) for np in relevant):
            facts.gaps.append("Karpenter controller logs: EKS Auto Mode runs Karpenter outside the cluster; events were used instead.")
        else:
            facts.gaps.append(
                f"Karpenter controller logs were not found: no pod labelled app.kubernetes.io/name=karpenter in "
                f"{' or '.join(namespaces)} (set GPUBOT_KARPENTER_NAMESPACE to where it runs)."
            )
        return
    ns = info.namespace or ""
    info.replicas = len(pods)
    info.version = _image_version(pods[0])
    # aws/karpenter-provider-aws pkg/operator/options/options.go: --vm-memory-overhead-percent, env default
    info.vm_memory_overhead_percent = setting(pods[0], flag="vm-memory-overhead-percent", env="VM_MEMORY_OVERHEAD_PERCENT")
    info.min_values_policy = min_values_policy(pods[0], version=info.version)
    running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"] or pods
    fallback = running[0]["metadata"]["name"]
    try:
        lease = gateway.karpenter_lease(ns)
    except ReadFailed as exc:
        lease = None
        not_checked(facts, "karpenter lease", exc,
                    then=f"read the log of {ns}/{fallback} instead, which may not be the leader" if len(pods) > 1 else "")
    else:
        holder = str(((lease or {}).get("spec") or {}).get("holderIdentity") or "")
        # client-go leader election: the identity is "<hostname>_<uuid>", and a pod's hostname is its name.
        info.leader = holder.rsplit("_", 1)[0] if "_" in holder else (holder or None)
        if info.leader is None and len(pods) > 1:
            what = "names no holder" if lease is not None else "was not found"
            facts.gaps.append(f"The Karpenter leader-election Lease in {ns} {what}: read the log of "
                              f"{ns}/{fallback}, which may not be the leader.")
    name = info.leader or fallback
    chosen = next((p for p in pods if p["metadata"]["name"] == name), None)
    containers = [c.get("name") for c in ((chosen or {}).get("spec") or {}).get("containers") or []]
    container = "controller" if "controller" in containers or not containers else containers[0]
    text = _read(facts, "karpenter log", lambda: gateway.pod_log(ns, name, container=container, previous=False), None)
    if text is None:
        if "karpenter log" not in facts.unread:
            facts.gaps.append(f"The Karpenter controller log of {ns}/{name} could not be read (the pod is gone?).")
        return
    facts.karpenter_source = f"karpenter log {ns}/{name}"
    facts.karpenter_log = _lines_about(text.splitlines(), facts)


# The NodeClaim a structured controller log line is about (Karpenter v1 logs {"NodeClaim":{"name":...}}).
_LOGGED_CLAIM = re.compile(r'"NodeClaim":\{"name":"(?P<name>[^"]+)"')


def _lines_about(lines: list[str], facts: Facts) -> list[str]:
    """Lines about the target, and lines about the NodeClaims those lines name: a claim created for the
    pod, whose launch then failed (insufficient capacity), is gone by the time anyone asks, and only the
    log still ties its failure to the pod."""
    direct = [_about(line, facts) for line in lines]
    claims = {m.group("name") for line, hit in zip(lines, direct) if hit for m in _LOGGED_CLAIM.finditer(line)}
    claims |= _nominated(facts)
    return [line for line, hit in zip(lines, direct)
            if hit or any(m.group("name") in claims for m in _LOGGED_CLAIM.finditer(line))]


def _nominated(facts: Facts) -> set[str]:
    """NodeClaims Karpenter nominated the target's pods to, whether or not they still exist."""
    names: set[str] = set()
    for _, event in facts.all_events():
        if event.get("reason") == "Nominated":
            names.update(nominated_claims(event.get("message", "")))
    return names


# One page of recent events per kind: exactly one request each, whatever the cluster's size
# (bot.gateway ClusterGateway.recent_events); a page that cuts is a gap.
MAX_RECENT_EVENTS = 500


def _history_owner(facts: Facts) -> tuple[str, str, tuple[str, ...]] | None:
    """(workload key, name, replica types) whose naming the job's pods follow; None for a lone pod."""
    if facts.target.kind in OWNER_KINDS:
        key, name = facts.target.kind, facts.target.name
    elif facts.target.kind == "pod" and facts.pods:
        owner = pod_owner(facts.pods[0])
        if owner.key == "pod":
            return None
        key, name = owner.key, owner.name
    else:
        return None
    specs = WORKLOADS[key].replica_specs
    types = tuple((((facts.owner or {}).get("spec") or {}).get(specs) or {}) if specs else ()) or WORKLOADS[key].replica_types
    return key, name, types


def _gather_history(facts: Facts, *, gateway: Gateway) -> None:
    """Events of the job's pods that no longer exist, and of the nodes its pods ran on earlier: after a
    spot interruption or a forced expiry, the evicted pod, its node and its NodeClaim are gone and only
    their events remain (they outlive the objects by kube-apiserver's --event-ttl, 1 h by default).
    At most two requests: the namespace's recent Pod events, and (when the pods name earlier nodes)
    the recent Node events in ``default``, where events of cluster-scoped objects are recorded."""
    owner = _history_owner(facts)
    namespace = facts.target.namespace or (facts.pods[0].namespace if facts.pods else "")
    if owner is None or not namespace or "events" in facts.unread:
        return
    pattern = history_names.pod_name_pattern(owner[0], owner[1], replica_types=owner[2])
    if pattern is None:
        return
    listed = _read(facts, "events", lambda: gateway.recent_events(
        namespace=namespace, kind="Pod", max_items=MAX_RECENT_EVENTS), None)
    if listed is None:
        return
    _note_cap(facts, listed, what=f"recent pod events in {namespace}",
              then="pods of the job deleted earlier may be missing from the history")
    current = {p.name for p in facts.pods}
    for event in listed:
        kind, name = history_names.event_object(event)
        if kind == "Pod" and name not in current and pattern.match(name):
            facts.lost_pods.setdefault(name, []).append(event)
    events = [e for p in facts.pods for e in p.events] + [e for evs in facts.lost_pods.values() for e in evs]
    earlier = history_names.nodes_named(events) - set(facts.node_events)
    facts.past |= earlier | (history_names.claims_named(events) - set(facts.nodeclaims))
    if earlier:
        _recent_cluster_events(facts, gateway=gateway, kind="Node", names=earlier, into=facts.node_events)


def _recent_cluster_events(facts: Facts, *, gateway: Gateway, kind: str, names: set[str],
                           into: dict[str, list[dict]]) -> None:
    listed = _read(facts, "events", lambda: gateway.recent_events(
        namespace="default", kind=kind, max_items=MAX_RECENT_EVENTS), None)
    if listed is None:
        return
    _note_cap(facts, listed, what=f"recent {kind} events", then=f"events of earlier {kind}s of the job may be missing")
    for event in listed:
        got, name = history_names.event_object(event)
        if got == kind and name in names:
            into.setdefault(name, []).append(event)


def _gather_history_claims(facts: Facts, *, gateway: Gateway) -> None:
    """Events of NodeClaims the job used earlier (nominated in a pod's events, or named with an earlier
    node in the controller log: "initiating delete from interruption message" carries both names).
    One request, only when there are such NodeClaims."""
    if not facts.past:
        return
    claims = {n for n in facts.past if n not in facts.node_events}
    for line in facts.karpenter_log or []:
        if any(node in line for node in facts.past & set(facts.node_events)):
            claims.update(m.group("name") for m in _LOGGED_CLAIM.finditer(line))
    claims -= set(facts.nodeclaim_events) | set(facts.nodeclaims)
    facts.past |= claims
    if claims:
        _recent_cluster_events(facts, gateway=gateway, kind="NodeClaim", names=claims, into=facts.nodeclaim_events)


def _image_version(pod: dict) -> str | None:
    """The controller image's tag ("public.ecr.aws/karpenter/controller:1.5.0@sha256:..." -> "1.5.0")."""
    containers = (pod.get("spec") or {}).get("containers") or []
    chosen = next((c for c in containers if c.get("name") == "controller"), containers[0] if containers else {})
    image = str(chosen.get("image") or "").split("@")[0]
    tail = image.rsplit("/", 1)[-1]
    if ":" not in tail:
        return None
    return tail.rsplit(":", 1)[1].removeprefix("v") or None


def _about(line: str, facts: Facts) -> bool:
    """Whether a controller log line names this target's pods, nodes, NodeClaims or NodePools.

    Pod names repeat across namespaces, so a pod counts only with its namespace on the same line;
    NodePool names are short ("gpu"), so they must stand alone, not inside "nvidia.com/gpu".
    """
    for pod in facts.pods:
        if pod.name in line and pod.namespace in line:
            return True
    for name in (*facts.nodes, *facts.nodeclaims, *facts.past):
        if name and name in line:
            return True
    return any(_standalone(np["metadata"]["name"]).search(line) for np in _relevant_nodepools(facts))


def _standalone(name: str) -> re.Pattern:
    return re.compile(r"(?<![\w./-])" + re.escape(name) + r"(?![\w.-])")


def is_device_plugin(ds: dict) -> bool:
    meta = ds.get("metadata") or {}
    text = " ".join([meta.get("name", ""), *((meta.get("labels") or {}).values())]).lower()
    return "device-plugin" in text and ("nvidia" in text or "efa" in text or "neuron" in text)


def _gather_daemonsets(facts: Facts, *, gateway: Gateway) -> None:
    """Every DaemonSet (their pods are overhead on each new node), one list whatever the cluster's size."""
    listed = _read(facts, "daemonsets", lambda: gateway.daemonsets(max_items=300), Listed())
    _note_cap(facts, listed, what="DaemonSets", then="daemonset overhead on new nodes may be understated")
    facts.daemonsets = list(listed)
    facts.device_plugins = [d for d in facts.daemonsets if is_device_plugin(d)]


def device_plugin_selectors(device_plugins: list[dict]) -> list[str]:
    """Label selectors of the NVIDIA device plugin's pods: the selectors of the DaemonSets found
    (whoever installed them), else the ones each known installer uses."""
    found = []
    for ds in device_plugins:
        meta = ds.get("metadata") or {}
        if "mps-control" in meta.get("name", ""):  # the GPU Operator's MPS daemon, not the plugin
            continue
        if "nvidia" not in (meta.get("name", "") + " ".join((meta.get("labels") or {}).values())).lower():
            continue
        match = (((ds.get("spec") or {}).get("selector") or {}).get("matchLabels")) or {}
        if match:
            found.append(",".join(f"{k}={v}" for k, v in sorted(match.items())))
    return list(dict.fromkeys(found)) or list(DEVICE_PLUGIN_SELECTORS)


def _gather_device_plugins(facts: Facts, *, gateway: Gateway) -> None:
    suspect = set()
    for name, node in facts.nodes.items():
        status = (node or {}).get("status") or {}
        cap = (status.get("capacity") or {}).get("nvidia.com/gpu")
        alloc = (status.get("allocatable") or {}).get("nvidia.com/gpu")
        if cap is not None and alloc is not None and str(cap) != str(alloc):
            suspect.add(name)
    for pod in facts.pods:
        if any(e.get("reason") == "UnexpectedAdmissionError" for e in pod.events) and pod.node_name:
            suspect.add(pod.node_name)
    selectors = device_plugin_selectors(facts.device_plugins)
    for name in sorted(suspect)[:4]:
        if facts.nodes.get(name) is None:
            continue
        entries = []
        plugins: list[dict] = []
        for selector in selectors:  # one list per selector; the first that finds the node's plugin wins
            plugins = _read(facts, "pods", lambda: gateway.pods_on_node(name, label_selector=selector, max_items=5),
                            Listed())
            if plugins:
                break
        for plugin in plugins:
            meta = plugin["metadata"]
            containers = [c["name"] for c in (plugin.get("spec") or {}).get("containers") or []]
            text = _read(facts, "pod logs", lambda: gateway.pod_log(
                meta["namespace"], meta["name"], container=containers[0] if containers else None, previous=False), None)
            entries.append((f"pod/{meta['namespace']}/{meta['name']}", text or ""))
        facts.device_plugin_logs[name] = entries


def _claims(pod: PodFacts) -> list[str]:
    """PVC names a pod's volumes use: ``persistentVolumeClaim.claimName``, and generic ephemeral volumes,
    whose PVC is named "<pod>-<volume>" (kubernetes/kubernetes pkg/volume/util/ephemeral: VolumeClaimName)."""
    names = []
    for volume in (pod.pod.get("spec") or {}).get("volumes") or []:
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if claim:
            names.append(claim)
        elif volume.get("ephemeral"):
            names.append(f"{pod.name}-{volume.get('name', '')}")
    return names


MAX_CLAIM_EVENTS = 20  # per unbound claim, of at most Limits.max_claims claims


def _gather_volumes(facts: Facts, *, gateway: Gateway, limits: Limits) -> None:
    """The PVCs of pending pods and the PVs bound to them, by name: a PV's node affinity pins a pod to
    a zone that the NodePool may not offer. An unbound claim's events say why it is not bound (one
    request per claim, capped like the claims)."""
    wanted = list(dict.fromkeys((p.namespace, c) for p in facts.pending_pods() for c in _claims(p)))
    if len(wanted) > limits.max_claims:
        facts.gaps.append(f"Volumes: read {limits.max_claims} of {len(wanted)} PersistentVolumeClaims of the pending pods.")
    for ns, name in wanted[: limits.max_claims]:
        pvc = _read(facts, "volumes", lambda: gateway.get_pvc(ns, name), None)
        if pvc is None:
            continue
        facts.volumes[f"pvc/{ns}/{name}"] = pvc
        if (pvc.get("status") or {}).get("phase") != "Bound":  # a bound claim's provisioning is over
            facts.volume_events[f"pvc/{ns}/{name}"] = _read(facts, "events", lambda: gateway.events_for(
                kind="PersistentVolumeClaim", name=name, namespace=ns, max_items=MAX_CLAIM_EVENTS), [])
        bound = (pvc.get("spec") or {}).get("volumeName")
        if bound and f"pv/{bound}" not in facts.volumes:
            pv = _read(facts, "volumes", lambda: gateway.get_pv(bound), None)
            if pv is not None:
                facts.volumes[f"pv/{bound}"] = pv


def selector_string(selector: dict) -> str:
    """A LabelSelector as the label-selector query string the API takes (and the key of peer_pods).

    kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go
    (LabelSelectorAsSelector): matchLabels are equality terms; In / NotIn / Exists / DoesNotExist are
    "k in (a,b)", "k notin (a,b)", "k", "!k". All terms must match.
    """
    terms: list[tuple[str, str]] = [(k, f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        key, op = expr.get("key", ""), expr.get("operator", "")
        values = ",".join(sorted(str(v) for v in expr.get("values") or []))
        text = {"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})", "Exists": key,
                "DoesNotExist": f"!{key}"}.get(op, "")
        if text:
            terms.append((key, text))
    # Sorted by key, as LabelSelectorAsSelector sorts its requirements: one selector, one key.
    return ",".join(text for _, text in sorted(terms))


def peer_key(namespace: str, selector: dict) -> str:
    """The key of ``Facts.peer_pods`` for a selector of a pod in ``namespace``."""
    return f"{namespace}|{selector_string(selector)}"


def _peer_selectors(pod: PodFacts) -> list[dict]:
    """Label selectors whose matching pods decide where this pod may go: topology spread constraints,
    required pod anti-affinity, and required pod affinity (a self-affine group). A null selector matches
    no pod and needs no read."""
    spec = pod.pod.get("spec") or {}
    found = [c.get("labelSelector") for c in spec.get("topologySpreadConstraints") or []]
    affinity = spec.get("affinity") or {}
    for kind in ("podAntiAffinity", "podAffinity"):
        terms = (affinity.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
        found.extend(t.get("labelSelector") for t in terms)
    return [s for s in found if s is not None]


def _gather_peer_pods(facts: Facts, *, gateway: Gateway, limits: Limits) -> None:
    wanted: dict[str, tuple[str, str]] = {}
    for pod in facts.pending_pods():
        for selector in _peer_selectors(pod):
            wanted.setdefault(peer_key(pod.namespace, selector), (pod.namespace, selector_string(selector)))
    keys = list(wanted)
    if len(keys) > limits.max_selectors:
        facts.gaps.append(f"Pods matching spread and affinity selectors: read for {limits.max_selectors} of "
                          f"{len(keys)} selectors.")
    for key in keys[: limits.max_selectors]:
        ns, selector = wanted[key]
        listed = _read(facts, "peer pods", lambda: gateway.pods_by_label(ns, selector, max_items=limits.max_peers), None)
        if listed is None:
            continue
        _note_cap(facts, listed, what=f"pods matching {selector or 'every pod'} in {ns}",
                  then="spread and affinity counts may be understated")
        facts.peer_pods[key] = list(listed)
    _gather_peer_nodes(facts, gateway=gateway, limits=limits)


def _gather_peer_nodes(facts: Facts, *, gateway: Gateway, limits: Limits) -> None:
    """The nodes peer pods run on, for their zone and hostname: a spread or anti-affinity verdict
    counts matching pods per domain. Read by name, at most ``max_peer_nodes``; kept apart from
    ``facts.nodes`` so node health analyzers do not judge other jobs' nodes."""
    names = sorted({(p.get("spec") or {}).get("nodeName") for pods in facts.peer_pods.values() for p in pods}
                   - {None, ""} - set(facts.nodes))
    if len(names) > limits.max_peer_nodes:
        facts.gaps.append(f"Nodes of pods matching spread and affinity selectors: read {limits.max_peer_nodes} of "
                          f"{len(names)}; spread counts per zone may be understated.")
    for name in names[: limits.max_peer_nodes]:
        node = _read(facts, "nodes", lambda n=name: gateway.get_node(n), None)
        if node is not None:
            facts.peer_nodes[name] = node
