"""Detail paragraphs for the job's own failures: code errors, /dev/shm, NCCL invalid usage, crash loops.

Registered into ``details.WRITERS`` / ``NEXT_STEPS``; each writer gets the same ``View`` as the others.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from playbooks.signatures.details import View


def code_error(view: View) -> str:
    meaning = f" Here {view.get('meaning')}." if view.get("meaning") else ""
    xid = (" The driver's Xid in the same text is the GPU reporting that fault of the job, not a hardware error."
           if view.get("xid") or "gpu.xid_error" in view.codes else "")
    return (
        "The training code or its data failed, not the GPU, the node or the network: a CUDA device-side assert, an "
        f"index or label out of range, or a tensor shape mismatch.{meaning}{xid} Typical causes: token ids beyond the "
        "embedding's vocabulary (tokenizer and model config disagree, added special tokens without "
        "resize_token_embeddings), labels outside [0, num_classes) or a padding label other than -100, a layer "
        "whose in_features does not match the data. CUDA reports asserts asynchronously, so the Python line in the "
        "traceback may not be the failing op: rerun with CUDA_LAUNCH_BLOCKING=1 (or on CPU) to get the exact line. "
        "Replacing the node or the GPU will not help, and every restart fails the same way."
    )


def shm_exhausted(view: View) -> str:
    what = (f"NCCL could not create its shared-memory segment {view.get('segment', '')}"
            f"{' of ' + view.get('size') + ' bytes' if view.get('size') else ''}" if "nccl-" in view.get("segment")
            else "DataLoader workers (or PyTorch's tensor sharing) ran out of shared memory")
    return (
        f"{what}: /dev/shm in the container is too small. A container gets 64 MiB of /dev/shm unless an emptyDir "
        "with medium: Memory is mounted there; DataLoader workers pass every batch through it and NCCL's "
        "intra-node transport needs a segment per peer. Mount a memory-backed emptyDir at /dev/shm (it counts "
        "against the container's memory limit, so size the limit for it); setting num_workers=0 or NCCL_SHM_DISABLE=1 "
        "only works around it at a cost in speed."
    )


def invalid_usage(view: View) -> str:
    if view.get("problem") == "duplicate GPU":
        ranks = f" (ranks {view.get('rank')} and {view.get('other_rank')})" if view.get("rank") else ""
        return (
            f"Two ranks of the job landed on the same GPU{ranks}, which NCCL refuses. In a pod this almost always "
            "means torchrun starts more processes than the GPUs the pod was given: --nproc_per_node must equal the "
            "container's nvidia.com/gpu limit (nproc_per_node=auto counts the visible GPUs), and each rank must call "
            "torch.cuda.set_device(LOCAL_RANK). Also check that CUDA_VISIBLE_DEVICES is not overridden."
        )
    if view.get("problem") == "unhandled cuda error":
        return cuda_failure(view)
    return (
        "NCCL rejected the job's configuration (ncclInvalidUsage): two ranks on one GPU (nproc_per_node larger than "
        "the pod's nvidia.com/gpu), a rank not calling torch.cuda.set_device(LOCAL_RANK), mismatched NCCL builds "
        "between ranks, or communicator calls out of order. Rerun with NCCL_DEBUG=WARN: NCCL prints the exact reason "
        "just before it returns the error."
    )


def cuda_failure(view: View) -> str:
    """nccl.cuda_failure / nccl.unhandled_cuda_error (signatures/nccl.py): ncclUnhandledCudaError, with the
    meaning of the ``NCCL WARN Cuda failure '<msg>'`` line when one was read (nccl.SETUP_CUDA_FAILURES)."""
    failure = view.get("cuda_error")
    named = f" ('{failure}': {view.get('meaning')})" if failure and view.get("meaning") else ""
    return (
        f"A CUDA call inside NCCL failed{named}. The NCCL WARN 'Cuda failure' line names it: 'invalid device "
        "ordinal' means more ranks than GPUs in the pod (--nproc_per_node above its nvidia.com/gpu); 'CUDA driver "
        "version is insufficient for CUDA runtime version' means a node driver older than the image's CUDA "
        "runtime (use the node's GPU AMI of a newer release or an image built for an older CUDA); 'peer access is "
        "not supported' means no GPU peer-to-peer access (set NCCL_P2P_DISABLE=1). An 'out of memory' failure "
        "is reported as training.cuda_oom."
    )


def crash_loop(view: View) -> str:
    container = f" {view.get('container')}" if view.get("container") else ""
    exit_code = f" Its last run exited with code {view.get('exit_code')}." if view.get("exit_code") else ""
    last = f" Its last error lines: {view.get('last_error')}" if view.get("last_error") else ""
    return (
        f"Container{container} keeps exiting and the kubelet restarts it with a growing back-off (CrashLoopBackOff)."
        f"{exit_code}{last} No more specific cause was recognised: read the previous container's log (kubectl logs "
        "<pod> -c <container> --previous) for the first traceback, and kubectl describe pod for Last State (exit code, "
        "reason, finishedAt). Exit code 1 is the program's own error; 137 / OOMKilled is a memory limit; 139 a crash."
    )


WRITERS: dict[str, Callable[[View], str]] = {
    "training.code_error": code_error,
    "training.shm_exhausted": shm_exhausted,
    "nccl.invalid_usage": invalid_usage,
    "training.crash_loop": crash_loop,
}

NEXT_STEPS: dict[str, str] = {
    "training.code_error": "the first traceback of the failing rank, rerun with CUDA_LAUNCH_BLOCKING=1",
    "training.shm_exhausted": "df -h /dev/shm inside the container and the pod's volumes",
    "nccl.invalid_usage": "the torchrun command line (--nproc_per_node) and the container's nvidia.com/gpu limit",
    "training.crash_loop": "kubectl logs <pod> -c <container> --previous and the container's lastState",
}
