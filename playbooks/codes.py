"""Finding codes: the public contract of docs/findings.md. Add codes; never rename one.

The order is the tie-break when two findings share severity and confidence: codes earlier in this
tuple are closer to a root cause than those after them (a deadlocked affinity explains the
FailedScheduling noise; a disruption explains the SIGTERM; a code error explains the NCCL errors and the crash loop after it).
"""
from __future__ import annotations

CODES: tuple[str, ...] = (
    # Held on purpose (suspended job, Kueue, schedulingGates): nothing else about scheduling matters yet.
    "scheduling.gated",
    "scheduling.pod_affinity_unsatisfiable",
    "karpenter.nodepool_limit_reached",
    "karpenter.offering_unavailable_in_zone",
    "efa.resource_unavailable",
    "scheduling.node_selector_mismatch",
    "scheduling.untolerated_taint",
    "karpenter.no_instance_type",
    "karpenter.insufficient_capacity",
    "karpenter.quota_exceeded",
    "karpenter.subnet_problem",
    # The EC2NodeClass itself is not Ready (AMI, security groups, instance profile, validation): no NodePool
    # that uses it launches anything.
    "karpenter.nodeclass_not_ready",
    "scheduling.volume_zone_conflict",
    "scheduling.topology_spread",
    "karpenter.node_registration_failed",
    "karpenter.resource_not_registered",
    "gpu.device_plugin_missing",
    "gpu.unhealthy_device",
    "gpu.xid_error",
    # The container never ran the job: its image or its spec is the answer.
    "image.pull_failed",
    "container.config_error",
    # A volume the pod needs cannot be provisioned or bound: nothing starts until it is.
    "storage.provisioning_failed",
    # The process sees no GPU (no nvidia.com/gpu limit, hidden devices, driver older than the runtime):
    # every CUDA and NCCL error after it follows from it.
    "training.gpu_not_visible",
    # The job's own configuration or code: it explains the NCCL noise, the vanished peers and the
    # crash loop that follow it.
    "nccl.invalid_usage",
    "nccl.network_config",
    "training.code_error",
    "training.numerical",
    "training.shm_exhausted",
    "storage.disk_full",
    "nccl.peer_unresponsive",
    # EC2 took the node (spot interruption, maintenance, stop): it explains the vanished peers after it.
    "karpenter.interruption",
    "karpenter.disruption",
    "training.cuda_oom",
    "training.rendezvous_failed",
    "efa.network_unreachable",
    "node.not_ready",
    "training.terminated",
    "nccl.timeout",
    "training.memory_pressure",
    # An error no more specific code explains, classed by upstream's own tables: the floor under every
    # failure, so that none is silent.
    "training.failed",
    # The same floor for the cluster's side: a Warning event, a blocking condition, a container reason or a
    # component's error line no rule explains, quoted with the component that wrote it.
    "cluster.unrecognised",
    # A container restarting with no more specific cause: the generic fallback among training codes.
    "training.crash_loop",
    "scheduling.insufficient_gpu",
    "scheduling.node_lifecycle_taint",
    "image.slow_pull",
    # GPUs held and not used: information next to whatever else is found, never a cause.
    "gpu.idle",
    # A node is on its way: the answer when nothing is wrong yet.
    "karpenter.provisioning",
)

CODE_SET = frozenset(CODES)

# Code prefixes that say why a container crashes: next to any of them, training.crash_loop is only the
# consequence and is not reported. The generic training.failed is not among them: a crash loop's own
# finding quotes the same last error lines with the exit code and the restarts, which says more.
CRASH_CAUSES: tuple[str, ...] = (
    "training.cuda_oom", "training.code_error", "training.shm_exhausted", "training.terminated",
    "training.rendezvous_failed", "training.gpu_not_visible", "training.numerical",
    "storage.disk_full", "image.pull_failed", "container.config_error", "nccl.", "gpu.", "efa.network_unreachable",
)


def precedence(code: str) -> int:
    """Position of a code in the root-cause order; unknown codes sort last."""
    try:
        return CODES.index(code)
    except ValueError:
        return len(CODES)
