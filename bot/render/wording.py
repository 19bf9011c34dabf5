"""The plain words messages use for the bot's own names: every button label, each remediation by its
registry kind, each target kind, and what a finding's code says about the target's state.

Messages name things the way an on-call engineer would say them (docs/messages.md); codes and kinds
stay in context lines, where they can be searched for."""
from __future__ import annotations

# One label per remediation kind of playbooks.remediations.registry.DEFINITIONS (a test holds them equal).
REMEDIATION_LABELS = {
    "annotate-do-not-disrupt": "Protect from disruption",
    "nodepool-consolidation": "Let consolidation wait",
    "cordon-gpu-node": "Cordon node",
}

RERUN = "Re-run"
SHOW_EVIDENCE = "Show evidence"
NEXT_FINDING = "Next finding"
SHARE = "Share in channel"
APPROVE, REJECT, UNDO = "Approve", "Reject", "Undo"
# Alert messages (bot.alerts.buttons): snoozes and acknowledge.
SNOOZE_HOUR, SNOOZE_DAY, SNOOZE_RESOLVED = "Snooze 1h", "Snooze 1d", "Snooze until resolved"
ACKNOWLEDGE = "Acknowledge"

FIXED_LABELS = frozenset({RERUN, SHOW_EVIDENCE, NEXT_FINDING, SHARE, APPROVE, REJECT, UNDO,
                          SNOOZE_HOUR, SNOOZE_DAY, SNOOZE_RESOLVED, ACKNOWLEDGE})


def remediation_label(kind: str) -> str:
    return REMEDIATION_LABELS[kind]


def button_labels() -> frozenset[str]:
    """Every label a gpubot button may carry."""
    return FIXED_LABELS | frozenset(REMEDIATION_LABELS.values())


KIND_NAMES = {
    "pod": "Pod", "job": "Job", "pytorchjob": "PyTorchJob", "tfjob": "TFJob", "mpijob": "MPIJob",
    "jobset": "JobSet", "trainjob": "TrainJob", "node": "Node", "nodepool": "NodePool", "text": "The pasted log",
}

# What the lead finding's code says about a workload (pod or job), by code or by the code's family.
CANNOT_START = "can't start"
STATES = {
    "karpenter.provisioning": "is waiting for a node",
    "karpenter.disruption": "stopped",
    "karpenter.interruption": "stopped",
    "training.crash_loop": "keeps crashing",
    "image.slow_pull": "starts slowly",
    "image.pull_failed": CANNOT_START,
    "container.config_error": CANNOT_START,
    "storage.provisioning_failed": CANNOT_START,
    "gpu.device_plugin_missing": CANNOT_START,
    "gpu.unhealthy_device": "hit a GPU fault",
    "gpu.xid_error": "hit a GPU fault",
    "node.not_ready": "lost its node",
    "training.memory_pressure": "is short of GPU memory",
}
FAMILY_STATES = {"scheduling": CANNOT_START, "karpenter": CANNOT_START, "efa": CANNOT_START,
                 "training": "failed", "nccl": "failed"}
# A node or NodePool is not "started": its problem is named as such.
INFRA_STATES = {"node": "needs attention", "nodepool": "needs attention"}
UNKNOWN_STATE = "has a problem"
HEALTHY = "no known problem found"


def state(kind: str, code: str) -> str:
    if kind in INFRA_STATES:
        return INFRA_STATES[kind]
    if kind == "text":
        return "shows a failure"
    return STATES.get(code) or FAMILY_STATES.get(code.split(".")[0], UNKNOWN_STATE)
