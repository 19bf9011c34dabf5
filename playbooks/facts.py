"""What the engine gathered about one target, handed to every analyzer. Plain data, no I/O."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from playbooks.model import Target


class FactsUnavailable(Exception):
    """A source of facts (EC2, say) cannot answer; the message becomes a gap in the diagnosis."""


@dataclass
class PodFacts:
    pod: dict
    events: list[dict] = field(default_factory=list)
    # (container, previous) -> log tail
    logs: dict[tuple[str, bool], str] = field(default_factory=dict)
    # The workload that owns the pod when gather followed a chain the pod cannot show itself (a
    # TrainJob owns the JobSet whose Job owns the pod): a playbooks.analyzers.owners.Owner; None:
    # read it from the pod's labels and ownerReferences.
    owner: Any = None

    @property
    def name(self) -> str:
        return self.pod["metadata"]["name"]

    @property
    def namespace(self) -> str:
        return self.pod["metadata"].get("namespace", "")

    @property
    def ref(self) -> str:
        return f"pod/{self.namespace}/{self.name}"

    @property
    def phase(self) -> str:
        return (self.pod.get("status") or {}).get("phase", "")

    @property
    def node_name(self) -> str | None:
        return (self.pod.get("spec") or {}).get("nodeName")

    @property
    def annotations(self) -> dict:
        return self.pod["metadata"].get("annotations") or {}

    @property
    def labels(self) -> dict:
        return self.pod["metadata"].get("labels") or {}

    def is_pending_unscheduled(self) -> bool:
        return self.phase == "Pending" and not self.node_name

    def container_statuses(self) -> list[dict]:
        status = self.pod.get("status") or {}
        return list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or [])

    def count(self, resource: str) -> int:
        """Whole units of an extended resource the pod asks for (limits count where requests are unset)."""
        total = 0
        for container in (self.pod.get("spec") or {}).get("containers") or []:
            res = container.get("resources") or {}
            value = (res.get("requests") or {}).get(resource, (res.get("limits") or {}).get(resource, 0))
            try:
                total += int(float(str(value)))
            except ValueError:
                continue
        return total


@dataclass
class Ec2Facts:
    """EC2 answers, keyed by NodePool name; empty with ``unavailable`` set when EC2 could not be asked."""

    unavailable: str | None = None
    # nodepool -> {instance type -> InstanceTypeInfo}
    candidates: dict[str, dict] = field(default_factory=dict)
    # instance type -> zones where it is offered
    zones: dict[str, frozenset[str]] = field(default_factory=dict)
    # instance type -> zone -> capacity types offered there ("on-demand", "spot", "reserved");
    # empty when capacity types could not be checked
    offerings: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)
    region: str | None = None
    # instance type -> its facts, for the types of the nodes the target pods run on (their network limits)
    node_types: dict[str, Any] = field(default_factory=dict)
    # where instance-type facts came from: "ec2" or the embedded catalogue (when EC2 cannot be asked)
    source: str = "ec2"


@dataclass
class KarpenterInfo:
    """The Karpenter controller as found in the cluster (None fields: not known)."""

    namespace: str | None = None
    version: str | None = None  # image tag, e.g. "1.3.2"
    leader: str | None = None  # pod holding the leader-election Lease
    replicas: int = 0
    # the controller's VM_MEMORY_OVERHEAD_PERCENT env (Helm settings.vmMemoryOverheadPercent); None: unset (0.075)
    vm_memory_overhead_percent: str | None = None
    # --min-values-policy / MIN_VALUES_POLICY (v1.6+): "Strict" or "BestEffort" (karpenter/controller_settings.py)
    min_values_policy: str = "Strict"


@dataclass
class Facts:
    target: Target
    cluster: str
    owner: dict | None = None  # the workload the user named: PyTorchJob, TFJob, MPIJob, JobSet, TrainJob or Job
    owner_kind: str | None = None  # its key: "pytorchjob", "tfjob", "mpijob", "jobset", "trainjob", "job"
    owner_events: list[dict] = field(default_factory=list)
    pods: list[PodFacts] = field(default_factory=list)  # the target pod first when the target is a pod
    nodes: dict[str, dict | None] = field(default_factory=dict)  # None: the node is gone
    node_events: dict[str, list[dict]] = field(default_factory=dict)
    # Events of the NodeClaims the pods were nominated to: Karpenter reports a failed launch there
    # (InsufficientCapacityError, ...) and may delete the claim; its events outlive it.
    nodeclaim_events: dict[str, list[dict]] = field(default_factory=dict)
    nodepools: dict[str, dict] = field(default_factory=dict)
    nodeclaims: dict[str, dict] = field(default_factory=dict)
    # Pods of the job already deleted (evicted with an interrupted or disrupted node), found by the
    # owner's naming in the namespace's recent events, which outlive them: pod name -> its events.
    # Their nodes' and NodeClaims' events join node_events / nodeclaim_events; ``past`` names the nodes
    # and NodeClaims known only from events (the job's pods ran on or were nominated to them earlier).
    lost_pods: dict[str, list[dict]] = field(default_factory=dict)
    past: set[str] = field(default_factory=set)
    nodeclasses: dict[str, dict] = field(default_factory=dict)  # "group/name" -> object
    karpenter_log: list[str] | None = None  # lines about this target; None: no controller in the cluster
    karpenter_source: str = "karpenter controller log"
    device_plugins: list[dict] = field(default_factory=list)
    daemonsets: list[dict] = field(default_factory=list)  # every DaemonSet: overhead on new nodes
    # Namespaces whose events about nodes speak for the node whatever runs there (the policy's
    # trusted_node_reporters); otherwise a speaker counts outside "default" only where its DaemonSet runs
    trusted_node_reporters: frozenset[str] = frozenset()
    # "pvc/<ns>/<name>" and "pv/<name>" for the volumes of pending pods (zone topology)
    volumes: dict[str, dict] = field(default_factory=dict)
    # "pvc/<ns>/<name>" -> the claim's events (ProvisioningFailed, FailedBinding, ExternalProvisioning)
    volume_events: dict[str, list[dict]] = field(default_factory=dict)
    # "<namespace>|<label selector>" -> pods matching a pending pod's spread / anti-affinity selector
    peer_pods: dict[str, list[dict]] = field(default_factory=dict)
    peer_nodes: dict[str, dict] = field(default_factory=dict)  # nodes of peer pods (zone, hostname)
    karpenter: KarpenterInfo = field(default_factory=KarpenterInfo)
    # API group -> version this cluster serves it at ("karpenter.sh": "v1beta1"); absent: not served
    api_versions: dict[str, str] = field(default_factory=dict)
    # node name -> [(device plugin pod ref, log tail)]
    device_plugin_logs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    ec2: Ec2Facts = field(default_factory=Ec2Facts)
    # The running pods' GPU utilisation and memory (playbooks.gpu_series.GpuUsage); None: not read
    # (no metrics source configured, none answered, or no series for these pods).
    gpu_usage: Any = None
    gaps: list[str] = field(default_factory=list)
    # Reads that failed or were not possible ("nodepools", "nodeclaims", "pod logs", "events",
    # "daemonsets", "karpenter log", ...): an analyzer never concludes from the absence of what it
    # could not read (a NodePool not read is not a NodePool that does not exist).
    unread: set[str] = field(default_factory=set)
    # Derived data computed once per diagnosis by analyzers (e.g. scanned signals).
    cache: dict = field(default_factory=dict, repr=False)

    @property
    def target_pod(self) -> PodFacts | None:
        if self.target.kind == "pod" and self.pods:
            return self.pods[0]
        return None

    def is_target_pod(self, pod: PodFacts) -> bool:
        """True for the pod the user named, or every pod of the job they named."""
        if self.target.kind == "pod":
            return pod.name == self.target.name
        return True

    def pending_pods(self) -> list[PodFacts]:
        return [p for p in self.pods if p.is_pending_unscheduled()]

    def node_of(self, pod: PodFacts) -> dict | None:
        return self.nodes.get(pod.node_name or "")

    def nodepool_of_node(self, node_name: str) -> dict | None:
        node = self.nodes.get(node_name)
        name = ((node or {}).get("metadata", {}).get("labels") or {}).get("karpenter.sh/nodepool")
        return self.nodepools.get(name or "")

    def all_events(self) -> Iterator[tuple[str, dict]]:
        """(object ref, event) for every event gathered."""
        kind = self.owner_kind or ""
        for event in self.owner_events:
            yield f"{kind}/{(self.owner or {}).get('metadata', {}).get('namespace', '')}/{self.target.name}", event
        for pod in self.pods:
            for event in pod.events:
                yield pod.ref, event
        for node, events in self.node_events.items():
            for event in events:
                yield f"node/{node}", event
        for claim, events in self.nodeclaim_events.items():
            for event in events:
                yield f"nodeclaim/{claim}", event
