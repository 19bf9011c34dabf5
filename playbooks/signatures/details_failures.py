"""Detail paragraphs for failures read by their structure (playbooks/failures/): the generic floor, a
process that sees no GPU, numbers that became NaN, and NCCL that cannot set up its network.

Registered into ``details.WRITERS`` / ``NEXT_STEPS``. The generic writer says what the error's class
means and what to do next for that class; the class comes from upstream's tables (failures/tables.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from playbooks.signatures.details import View

# The next step for each class of error in the taxonomies (playbooks/failures/tables.py CLASSES).
CLASS_STEPS = {
    "code": "a fault of the job's code: fix the line the traceback names (rerun once with CUDA_LAUNCH_BLOCKING=1 "
            "for CUDA errors, whose traceback may point at a later call); replacing the node will not help",
    "data": "the data the job read is malformed or out of range: find the sample or file the traceback names",
    "resources": "the process ran out of a resource (memory, launch resources): smaller batch, fewer workers, or a bigger instance",
    "environment": "the pod's environment differs from what the job expects (GPUs, driver, paths, variables): compare the pod "
                   "spec and image with the job's assumptions",
    "image": "the container image lacks something the job needs (a module, a library, a CUDA build): rebuild the image "
             "or pin the dependency",
    "network": "a network call failed: check that the peer or service is up and reachable from the pod (Service, DNS, "
               "security groups)",
    "distributed": "a collective or store operation failed: the first rank that failed usually names the cause; the others "
                   "report its absence",
    "storage": "a filesystem operation failed: check free space, quota and permissions of the path the job writes",
    "permission": "the process was refused access: check the file's owner and mode, the container's user and read-only mounts",
    "external": "the process was stopped from outside: the exit came from the kubelet, the OOM killer or an operator",
    "internal": "a library hit an internal check: the message names it; upgrade or report it upstream with this output",
    "hardware": "the GPU reported a hardware fault: check the node's Xid errors and ECC counters before rerunning on it",
}


def _quoted(view: View) -> str:
    message = view.get("message")
    return f" It said: {message}." if message else ""


def failed(view: View) -> str:
    klass = view.get("error_class")
    named = view.get("error")
    meaning = view.get("meaning")
    lead = "The training process failed with an error no more specific finding explains."
    what = f" Upstream names it {named}" + (f" ({meaning})" if meaning else "") + "." if named else ""
    step = CLASS_STEPS.get(klass, "read the last lines the failing rank printed before this error: the first error is the cause")
    ranks = view.all("rank")
    where = f" Ranks that printed it: {', '.join(ranks)}." if len(ranks) > 1 else ""
    return f"{lead}{_quoted(view)}{what}{where} Class: {klass or 'not classed'}; next: {step}."


def gpu_not_visible(view: View) -> str:
    return (
        "The process needs a GPU and sees none it can use." + _quoted(view) + " In a pod this is one of: the container "
        "has no nvidia.com/gpu limit (the NVIDIA runtime then exposes no device), CUDA_VISIBLE_DEVICES or "
        "NVIDIA_VISIBLE_DEVICES hide the devices, a rank asks for a device index beyond those visible (torchrun "
        "--nproc_per_node larger than the pod's nvidia.com/gpu: invalid device ordinal), or the node's driver is "
        "older than the CUDA runtime in the image. Compare the container's nvidia.com/gpu limit with nproc_per_node "
        "and run nvidia-smi in the container."
    )


def numerical(view: View) -> str:
    what = view.get("quantity", "loss")
    return (
        f"The {what} became {view.get('value', 'NaN')}: the numbers diverged, which is the training code's or the data's "
        "doing (learning rate too high, a log or division of zero, fp16 overflow without loss scaling, a corrupt "
        "sample), not the GPU's: without an Xid on the node there is no hardware evidence. Lower the learning rate "
        "or add warm-up, clip gradients, use bf16 instead of fp16, and run with torch.autograd.set_detect_anomaly(True) "
        "once to find the operation that first produced NaN."
    )


def _algo_settings(view: View) -> str:
    """NCCL_ALGO / NCCL_PROTO as the text shows them (the WARN since NCCL 2.28, or an INFO line)."""
    return " and ".join(f"NCCL_{name.upper()}={value}" for name in ("algo", "proto")
                        for value in view.all(f"nccl_{name}")[:1])


def _no_algorithm(view: View) -> bool:
    """signatures/nccl_usage.py nccl.algo_unavailable, or the failure reader's line of the same WARN."""
    return ("no algorithm/protocol" in view.all("problem")
            or any("algorithm/protocol available" in e for e in view.all("error")))


