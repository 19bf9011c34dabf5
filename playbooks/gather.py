"""Gathering facts about one target through the cluster gateway and the EC2 catalogue.

The cost is bounded by the job's size (capped by ``max_pods``), never by the cluster's: objects are
read by name, pods by the job's label, events by ``involvedObject``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Protocol

from playbooks.facts import Facts, PodFacts
from playbooks.model import Target
from playbooks.gather_ec2 import Catalog, gather_ec2
from playbooks.requirements import is_auto_mode

_NOMINATED = re.compile(r"nodeclaim/(?P<name>[a-z0-9][-a-z0-9.]*)")
KUBEFLOW_JOB_LABEL = "training.kubeflow.org/job-name"
BATCH_JOB_LABELS = ("batch.kubernetes.io/job-name", "job-name")
DEVICE_PLUGIN_SELECTOR = "app.kubernetes.io/name=nvidia-device-plugin"


class Gateway(Protocol):  # what the engine needs from bot.gateway.ClusterGateway
    name: str

    def get_pod(self, namespace: str, name: str) -> dict | None: ...
    def get_job(self, namespace: str, name: str) -> dict | None: ...
    def get_pytorchjob(self, namespace: str, name: str) -> dict | None: ...
    def get_node(self, name: str) -> dict | None: ...
    def get_nodepool(self, name: str) -> dict | None: ...
    def get_nodeclaim(self, name: str) -> dict | None: ...
    def get_nodeclass(self, group: str, name: str) -> dict | None: ...
    def list_nodepools(self) -> list[dict]: ...
    def job_pods(self, namespace: str, job_name: str, *, max_items: int) -> list[dict]: ...
    def pods_on_node(self, node_name: str, *, label_selector: str | None = None, max_items: int = 200) -> list[dict]: ...
    def events_for(self, *, kind: str, name: str, namespace: str | None, max_items: int = 200) -> list[dict]: ...
    def pod_log(self, namespace: str, name: str, *, container: str | None, previous: bool) -> str | None: ...
    def karpenter_log(self) -> tuple[str | None, str | None]: ...
    def device_plugin_daemonsets(self) -> list[dict]: ...


@dataclass(frozen=True)
class Limits:
    max_pods: int = 16
    max_containers: int = 2


def gather(target: Target, *, owner: dict | None, pod: dict | None, node: dict | None, nodepool: dict | None,
           gateway: Gateway, catalog: Catalog | None, limits: Limits = Limits(),
           progress: Callable[[str], None] | None = None) -> Facts:
    """Collect facts for an already-resolved target (the engine fetched the named object)."""
    step = progress or (lambda _: None)
    facts = Facts(target=target, cluster=gateway.name)
    step("reading pods and events")
    pods: list[dict] = []
    if target.kind in ("pytorchjob", "job") and owner is not None:
        facts.owner, facts.owner_kind = owner, target.kind
        kind = "PyTorchJob" if target.kind == "pytorchjob" else "Job"
        facts.owner_events = gateway.events_for(kind=kind, name=target.name, namespace=target.namespace)
        pods = gateway.job_pods(target.namespace or "", target.name, max_items=limits.max_pods * 4)
    elif target.kind == "pod" and pod is not None:
        pods = [pod] + _siblings(pod, gateway=gateway, limits=limits)
    elif target.kind == "node" and node is not None:
        facts.nodes[target.name] = node
        pods = [p for p in gateway.pods_on_node(target.name, max_items=limits.max_pods * 4) if _uses_gpu(p)]
    elif target.kind == "nodepool" and nodepool is not None:
        facts.nodepools[target.name] = nodepool

    for raw in _pick(pods, limits.max_pods):
        facts.pods.append(_pod_facts(raw, gateway=gateway, limits=limits))

    step("reading nodes and NodePools")
    _gather_nodes(facts, gateway=gateway)
    for np in gateway.list_nodepools():
        facts.nodepools[np["metadata"]["name"]] = np
    _gather_nodeclaims(facts, gateway=gateway)
    _gather_nodeclasses(facts, gateway=gateway)
    step("reading the Karpenter controller log")
    _gather_karpenter(facts, gateway=gateway)
    _gather_device_plugins(facts, gateway=gateway)
    if facts.pending_pods() or target.kind == "nodepool":
        step("checking instance types and zone offerings with EC2")
        facts.ec2 = gather_ec2(facts, catalog=catalog)
    if facts.ec2.unavailable:
        facts.gaps.append(
            f"EC2 facts (GPU count, EFA support, zone offerings per instance type) were not checked: {facts.ec2.unavailable}."
        )
    return facts


def _siblings(pod: dict, *, gateway: Gateway, limits: Limits) -> list[dict]:
    """Other pods of the same job: a peer's death often explains this pod's failure."""
    labels = pod["metadata"].get("labels") or {}
    ns = pod["metadata"].get("namespace", "")
    for label in (KUBEFLOW_JOB_LABEL, *BATCH_JOB_LABELS):
        if labels.get(label):
            others = gateway.job_pods(ns, labels[label], max_items=limits.max_pods * 4)
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


def _pod_facts(pod: dict, *, gateway: Gateway, limits: Limits) -> PodFacts:
    meta = pod["metadata"]
    facts = PodFacts(pod=pod, events=gateway.events_for(kind="Pod", name=meta["name"], namespace=meta.get("namespace")))
    statuses = {c.get("name"): c for c in (pod.get("status") or {}).get("containerStatuses") or []}
    containers = [c["name"] for c in (pod.get("spec") or {}).get("containers") or []][: limits.max_containers]
    for name in containers:
        status = statuses.get(name)
        if status is None:
            continue  # never started: no log to read
        started = bool(status.get("state", {}).get("running") or status.get("state", {}).get("terminated"))
        if started:
            text = gateway.pod_log(meta.get("namespace", ""), meta["name"], container=name, previous=False)
            if text:
                facts.logs[(name, False)] = text
        if status.get("restartCount") or status.get("lastState", {}).get("terminated"):
            text = gateway.pod_log(meta.get("namespace", ""), meta["name"], container=name, previous=True)
            if text:
                facts.logs[(name, True)] = text
    return facts


def _gather_nodes(facts: Facts, *, gateway: Gateway) -> None:
    for pod in facts.pods:
        name = pod.node_name
        if name and name not in facts.nodes:
            facts.nodes[name] = gateway.get_node(name)
    for name in list(facts.nodes):
        facts.node_events[name] = gateway.events_for(kind="Node", name=name, namespace=None)


def _gather_nodeclaims(facts: Facts, *, gateway: Gateway) -> None:
    names: set[str] = set()
    for _, event in facts.all_events():
        if event.get("reason") == "Nominated":
            names.update(m.group("name") for m in _NOMINATED.finditer(event.get("message", "")))
    for node in facts.nodes.values():
        for ref in (node or {}).get("metadata", {}).get("ownerReferences") or []:
            if ref.get("kind") == "NodeClaim":
                names.add(ref["name"])
    for name in sorted(names)[:16]:
        claim = gateway.get_nodeclaim(name)
        if claim is not None:
            facts.nodeclaims[name] = claim


def _gather_nodeclasses(facts: Facts, *, gateway: Gateway) -> None:
    wanted = {(_ref(np).get("group", ""), _ref(np).get("name", "")) for np in _relevant_nodepools(facts)}
    for group, name in sorted(wanted):
        if group and name:
            obj = gateway.get_nodeclass(group, name)
            if obj is not None:
                facts.nodeclasses[f"{group}/{name}"] = obj


def _ref(nodepool: dict) -> dict:
    return ((nodepool.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}


def _relevant_nodepools(facts: Facts) -> list[dict]:
    """NodePools the target's pods run on or explicitly ask for."""
    names = set()
    for pod in facts.pods:
        selector = ((pod.pod.get("spec") or {}).get("nodeSelector") or {}).get("karpenter.sh/nodepool")
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
    text, source = gateway.karpenter_log()
    if text is None:
        relevant = _relevant_nodepools(facts) or list(facts.nodepools.values())
        if relevant and all(is_auto_mode(np) for np in relevant):
            facts.gaps.append("Karpenter controller logs: EKS Auto Mode runs Karpenter outside the cluster; events were used instead.")
        else:
            facts.gaps.append("Karpenter controller logs were not found (is Karpenter installed in the configured namespace?).")
        return
    facts.karpenter_source = f"karpenter log {source}"
    facts.karpenter_log = [line for line in text.splitlines() if _about(line, facts)]


