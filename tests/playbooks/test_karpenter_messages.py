"""Karpenter's and kube-scheduler's messages as real clusters print them, version by version.

Each row: the versions that print the message, the upstream file that writes it, the line as it reaches
us (event, condition, log), the code it must give and the fields it must carry. Texts are from
kubernetes-sigs/karpenter at the tags named (v0.27.0 ... v1.14.0), aws/karpenter-provider-aws,
kubernetes/kubernetes pkg/scheduler, kubernetes-sigs/kueue and kubeflow/training-operator.
"""
from __future__ import annotations

import pytest

from playbooks.signatures import scan_line

KS = "kubernetes-sigs/karpenter"
SCHED = f"{KS} pkg/controllers/provisioning/scheduling/scheduler.go"
NODECLAIM = f"{KS} pkg/controllers/provisioning/scheduling/nodeclaim.go"
K8S = "kubernetes/kubernetes pkg/scheduler/framework/plugins"

# (versions, upstream file, line, code, fields that must be present with these values)
MESSAGES: list[tuple[str, str, str, str, dict[str, str]]] = [
    # --- NodePool limits: any resource, the NodePool named in every spelling ---
    ("v0.5-v0.30", SCHED,
     'Could not schedule pod, incompatible with provisioner "gpu", all available instance types exceed provisioner limits',
     "karpenter.nodepool_limit_reached", {"nodepool": "gpu"}),
    ("v0.5-v0.37", f"{KS} pkg/utils/resources (limits ExceededBy)",
     'launching machine, cpu resource usage of 128 exceeds limit of 64 for provisioner "default"',
     "karpenter.nodepool_limit_reached", {"resource": "cpu", "usage": "128", "limit": "64", "nodepool": "default"}),
    ("v0.31", SCHED,
     'Could not schedule pod, incompatible with provisioner "default", all available instance types exceed limits for provisioner: "default"',
     "karpenter.nodepool_limit_reached", {"nodepool": "default"}),
    ("v0.32-v1.2", SCHED,
     'Failed to schedule pod, incompatible with nodepool "cpu-pool", daemonset overhead={"cpu":"150m","memory":"120Mi","pods":"3"}, all available instance types exceed limits for nodepool: "cpu-pool"',
     "karpenter.nodepool_limit_reached", {"nodepool": "cpu-pool"}),
    ("v1.3-v1.4", SCHED,
     'Failed to schedule pod, incompatible with nodepool "train", daemonset overhead={"cpu":"150m"}, all available instance types exceed limits for nodepool "train"',
     "karpenter.nodepool_limit_reached", {"nodepool": "train"}),
    ("v1.5-v1.14", SCHED,
     "Warning  FailedScheduling  12s  karpenter  Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=memory-capped)",
     "karpenter.nodepool_limit_reached", {"nodepool": "memory-capped"}),
    ("v1.5-v1.14", SCHED,
     "Failed to schedule pod, node limits have been exhausted for nodepool (NodePool=gpu)",
     "karpenter.nodepool_limit_reached", {"nodepool": "gpu", "resource": "nodes"}),
    # --- the "no instance type" family (InstanceTypeFilterError) ---
    ("v0.5-v0.31", NODECLAIM,
     'Could not schedule pod, incompatible with provisioner "default", no instance type satisfied resources {"cpu":"1","nvidia.com/gpu":"16"} and requirements karpenter.k8s.aws/instance-family In [p4d] (no instance type has enough resources)',
     "karpenter.no_instance_type", {"nodepool": "default", "gpus": "16"}),
    ("v0.32-v1.2", NODECLAIM,
     'Failed to schedule pod, incompatible with nodepool "gpu", daemonset overhead={"cpu":"310m"}, no instance type which had enough resources and the required offering met the scheduling requirements',
     "karpenter.no_instance_type", {"nodepool": "gpu"}),
    ("v1.3-v1.4", NODECLAIM,
     'Failed to schedule pod, incompatible with nodepool "gpu", daemonset overhead={"cpu":"310m"}, no instance type which had enough resources and the required offering met the scheduling requirements, requirements=karpenter.sh/nodepool In [gpu], karpenter.k8s.aws/instance-family In [g6e], resources={"cpu":"8310m","memory":"64Gi","nvidia.com/gpu":"4","pods":"7"}',
     "karpenter.no_instance_type", {"nodepool": "gpu", "gpus": "4"}),
    ("v1.5-v1.14", NODECLAIM,
     'Failed to schedule pod, no instance type has enough resources, requirements=karpenter.k8s.aws/instance-family In [g5], karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [g5-pool], resources={"cpu":"200","memory":"64Gi","pods":"5"}',
     "karpenter.no_instance_type", {"nodepool": "g5-pool", "capacity_type": "on-demand"}),
    ("v1.5-v1.14", NODECLAIM,
     'Failed to schedule pod, no instance type has enough resources, requirements=karpenter.sh/nodepool In [cpu], resources={"cpu":"4000k","pods":"1"} (CPU request >= 1 Million, m vs M typo?)',
     "karpenter.no_instance_type", {"nodepool": "cpu", "typo": "CPU request >= 1 Million, m vs M typo?"}),
    ("v0.32-v1.14", NODECLAIM,
     "Failed to schedule pod, no instance type met the scheduling requirements or had enough resources or had a required offering, requirements=karpenter.sh/nodepool In [p5], node.kubernetes.io/instance-type In [p5.48xlarge], resources={\"nvidia.com/gpu\":\"16\"}",
     "karpenter.no_instance_type", {"nodepool": "p5", "gpus": "16"}),
    ("v0.32-v1.14", NODECLAIM,
     "Failed to schedule pod, no instance type had enough resources or had a required offering, requirements=karpenter.sh/nodepool In [g6], resources={\"memory\":\"900Gi\"}",
     "karpenter.no_instance_type", {"nodepool": "g6"}),
    ("v0.32-v1.14", NODECLAIM,
     "Failed to schedule pod, no instance type met all requirements, requirements=karpenter.sh/nodepool In [trn1], karpenter.k8s.aws/instance-family In [trn1 p5]",
     "karpenter.no_instance_type", {"nodepool": "trn1"}),
    # offering = zone AND capacity type
    ("v0.32-v1.2", NODECLAIM,
     'Failed to schedule pod, incompatible with nodepool "spot-gpu", daemonset overhead={}, no instance type has the required offering',
     "karpenter.offering_unavailable_in_zone", {"nodepool": "spot-gpu"}),
    ("v1.5-v1.14", NODECLAIM,
     "Failed to schedule pod, no instance type has the required offering, requirements=karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [spot-only], topology.kubernetes.io/zone In [us-west-2a us-west-2b], resources={\"nvidia.com/gpu\":\"8\"}",
     "karpenter.offering_unavailable_in_zone", {"nodepool": "spot-only", "capacity_type": "spot", "zones": "us-west-2a us-west-2b"}),
    ("v0.32-v1.14", NODECLAIM,
     "Failed to schedule pod, no instance type which met the scheduling requirements and had enough resources, had a required offering, requirements=karpenter.sh/nodepool In [reserved], karpenter.sh/capacity-type In [reserved]",
     "karpenter.offering_unavailable_in_zone", {"nodepool": "reserved", "capacity_type": "reserved"}),
    # minValues, with curly apostrophes
    ("v0.37-v1.4", SCHED,
     'Failed to schedule pod, pod didn’t schedule because NodePool "gpu" couldn’t meet minValues requirements, minValues requirement is not met for "karpenter.k8s.aws/instance-family"',
     "karpenter.no_instance_type", {"nodepool": "gpu", "label": "karpenter.k8s.aws/instance-family"}),
    ("v1.8-v1.14", SCHED,
     "Failed to schedule pod, pod didn’t schedule because NodePool couldn’t meet minValues requirements, minValues requirement is not met for label(s) (label(s)=[karpenter.k8s.aws/instance-family]) (NodePool=diverse)",
     "karpenter.no_instance_type", {"nodepool": "diverse", "label": "karpenter.k8s.aws/instance-family"}),
    ("v1.3-v1.14", f"{KS} pkg/controllers/provisioning/scheduling/events.go",
     "  Warning  NoCompatibleInstanceTypes  3m  karpenter  NodePool requirements filtered out all compatible available instance types",
     "karpenter.no_instance_type", {}),
    ("v1.8-v1.14", f"{KS} pkg/controllers/provisioning/provisioner.go",
     '{"level":"INFO","time":"2026-01-01T12:00:00.000Z","logger":"controller","message":"skipping, nodepool requirements filtered out all instance types","NodePool":{"name":"h100"},"minValuesIncompatibleErr":true}',
     "karpenter.no_instance_type", {"nodepool": "h100"}),
    # requirements, labels, taints, topology, volumes, ports
    ("v1.5-v1.14", f"{KS} pkg/scheduling/requirements.go",
     "Failed to schedule pod, incompatible requirements, key karpenter.k8s.aws/instance-gpu-name, karpenter.k8s.aws/instance-gpu-name In [h100] not in karpenter.k8s.aws/instance-gpu-name In [a10g l4]",
     "scheduling.node_selector_mismatch", {"key": "karpenter.k8s.aws/instance-gpu-name"}),
    ("v1.0-v1.14", f"{KS} pkg/scheduling/requirements.go",
     'Failed to schedule pod, incompatible with nodepool "auto", daemonset overhead={}, incompatible requirements, label "karpenter.k8s.aws/instance-gpu-name" does not have known values (typo of "eks.amazonaws.com/instance-gpu-name"?)',
     "scheduling.node_selector_mismatch", {"nodepool": "auto", "label": "karpenter.k8s.aws/instance-gpu-name", "suggestion": "eks.amazonaws.com/instance-gpu-name"}),
    ("v1.5-v1.14", f"{KS} pkg/scheduling/taints.go",
     "Failed to schedule pod, did not tolerate taint (taint=nvidia.com/gpu=true:NoSchedule)",
     "scheduling.untolerated_taint", {"key": "nvidia.com/gpu", "effect": "NoSchedule"}),
    ("v0.32-v1.14", f"{KS} pkg/controllers/provisioning/scheduling/topology.go",
     "Failed to schedule pod, unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone (counts = map[us-east-1a:2], podDomains = topology.kubernetes.io/zone Exists, nodeDomains = topology.kubernetes.io/zone In [us-east-1a]",
     "scheduling.topology_spread", {"key": "topology.kubernetes.io/zone"}),
    ("v1.5-v1.14", f"{KS} pkg/scheduling/hostportusage.go",
     "Failed to schedule pod, pod hostport conflicts with existing hostport configuration (pod-hostport-ip=0.0.0.0, pod-hostport-port=29500, pod-hostport-protocol=TCP)",
     "scheduling.pod_affinity_unsatisfiable", {"port": "29500"}),
    ("v1.0-v1.14", NODECLAIM,
     "Failed to schedule pod, incompatible volume requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1a] not in topology.kubernetes.io/zone In [us-east-1b]",
     "scheduling.volume_zone_conflict", {}),
    # --- a node on its way ---
    ("v0.32-v1.14", f"{KS} pkg/controllers/provisioning/scheduling/events.go",
     "Normal  Nominated  20s  karpenter  Pod should schedule on: nodeclaim/gpu-7h2kq, node/ip-10-0-12-7.ec2.internal",
     "karpenter.provisioning", {"nodeclaim": "gpu-7h2kq", "node": "ip-10-0-12-7.ec2.internal"}),
    ("v0.28-v0.31", f"{KS} pkg/controllers/provisioning/scheduling/events.go",
     "Normal  Nominated  20s  karpenter  Pod should schedule on: machine/default-x2k9v",
     "karpenter.provisioning", {"nodeclaim": "default-x2k9v"}),
    ("v1.0-v1.14", f"{KS} pkg/controllers/nodeclaim/lifecycle/launch.go",
     '{"level":"INFO","time":"2026-01-01T12:00:05.000Z","logger":"controller","message":"launched nodeclaim","NodeClaim":{"name":"gpu-7h2kq"},"provider-id":"aws:///us-west-2b/i-0abc","instance-type":"g6e.12xlarge","zone":"us-west-2b","capacity-type":"spot"}',
     "karpenter.provisioning", {"nodeclaim": "gpu-7h2kq", "instance_type": "g6e.12xlarge", "zone": "us-west-2b"}),
    ("v1.0-v1.14", "awslabs/operatorpkg status (initial condition)",
     '{"type":"Registered","status":"Unknown","reason":"AwaitingReconciliation","message":"object is awaiting reconciliation","lastTransitionTime":"2026-01-01T12:00:00Z"}',
     "karpenter.provisioning", {"condition": "Registered"}),
    # --- NodeClaim and NodePool conditions ---
    ("v1.0-v1.14", f"{KS} pkg/controllers/nodeclaim/lifecycle/launch.go",
     "Launched  Unknown  LaunchFailed  creating instance, getting launch template configs, no amis exist given constraints",
     "karpenter.node_registration_failed", {"condition": "Launched", "reason": "LaunchFailed"}),
    ("v1.0-v1.14", f"{KS} pkg/controllers/nodeclaim/lifecycle/registration.go",
     "Registered  Unknown  NodeNotFound  Node not registered with cluster",
     "karpenter.node_registration_failed", {}),
    ("v1.0-v1.14", f"{KS} pkg/controllers/nodeclaim/lifecycle/initialization.go",
     'Initialized  Unknown  StartupTaintsExist  StartupTaint "nvidia.com/gpu-driver-not-ready:NoSchedule" still exists',
     "karpenter.node_registration_failed", {"reason": "StartupTaintsExist", "taint": "nvidia.com/gpu-driver-not-ready:NoSchedule"}),
    ("v1.0-v1.14", f"{KS} pkg/controllers/nodeclaim/lifecycle/initialization.go",
     '{"type":"Initialized","status":"Unknown","reason":"ResourceNotRegistered","message":"Resource \\"nvidia.com/gpu\\" was requested but not registered"}',
     "karpenter.resource_not_registered", {"resource": "nvidia.com/gpu"}),
    ("v1.0-v1.14", f"{KS} pkg/controllers/nodeclaim/lifecycle/initialization.go",
     "    Reason:                NodeNotReady",
     "karpenter.node_registration_failed", {"reason": "NodeNotReady"}),
    ("v1.4-v1.14", f"{KS} pkg/controllers/nodeclaim/lifecycle/liveness.go",
     "NodeRegistrationHealthy  False  RegistrationFailed  Failed to register node",
     "karpenter.node_registration_failed", {}),
    ("v1.0-v1.14", f"{KS} pkg/controllers/nodepool/readiness/controller.go",
     "NodeClassReady  False  NodeClassNotFound  NodeClass not found on cluster",
     "karpenter.nodeclass_not_ready", {"reason": "NodeClassNotFound"}),
    ("v1.0-v1.14", f"{KS} pkg/controllers/nodepool/validation",
     '{"type":"ValidationSucceeded","status":"False","reason":"NodePoolValidationFailed","message":"label domain \\"kubernetes.io\\" is restricted"}',
     "karpenter.no_instance_type", {"condition": "ValidationSucceeded"}),
    ("v1.0-v1.14", f"{KS} pkg/controllers/nodeclaim/lifecycle/launch.go + aws provider",
     "Launched  False  InsufficientCapacity  all requested instance types were unavailable during launch",
     "karpenter.insufficient_capacity", {"reason": "InsufficientCapacity"}),
    # --- disruption blocked, all spellings ---
    ("v0.32-v1.1", f"{KS} pkg/controllers/disruption/events/events.go",
     'Normal  DisruptionBlocked  36s  karpenter  Cannot disrupt Node: pod "ml/llama-0" has "karpenter.sh/do-not-disrupt" annotation',
     "karpenter.disruption", {"blocker_kind": "do-not-disrupt", "pod": "ml/llama-0"}),
    ("v1.2-v1.4", f"{KS} pkg/controllers/state/statenode.go",
     'Normal  DisruptionBlocked  36s  karpenter  Pod "ml/llama-0" has "karpenter.sh/do-not-disrupt" annotation',
     "karpenter.disruption", {"blocker_kind": "do-not-disrupt", "pod": "ml/llama-0"}),
    ("v1.5-v1.14", f"{KS} pkg/controllers/state/statenode.go",
     'Normal  DisruptionBlocked  36s  karpenter  Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=ml/llama-0)',
     "karpenter.disruption", {"blocker_kind": "do-not-disrupt", "pod": "ml/llama-0"}),
    ("v0.32-v1.1", f"{KS} pkg/controllers/state/statenode.go",
     'Normal  DisruptionBlocked  2m  karpenter  Cannot disrupt Node: pdb "ml/trainer-pdb" prevents pod evictions',
     "karpenter.disruption", {"blocker_kind": "pdb", "pdb": "ml/trainer-pdb"}),
    ("v1.2-v1.4", f"{KS} pkg/controllers/state/statenode.go",
     'Normal  DisruptionBlocked  2m  karpenter  Pdb "ml/trainer-pdb" prevents pod evictions',
     "karpenter.disruption", {"blocker_kind": "pdb", "pdb": "ml/trainer-pdb"}),
    ("v1.5-v1.14", f"{KS} pkg/controllers/state/statenode.go",
     "Normal  DisruptionBlocked  2m  karpenter  Pdb prevents pod evictions (PodDisruptionBudget=[ml/trainer-pdb])",
     "karpenter.disruption", {"blocker_kind": "pdb", "pdb": "ml/trainer-pdb"}),
    ("v1.0-v1.14", f"{KS} pkg/controllers/disruption/events/events.go",
     "Normal  DisruptionBlocked  5m  karpenter  No allowed disruptions for disruption reason Drifted due to blocking budget",
     "karpenter.disruption", {"blocker_kind": "budget", "budget_reason": "Drifted"}),
    # --- kube-scheduler, old and new ---
    ("1.19+", f"{K8S}/podtopologyspread/filtering.go",
     "0/6 nodes are available: 3 node(s) didn't match pod topology spread constraints, 3 node(s) didn't match pod topology spread constraints (missing required label).",
     "scheduling.topology_spread", {"missing_label": "true", "nodes": "3"}),
    ("1.22+", f"{K8S}/interpodaffinity/filtering.go",
     "0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.",
     "scheduling.pod_affinity_unsatisfiable", {"nodes": "4"}),
    ("1.18+", f"{K8S}/nodeports/node_ports.go",
     "0/3 nodes are available: 3 node(s) didn't have free ports for the requested pod ports.",
     "scheduling.pod_affinity_unsatisfiable", {"nodes": "3"}),
    ("1.18+", f"{K8S}/nodeunschedulable/node_unschedulable.go",
     "0/4 nodes are available: 1 node(s) were unschedulable, 3 node(s) didn't match Pod's node affinity/selector.",
     "scheduling.node_lifecycle_taint", {"nodes": "1", "key": "node.kubernetes.io/unschedulable"}),
    ("1.18+", f"{K8S}/volumebinding/volume_binding.go",
     "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
     "scheduling.volume_zone_conflict", {"problem": "unbound immediate PersistentVolumeClaims"}),
    ("1.18+", f"{K8S}/noderesources/fit.go",
     "0/5 nodes are available: 5 Insufficient cpu. preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.",
     "karpenter.no_instance_type", {"resource": "cpu", "nodes": "5"}),
    ("1.18+", f"{K8S}/noderesources/fit.go",
     "0/2 nodes are available: 2 Too many pods.",
     "karpenter.no_instance_type", {"resource": "pods"}),
    ("1.18+", f"{K8S}/noderesources/fit.go",
     "0/2 nodes are available: 2 Insufficient aws.amazon.com/neuron.",
     "scheduling.insufficient_gpu", {"resource": "aws.amazon.com/neuron"}),
    # --- held on purpose ---
    ("1.26+", "kubernetes/kubernetes pkg/registry/core/pod/strategy.go",
     '{"type":"PodScheduled","status":"False","reason":"SchedulingGated","message":"Scheduling is blocked due to non-empty scheduling gates"}',
     "scheduling.gated", {"hold": "gates"}),
    ("kueue v0.3+", "kubernetes-sigs/kueue pkg/controller/jobframework/reconciler.go",
     "Normal  Stopped  1m  kueue-admission  Not admitted by cluster queue",
     "scheduling.gated", {"hold": "kueue"}),
    ("kueue v0.5+", "kubernetes-sigs/kueue pkg/scheduler/scheduler.go",
     '{"type":"QuotaReserved","status":"False","reason":"Inadmissible","message":"ClusterQueue gpu-cq is inactive"}',
     "scheduling.gated", {"hold": "kueue", "queue": "ClusterQueue gpu-cq"}),
    ("1.24+", "kubernetes/kubernetes pkg/controller/job/job_controller.go",
     "Suspended  True  JobSuspended  Job suspended",
     "scheduling.gated", {"hold": "suspended"}),
]