def algo_unavailable(view: View) -> str:
    """NVIDIA/nccl src/enqueue.cc: no algorithm/protocol for a collective, mostly because NCCL_ALGO / NCCL_PROTO
    (src/graph/tuning.cc) allow only ones this communicator cannot run."""
    what = f" for {view.get('function')} ({view.get('datatype')})" if view.get("function") else ""
    settings = _algo_settings(view)
    if settings:
        return (
            f"NCCL found no algorithm/protocol{what} because {settings} allows only ones this communicator cannot "
            "run: NVLS needs NVSwitch with NVLink SHARP, CollNet a SHARP-capable network plugin, PAT and some "
            "protocols only some collectives and datatypes. This is the job's setting, not a peer or the network "
            "failing. Unset the variable so NCCL chooses per collective (the default), or set one the GPUs and "
            "network support (Ring runs every collective), then restart the job."
        )
    return (
        f"NCCL found no algorithm/protocol{what}. The text shows neither NCCL_ALGO nor NCCL_PROTO: if the "
        "container sets either, that setting excludes every algorithm this topology supports; unset it or pick "
        "Ring. With neither set, NCCL reports an internal error this way (2.27 and older print this "
        "message for both): rerun one rank with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING and report it "
        "to NVIDIA/nccl with that log."
    )


def network_config(view: View) -> str:
    if _no_algorithm(view):
        return algo_unavailable(view)
    said = view.get("message") or view.get("error")
    return (
        "NCCL cannot set up its network in this pod" + (f" ({said})" if said else "") + ". Typical causes: "
        "NCCL_SOCKET_IFNAME names an interface the pod does not have (a pod's interface is eth0; hostNetwork pods see "
        "the node's names such as ens5), NCCL_NET forces a network plugin the image lacks ('AWS Libfabric' needs "
        "aws-ofi-nccl in the image, 'IB' needs InfiniBand devices), or the OFI plugin finds no EFA provider (no "
        "vpc.amazonaws.com/efa in the pod's limits, or /dev/infiniband not mounted). Unset the variable or fix it, "
        "and rerun with NCCL_DEBUG=INFO to see which interfaces and plugins NCCL found."
    )


WRITERS: dict[str, Callable[[View], str]] = {
    "training.failed": failed,
    "training.gpu_not_visible": gpu_not_visible,
    "training.numerical": numerical,
    "nccl.network_config": network_config,
}
NEXT_STEPS: dict[str, str] = {
    "training.failed": "the failing rank's complete log from its first error (kubectl logs POD -c CONTAINER --previous), "
                       "and the container's exit code and reason (kubectl describe pod)",
    "training.gpu_not_visible": "the container's resources.limits (nvidia.com/gpu), its CUDA_VISIBLE_DEVICES / "
                                "NVIDIA_VISIBLE_DEVICES, and nvidia-smi run inside it",
    "training.numerical": "the loss curve up to the first NaN, the learning-rate schedule, and the precision settings "
                          "(fp16 / bf16, loss scaling)",
    "nccl.network_config": "the NCCL_* variables of the container and an NCCL_DEBUG=INFO log of one rank's start-up",
}