def _about(line: str, facts: Facts) -> bool:
    """Whether a controller log line names this target's pods, nodes, NodeClaims or NodePools.

    Pod names repeat across namespaces, so a pod counts only with its namespace on the same line;
    NodePool names are short ("gpu"), so they must stand alone, not inside "nvidia.com/gpu".
    """
    for pod in facts.pods:
        if pod.name in line and pod.namespace in line:
            return True
    for name in (*facts.nodes, *facts.nodeclaims):
        if name and name in line:
            return True
    return any(_standalone(np["metadata"]["name"]).search(line) for np in _relevant_nodepools(facts))


def _standalone(name: str) -> re.Pattern:
    return re.compile(r"(?<![\w./-])" + re.escape(name) + r"(?![\w.-])")


def _gather_device_plugins(facts: Facts, *, gateway: Gateway) -> None:
    facts.device_plugins = gateway.device_plugin_daemonsets()
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
    for name in sorted(suspect)[:4]:
        if facts.nodes.get(name) is None:
            continue
        entries = []
        for plugin in gateway.pods_on_node(name, label_selector=DEVICE_PLUGIN_SELECTOR, max_items=5):
            meta = plugin["metadata"]
            containers = [c["name"] for c in (plugin.get("spec") or {}).get("containers") or []]
            text = gateway.pod_log(meta["namespace"], meta["name"], container=containers[0] if containers else None, previous=False)
            entries.append((f"pod/{meta['namespace']}/{meta['name']}", text or ""))
        facts.device_plugin_logs[name] = entries
