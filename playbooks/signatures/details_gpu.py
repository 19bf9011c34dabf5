"""Detail paragraphs registered into ``details.WRITERS`` / ``NEXT_STEPS`` (see details_training.py).

``gpu.xid_error`` reads what to do from the Xid table (playbooks.failures.tables, NVIDIA's Xid catalogue):
the same ``action`` field the title (signatures/gpu.py) and the fix template (generic/gpu.xid_error.sh.j2)
follow, so the three never disagree.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from playbooks.failures.tables import xid_entry
from playbooks.signatures.gpu import xid_action, xid_number

if TYPE_CHECKING:
    from playbooks.signatures.details import View

_SUPPORT_CASE = " Repeated Xids on one instance type / AZ are worth an AWS support case with the instance ID."
# action -> what the operator does, after the Xid's own meaning.
_NEXT = {
    "none": " Nothing to do on the node: this Xid is not why a job failed; if one did, look for the error before it.",
    "restart_app": (" Restart the job from its last checkpoint; the node and the GPU stay in service, so do not drain "
                    "it for this. If the same GPU repeats it across jobs, drain the node and replace the instance."),
    "reset_gpu": (" The GPU keeps working until then: when the job allows, cordon and drain the node and reset the GPU "
                  "(nvidia-smi -r -i <index>, no process on the GPU) or reboot the node; replacing the instance does the "
                  "same on EKS. Replace it if the Xid returns after the reset." + _SUPPORT_CASE),
    "drain": (" Treat the node as faulty: cordon and drain it, terminate the instance so Karpenter replaces it, and "
              "restart the job from its last checkpoint." + _SUPPORT_CASE),
    "reboot": (" The driver asks for a node reboot: cordon and drain the node, then reboot it or terminate the instance "
               "so Karpenter replaces it, and restart the job from its last checkpoint."),
    "investigate": (" This Xid is not in NVIDIA's Xid catalogue as gpubot reads it (or the line does not say which "
                    "recovery it wants): read dmesg around it and nvidia-smi -q for the GPU before acting; if jobs fail "
                    "on this GPU, drain the node and replace the instance."),
}

# A catalogued Xid whose action is an investigation (its meaning already says why).
_NEXT_KNOWN_INVESTIGATE = (" Before acting, read dmesg around it and nvidia-smi -q for the GPU; if jobs fail on this "
                           "GPU, drain the node and replace the instance.")


def xid_error(view: View) -> str:
    # details.py imports this module while it is being defined; its node-agent helpers are read at call time.
    from playbooks.signatures.details import _AGENT_XIDS, REPAIR_NOTE, _from_agent

    xid = view.get("xid") or _AGENT_XIDS.get(view.get("reason"), "?")
    number = xid_number(xid)
    entry = xid_entry(number) if number is not None else None
    action = view.get("action") or (xid_action(number, "") if number is not None else "investigate")
    what = f"{entry.name}. {entry.meaning}" if entry else "not in NVIDIA's Xid catalogue as read."
    following = _NEXT_KNOWN_INVESTIGATE if entry is not None and action == "investigate" and number != 154 else _NEXT[action]
    if set(view.all("level")) == {"Warning"}:
        return (
            f"The EKS node monitoring agent saw Xid {xid} ({entry.name if entry else 'an Xid it does not know'}) but "
            "raised only a Warning event: it is not on the agent's list of fatal Xids, so the node stays Ready and node "
            "repair does not act." + following
        )
    if view.get("pci") or not _from_agent(view):
        who = f"The GPU driver reported Xid {xid} on PCI {view.get('pci', '?')}"
    else:
        named = f" ({view.get('reason')})" if view.get("reason") else ""
        who = f"The EKS node monitoring agent reported Xid {xid}{named}"
    text = f"{who}: {what}{following}"
    return text + REPAIR_NOTE if _from_agent(view) else text


def _process_report(view: View) -> bool:
    """A CUDA error the training process itself printed (playbooks/failures/lines.py: a traceback's
    ``CUDA error: ...``, NCCL's ``Cuda failure '...'`` WARN): no device plugin, driver or agent line behind it."""
    return "CUDA error" in view.all("kind") and not (
        view.all("xid") or view.all("device") or view.all("resource") or view.all("reason") or view.all("dcgm_code")
        or view.all("level") or view.all("bus") or view.all("pci") or view.all("nvml_error"))


def unhealthy_device(view: View) -> str:
    """gpu.unhealthy_device, saying where its evidence came from: a process's own CUDA error in a pod log, NVML
    as the device plugin or nvidia-smi printed it, or (details.unhealthy_device) the device plugin, the node
    monitoring agent and nvidia-smi -q."""
    from playbooks.signatures.details import unhealthy_device as plugin_agent_or_smi

    if _process_report(view):
        said = view.get("message")
        via = ("NCCL's WARN line in the pod log (a CUDA call inside NCCL failed)" if "NCCL WARN" in said
               else "the training process's own log (its CUDA call returned the error)")
        named = view.get("error") or "a CUDA hardware error"
        return (
            f"{via[0].upper()}{via[1:]} reports {named}" + (f": {said}" if said else "") + ". The CUDA driver told "
            "the process the GPU itself failed (an uncorrectable ECC or NVLink error, a hardware stack error); "
            "this is the process's view, not a verdict of the device plugin or the driver's log, and the GPU may "
            "still be listed as healthy. Confirm on the node: dmesg | grep -i xid for the matching Xid (48, 63, 64, "
            "94, 95, 74) and nvidia-smi -q -d ECC,ROW_REMAPPER for the counters; then drain the node, replace the "
            "instance and restart the job from its last checkpoint. Do not restart it on the same GPU."
        )
    if view.get("nvml_error") and not (view.get("xid") or view.get("device")):
        return (
            f"NVML, as the device plugin or nvidia-smi printed it, failed with '{view.get('nvml_error')}': the driver "
            "lost the GPU or the container lost access to it. On the node, dmesg | grep -i xid says whether the GPU "
            "fell off the bus (Xid 79: drain the node and replace the instance); without an Xid, restart the pod "
            "and check that the container still has its /dev/nvidia* devices."
        )
    return plugin_agent_or_smi(view)


def gpu_idle(view: View) -> str:
    pod = f" of pod {view.get('pod')}" if view.get("pod") else ""
    return (f"dcgm-exporter read GPU {view.get('gpu', '?')}{pod} at {view.get('util', '?')}% busy. One reading "
            "says the GPU rests now, not for how long: a diagnosis of the job with GPUBOT_PROMETHEUS_URL set reads "
            "the last hour and says when a GPU it holds sat idle for 30 minutes.")


WRITERS: dict[str, Callable[[View], str]] = {"gpu.xid_error": xid_error, "gpu.idle": gpu_idle,
                                             "gpu.unhealthy_device": unhealthy_device}
NEXT_STEPS: dict[str, str] = {
    "gpu.idle": "nvidia-smi on the node while the job runs, and the idle rank's log around the same time",
}