@pytest.mark.parametrize(
    ("versions", "upstream", "line", "code", "fields"),
    MESSAGES,
    ids=[f"{i}-{m[3]}-{m[0]}" for i, m in enumerate(MESSAGES)],
)
def test_message_gives_code_and_fields(versions: str, upstream: str, line: str, code: str, fields: dict[str, str]) -> None:
    signals = scan_line(line, source=f"{versions} {upstream}")
    matching = [s for s in signals if s.code == code]
    assert matching, (code, [(s.code, dict(s.fields)) for s in signals])
    assert any(all(s.fields.get(k) == v for k, v in fields.items()) for s in matching), [dict(s.fields) for s in matching]


def test_the_table_covers_at_least_thirty_messages() -> None:
    assert len(MESSAGES) >= 30
    assert all(versions and upstream for versions, upstream, *_ in MESSAGES)


def test_limit_titles_do_not_assume_gpus() -> None:
    (signal,) = scan_line("Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=cpu)", source="x")
    assert "gpu" not in signal.title.lower()
    assert signal.severity == "error"


def test_offering_title_names_zone_and_capacity_type() -> None:
    (signal,) = scan_line("Failed to schedule pod, no instance type has the required offering, requirements=karpenter.sh/nodepool In [spot]", source="x")
    assert "zone" in signal.title and "capacity type" in signal.title


