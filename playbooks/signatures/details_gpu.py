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


def xid_error(view: View) -> str:
    # details.py imports this module while it is being defined; its node-agent helpers are read at call time.
    from playbooks.signatures.details import _AGENT_XIDS, REPAIR_NOTE, _from_agent

    xid = view.get("xid") or _AGENT_XIDS.get(view.get("reason"), "?")
    number = xid_number(xid)
    entry = xid_entry(number) if number is not None else None
    action = view.get("action") or (xid_action(number, "") if number is not None else "investigate")
    what = f"{entry.name}. {entry.meaning}" if entry else "not in NVIDIA's Xid catalogue as read."
    if set(view.all("level")) == {"Warning"}:
        return (
            f"The EKS node monitoring agent saw Xid {xid} ({entry.name if entry else 'an Xid it does not know'}) but "
            "raised only a Warning event: it is not on the agent's list of fatal Xids, so the node stays Ready and node "
            "repair does not act." + _NEXT[action]
        )
    if view.get("pci") or not _from_agent(view):
        who = f"The GPU driver reported Xid {xid} on PCI {view.get('pci', '?')}"
    else:
        named = f" ({view.get('reason')})" if view.get("reason") else ""
        who = f"The EKS node monitoring agent reported Xid {xid}{named}"
    text = f"{who}: {what}{_NEXT[action]}"
    return text + REPAIR_NOTE if _from_agent(view) else text


def gpu_idle(view: View) -> str:
    pod = f" of pod {view.get('pod')}" if view.get("pod") else ""
    return (f"dcgm-exporter read GPU {view.get('gpu', '?')}{pod} at {view.get('util', '?')}% busy. One reading "
            "says the GPU rests now, not for how long: a diagnosis of the job with GPUBOT_PROMETHEUS_URL set reads "
            "the last hour and says when a GPU it holds sat idle for 30 minutes.")


WRITERS: dict[str, Callable[[View], str]] = {"gpu.xid_error": xid_error, "gpu.idle": gpu_idle}
NEXT_STEPS: dict[str, str] = {
    "gpu.idle": "nvidia-smi on the node while the job runs, and the idle rank's log around the same time",
}