def test_v1_5_segments_do_not_borrow_another_nodepools_name() -> None:
    line = (
        "Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=a); "
        "incompatible requirements, key karpenter.k8s.aws/instance-family, karpenter.k8s.aws/instance-family In [p5] not in "
        "karpenter.k8s.aws/instance-family In [g6]; no instance type has enough resources, requirements=karpenter.sh/nodepool In [c], "
        'resources={"cpu":"500"}'
    )
    got = {(s.code, s.fields.get("nodepool")) for s in scan_line(line, source="x")}
    assert got == {
        ("karpenter.nodepool_limit_reached", "a"),
        ("scheduling.node_selector_mismatch", None),
        ("karpenter.no_instance_type", "c"),
    }


def test_v1_4_prefix_carries_over_to_the_same_nodepools_next_segment() -> None:
    line = 'Failed to schedule pod, incompatible with nodepool "gpu", daemonset overhead={}, did not tolerate a=b:NoSchedule; did not tolerate c:NoExecute'
    assert {s.fields.get("nodepool") for s in scan_line(line, source="x")} == {"gpu"}


def test_cpu_shortage_is_not_a_gpu_shortage() -> None:
    signals = scan_line("0/3 nodes are available: 2 Insufficient memory, 1 Insufficient nvidia.com/gpu.", source="x")
    by_resource = {s.fields["resource"]: s for s in signals}
    assert by_resource["memory"].code == "karpenter.no_instance_type"
    assert "gpu" not in by_resource["memory"].title.lower()
    assert by_resource["nvidia.com/gpu"].code == "scheduling.insufficient_gpu"


@pytest.mark.parametrize(
    "line",
    [
        "Launched  True  Launched",
        "Suspended  False  JobResumed  Job resumed",
        '{"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"Quota reserved in ClusterQueue gpu-cq"}',
        "Registered plugin nvidia.com/gpu with kubelet",
    ],
)
def test_healthy_conditions_give_nothing(line: str) -> None:
    assert [s for s in scan_line(line, source="x") if s.severity != "info"] == []


def test_a_node_on_its_way_is_info_only() -> None:
    (signal,) = scan_line("Normal  Nominated  11m  karpenter  Pod should schedule on: nodeclaim/gpu-v278f", source="x")
    assert (signal.code, signal.severity) == ("karpenter.provisioning", "info")


def test_held_pods_are_explained_not_silenced() -> None:
    from playbooks.explain import explain_text

    diagnosis = explain_text(
        "Message: couldn't assign flavors to pod set worker: insufficient unused quota for nvidia.com/gpu in flavor a100, 8 more needed"
    )
    (finding,) = diagnosis.findings
    assert finding.code == "scheduling.gated"
    assert "nvidia.com/gpu" in finding.detail and "a100" in finding.detail
    assert "Kueue" in finding.detail
