"""Write playbooks/failures/data/*.json: upstream's own error tables, each entry classed for a training job.

    .venv/bin/python scripts/gen_failure_tables.py [--out DIR] [--date YYYY-MM-DD] [--refresh] [--mirrors DIR]

Tables and where each comes from (no GPU and no network needed; every input is checked in):

- cuda_runtime.json, cuda_driver.json: every cudaError_t / CUresult name and message as the CUDA 13.0
  runtime PyTorch 2.11 ships and driver 580.159.04 print them (cudaGetErrorName / cudaGetErrorString,
  cuGetErrorName / cuGetErrorString), captured on an H200 by scripts/gpu_failures/capture.py into
  scripts/gpu_failures/captured/tables.json; each entry's doc is the header's comment for it
  (captured/driver_types.cudaError.h and captured/cuda.CUresult.h, the enum blocks of that machine's
  driver_types.h and cuda.h).
- nccl_results.json: every ncclResult_t (NVIDIA/nccl src/nccl.h.in of the newest tag read) with
  ncclGetErrorString's text as NCCL 2.28.9 printed it on that machine (results NCCL 2.28.9 lacks take
  the text of src/init.cc).
- nccl_warnings.json: the WARN(...) formats of every NCCL source file under src/ (.cc, .h, .cu, .cpp),
  over the tags in NCCL_TAGS, each turned into an RE2 pattern; snapshot in
  scripts/gpu_failures/upstream/nccl.json.
- errno.json, signals.json: every errno and signal Python's errno / signal modules know, with
  os.strerror / signal.strsignal texts (glibc's); snapshot in upstream/python_errno_signals.json.
- exceptions.json: Python's builtin exception classes (same snapshot) and those of PyTorch, Triton, CuPy,
  JAX, safetensors, huggingface_hub listed in upstream/exceptions.json (read from their source).
- xid.json: upstream/xid_catalogue.json (NVIDIA's Xid catalogue, every row, transcribed), each Xid's
  action with its action_source (nvidia: the catalogue's Immediate Action; gpubot: XID_RULES' reading,
  with the reason), and the Xids the NVIDIA device plugin treats as application errors (NVIDIA/k8s-device-plugin internal/rm/health.go, snapshot
  in upstream/k8s_device_plugin.json).

The classing rules (which class and finding code each entry gets, and the sentence saying what it means
for the job) live here; the facts live in the inputs. --date fixes the "generated" date (the test passes
the checked-in one to reproduce the files byte for byte).

After upgrading: for a new CUDA or NCCL in the PyTorch wheel, run scripts/gpu_failures/capture.py on a GPU
machine and copy its tables.json and the two enum blocks here; for a new NCCL or device plugin release,
`fetch` github:NVIDIA/nccl and github:NVIDIA/k8s-device-plugin (mirrors under /work/.mirror), add the tag
to NCCL_TAGS and run with --refresh (it rewrites the nccl, device plugin and Python snapshots from the
mirrors and the running interpreter); new exception classes or Xids go into upstream/exceptions.json or
upstream/xid_catalogue.json by hand, with the file they come from. Then run this script, read the
printed counts and "unclassed" lines, and commit the inputs and the tables together.
"""
from __future__ import annotations

import argparse
import builtins
import datetime as dt
import errno as errno_module
import json
import os
import re
import signal as signal_module
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAPTURED = ROOT / "scripts" / "gpu_failures" / "captured"
UPSTREAM = ROOT / "scripts" / "gpu_failures" / "upstream"
OUT = ROOT / "playbooks" / "failures" / "data"
MIRRORS = Path("/work/.mirror")
GENERATOR = "scripts/gen_failure_tables.py"

# The NCCL releases PyTorch wheels shipped (2.14.3: torch 1.13/2.0; 2.18: torch 2.1; 2.19: torch 2.2;
# 2.20.5: torch 2.3/2.4, each series read at its last patch tag; 2.21.5: torch 2.5/2.6; 2.26: torch
# 2.7/2.8; 2.27: 2.9/2.10; 2.28.9: 2.11, the captured one) and the newest; formats differ between them
# (socket.cc's "Net : Connection closed by remote peer %s" became "socketProgress: Connection closed by
# remote peer %s" in 2.21; "Error: network %s not found." left plugin/net.cc after 2.26).
NCCL_TAGS = ("v2.14.3-1", "v2.18.6-1", "v2.19.4-1", "v2.20.5-1",
             "v2.21.5-1", "v2.26.6-1", "v2.27.7-1", "v2.28.9-1", "v2.30.7-1")
# Every source file of src/ (2.28.9 has WARN( sites in some 90 files: enqueue.cc, graph/*.cc, register/*.cc,
# device/*.h, ras/*.cc ... besides the transports): a message from any of them can be the one a job printed.
NCCL_FILES = re.compile(r"^src/.+\.(cc|h|cu|cpp)$")

CLASSES = ("hardware", "code", "data", "resources", "environment", "image", "network", "distributed",
           "storage", "permission", "external", "internal", "benign")
CODES = ("training.code_error", "training.cuda_oom", "training.gpu_not_visible", "gpu.unhealthy_device",
         "training.numerical", "storage.disk_full", "nccl.network_config", "nccl.peer_unresponsive",
         "nccl.invalid_usage", "nccl.timeout", "training.rendezvous_failed", "training.shm_exhausted",
         "training.terminated")


# ---------------------------------------------------------------------------------------------- CUDA
# Classed by name (the runtime's); the driver's CUresult of the same number inherits the class, since
# CUDA numbers the two enums alike (captured: every shared number has the same message).
CUDA_RULES: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    # Hardware reports themselves: the only CUDA errors that may blame the GPU.
    "hardware": ("gpu.unhealthy_device", (
        "cudaErrorECCUncorrectable", "cudaErrorHardwareStackError", "cudaErrorNvlinkUncorrectable")),
    # Error containment: an invalid peer access over NVLink or a hardware error; the Xid (94/95) decides.
    "hardware?": (None, ("cudaErrorContained",)),
    "resources": ("training.cuda_oom", ("cudaErrorMemoryAllocation",)),
    # Not memory: a launch configuration or a per-device limit.
    "resources-": (None, (
        "cudaErrorLaunchOutOfResources", "cudaErrorTooManyPeers",
        "cudaErrorLaunchPendingCountExceeded", "cudaErrorMpsMaxClientsReached", "cudaErrorMpsMaxConnectionsReached")),
    "environment": ("training.gpu_not_visible", (
        "cudaErrorNoDevice", "cudaErrorInvalidDevice", "cudaErrorInsufficientDriver", "cudaErrorSystemDriverMismatch",
        "cudaErrorDevicesUnavailable", "cudaErrorInitializationError", "cudaErrorStubLibrary",
        "cudaErrorCompatNotSupportedOnDevice", "cudaErrorSystemNotReady", "cudaErrorDeviceUninitialized",
        "cudaErrorCallRequiresNewerDriver", "cudaErrorDeviceNotLicensed", "cudaErrorSoftwareValidityNotEstablished",
        "cudaErrorStartupFailure")),
    "environment-": (None, (
        "cudaErrorMpsConnectionFailed", "cudaErrorMpsRpcFailure", "cudaErrorMpsServerNotReady",
        "cudaErrorMpsClientTerminated", "cudaErrorCdpNotSupported", "cudaErrorOperatingSystem",
        "cudaErrorNotSupported", "cudaErrorDeviceAlreadyInUse", "cudaErrorPeerAccessUnsupported",
        "cudaErrorUnsupportedExecAffinity")),
    "image": (None, (
        "cudaErrorNoKernelImageForDevice", "cudaErrorInvalidKernelImage", "cudaErrorInvalidSource", "cudaErrorInvalidPtx",
        "cudaErrorUnsupportedPtxVersion", "cudaErrorJitCompilerNotFound", "cudaErrorJitCompilationDisabled",
        "cudaErrorSharedObjectSymbolNotFound", "cudaErrorSharedObjectInitFailed", "cudaErrorFileNotFound",
        "cudaErrorSymbolNotFound", "cudaErrorCdpVersionMismatch", "cudaErrorUnsupportedDevSideSync",
        "cudaErrorFunctionNotLoaded", "cudaErrorInvalidDeviceFunction")),
    "permission": (None, ("cudaErrorNotPermitted",)),
    "external": (None, ("cudaErrorExternalDevice",)),
    "internal": (None, ("cudaErrorUnknown",)),
    "benign": (None, (
        "cudaSuccess", "cudaErrorNotReady", "cudaErrorCudartUnloading", "cudaErrorProfilerDisabled",
        "cudaErrorProfilerNotInitialized", "cudaErrorProfilerAlreadyStarted", "cudaErrorProfilerAlreadyStopped",
        "cudaErrorPeerAccessAlreadyEnabled", "cudaErrorContextIsDestroyed")),
}
# Everything else is the job's CUDA code or a library kernel it called (illegal address, misaligned
# address, device-side assert, launch failure, illegal instruction, stream capture misuse, invalid value...).
CUDA_DEFAULT = ("code", "training.code_error")
CUDA_DRIVER_ONLY = {"CUDA_ERROR_CONTEXT_ALREADY_CURRENT": ("code", "training.code_error"),
                    "CUDA_ERROR_KEY_ROTATION": ("environment", None)}

CUDA_MEANING = {
    "hardware": "The GPU itself reported a fault: stop using it, drain the node and replace the instance if "
                "dmesg shows the matching Xid or it repeats.",
    "hardware?": "The GPU's error containment stopped the process: an Xid 94/95 in dmesg makes it a memory error "
                 "on this GPU, without one it is an invalid access of peer GPU memory by the code.",
    "resources": "The GPU ran out of memory: reduce the batch size or model footprint, or find which other "
                 "process holds GPU memory.",
    "resources-": "The GPU ran out of a resource the job asked for: ask for less (block size, peers, "
                  "processes per GPU) or use a bigger GPU.",
    "environment": "The process cannot use the GPU as set up: check the pod's nvidia.com/gpu limit, "
                   "CUDA_VISIBLE_DEVICES and that the image's CUDA runtime suits the node's driver.",
    "environment-": "The GPU's setup on this node (MPS, driver features, compute mode) does not allow what the "
                    "job asked: check the node's GPU configuration against the job's needs.",
    "image": "The GPU code built into the image does not fit this GPU or driver: use an image built for this "
             "GPU architecture and CUDA version.",
    "permission": "The driver refused the operation: the container lacks the privilege or the GPU's mode forbids it.",
    "external": "A device outside CUDA reported an asynchronous error: look at the other device's driver log.",
    "internal": "CUDA could not name the error: check dmesg on the node for an Xid (79, 119) and whether the "
                "container lost access to its GPU, then rerun.",
    "benign": "Not a failure by itself (a status or a shutdown message): look for the first error before it.",
    "code": "A fault of the job's CUDA code or of a library kernel it called, not of the GPU: rerun with "
            "CUDA_LAUNCH_BLOCKING=1 (or compute-sanitizer) to find the kernel; the process must restart.",
}
CUDA_MEANING_BY_NAME = {
    "cudaErrorLaunchOutOfResources": "A kernel asked for more registers or threads per block than the GPU has: a "
                                     "launch configuration of the code or library, not a memory shortage.",
    "cudaErrorNoDevice": "The process sees no GPU: the container has no nvidia.com/gpu limit or "
                         "CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES hide them.",
    "cudaErrorInvalidDevice": "The process asked for a GPU index it does not have: more ranks per node than GPUs "
                              "in the pod (nproc_per_node vs nvidia.com/gpu) or a wrong LOCAL_RANK mapping.",
    "cudaErrorInsufficientDriver": "The node's NVIDIA driver is older than the image's CUDA runtime needs: use an "
                                   "image built for the node's driver or a node AMI with a newer driver.",
    "cudaErrorSystemDriverMismatch": "The driver's user-space library and kernel module differ (driver updated "
                                     "without a reboot): reboot or replace the node.",
    "cudaErrorDevicesUnavailable": "The GPU is busy or unavailable: another process holds it in exclusive compute "
                                   "mode, or two pods were given the same GPU.",
    "cudaErrorAssert": "A device-side assert in the job's code fired (typically an index out of range, e.g. a label "
                       ">= num_classes): rerun with CUDA_LAUNCH_BLOCKING=1 to see which; not the GPU.",
    "cudaErrorIllegalAddress": "A kernel read or wrote memory it does not own, a bug in the job's code or a library "
                               "kernel, not the GPU: rerun with CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer.",
    "cudaErrorECCUncorrectable": "The GPU's memory reported an uncorrectable ECC error: drain the node and replace "
                                 "the instance; restart the job from its last checkpoint.",
    "cudaErrorNoKernelImageForDevice": "The image's PyTorch or extension was not built for this GPU's architecture: "
                                       "use a build that includes it (TORCH_CUDA_ARCH_LIST) or another GPU type.",
    "cudaErrorUnknown": CUDA_MEANING["internal"],
}


def header_docs(path: Path) -> dict[str, str]:
    """name -> the doc comment right above it in an enum block."""
    text = path.read_text()
    docs = {}
    for m in re.finditer(r"/\*\*(.*?)\*/\s*([A-Za-z_][A-Za-z0-9_]*)\s*=", text, re.S):
        lines = [re.sub(r"^\s*\*\s?", "", line) for line in m.group(1).splitlines()]
        doc = " ".join(line.strip() for line in lines if line.strip())
        doc = re.sub(r"\\ref\s+\S+\s+\"([^\"]*)\"", r"\1", doc)
        doc = doc.replace("\\deprecated", "Deprecated.").replace("::", "").replace("\\p ", "")
        docs[m.group(2)] = re.sub(r"\s+", " ", doc).strip()
    return docs


def cuda_rule(name: str) -> tuple[str, str | None]:
    for rule, (code, names) in CUDA_RULES.items():
        if name in names:
            return rule, code
    return CUDA_DEFAULT


def klass_of(rule: str) -> str:
    return rule.rstrip("?-")


def cuda_tables(captured: dict) -> tuple[dict, dict]:
    versions = captured["versions"]
    runtime_docs = header_docs(CAPTURED / "driver_types.cudaError.h")
    driver_docs = header_docs(CAPTURED / "cuda.CUresult.h")
    runtime, by_number = [], {}
    for e in captured["cuda_runtime"]["errors"]:
        rule, code = cuda_rule(e["name"])
        meaning = CUDA_MEANING_BY_NAME.get(e["name"], CUDA_MEANING[rule])
        row = entry(name=e["name"], message=e["message"], klass=klass_of(rule), meaning=meaning, code=code,
                    number=e["code"], doc=runtime_docs.get(e["name"], ""))
        runtime.append(row)
        by_number[e["code"]] = row
    driver = []
    for e in captured["cuda_driver"]["errors"]:
        twin = by_number.get(e["code"])
        if e["name"] in CUDA_DRIVER_ONLY or twin is None:
            klass, code = CUDA_DRIVER_ONLY.get(e["name"], ("internal", None))
            meaning = CUDA_MEANING["environment-" if klass == "environment" else klass]
        else:
            klass, code, meaning = twin["class"], twin["code"], twin["meaning"]
        driver.append(entry(name=e["name"], message=e["message"], klass=klass, meaning=meaning, code=code,
                            number=e["code"], doc=driver_docs.get(e["name"], ""),
                            runtime_name=twin["name"] if twin else None))
    source = (f"captured/tables.json: cudaGetErrorName/cudaGetErrorString of {captured['cuda_runtime']['library']} "
              f"(CUDA runtime {captured['cuda_runtime']['runtime_version']}, torch {versions['torch']}) on an "
              f"{versions['gpu']}, by scripts/gpu_failures/capture.py; docs from CUDA 13.0 driver_types.h")
    dsource = (f"captured/tables.json: cuGetErrorName/cuGetErrorString of {captured['cuda_driver']['library']} "
               f"(driver {versions['nvidia-smi'].split(', ')[-1]}, CUDA {captured['cuda_driver']['driver_version']}) "
               f"on an {versions['gpu']}, by scripts/gpu_failures/capture.py; docs from CUDA 13.0 cuda.h")
    return table(source, runtime), table(dsource, driver)


# ---------------------------------------------------------------------------------------------- NCCL
NCCL_RESULT_RULES = {
    "ncclSuccess": ("benign", None, "No error."),
    "ncclUnhandledCudaError": ("internal", None, "A CUDA call inside NCCL failed: the CUDA error in NCCL's "
                               "'Cuda failure' WARN line decides what it is (see the CUDA table)."),
    "ncclSystemError": ("environment", None, "A system call inside NCCL failed (socket, shared memory, "
                        "memory): the WARN line's strerror says which; /dev/shm too small is the common case in a pod."),
    "ncclInternalError": ("internal", None, "NCCL hit an internal inconsistency, often after a peer or the "
                          "network failed first: look for the first WARN line and the first failing rank."),
    "ncclInvalidArgument": ("code", "nccl.invalid_usage", "The job passed NCCL an invalid argument (a bad "
                            "buffer, count, datatype or communicator): a bug in the job's distributed code."),
    "ncclInvalidUsage": ("code", "nccl.invalid_usage", "The job used NCCL wrongly: more ranks than GPUs in "
                         "the pod, two ranks on one GPU, or mismatched collectives."),
    "ncclRemoteError": ("distributed", "nccl.peer_unresponsive", "A peer rank exited or the network to it "
                        "failed: find the rank that failed first; this one is a consequence."),
    "ncclInProgress": ("benign", None, "A non-blocking NCCL call is still in progress: not an error by itself."),
    "ncclTimeout": ("distributed", "nccl.timeout", "An NCCL operation timed out: a straggling or hung rank, "
                    "or a network stall."),
}


def nccl_results_table(captured: dict, nccl: dict) -> dict:
    printed = {r["code"]: r["message"] for r in captured["nccl"]["results"]}
    rows = []
    for name, number in nccl["results"]:
        if name == "ncclNumResults":
            continue
        klass, code, meaning = NCCL_RESULT_RULES.get(name, ("internal", None, "An NCCL result this table does not class yet."))
        message = printed.get(number)
        if message in (None, "unknown result code"):
            message = nccl["error_strings"].get(name, "")
        rows.append(entry(name=name, message=message, klass=klass, meaning=meaning, code=code, number=number))
    source = (f"NVIDIA/nccl src/nccl.h.in at {nccl['results_tag']} ({nccl['commits'][nccl['results_tag']]}); messages: "
              f"ncclGetErrorString of NCCL {captured['versions']['torch.nccl']} as captured (torch {captured['versions']['torch']}), "
              f"else src/init.cc at {nccl['results_tag']}")
    return table(source, rows)


# printf conversions -> bounded RE2 classes; %s in the middle is lazy so the next literal anchors it.
_CONV = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|z|j|t|L|q)?([diouxXeEfgGcspm%])")
_INT = r"(-?[0-9]{1,20})"
_HEX = r"((?:0x)?[0-9a-fA-F]{1,16}|\(nil\))"
_FLOAT = r"([-+0-9.eEinfa]{1,40})"
_RE2_SPECIAL = set("\\.^$|?*+()[]{}")
# Formats too generic to name a failure: fewer letters than this outside the conversions.
_MIN_LETTERS = 8


def format_to_pattern(fmt: str) -> str:
    out, pos = [], 0
    for m in _CONV.finditer(fmt):
        out.append("".join("\\" + c if c in _RE2_SPECIAL else c for c in fmt[pos:m.start()]))
        conv = m.group(5)
        if conv == "%":
            out.append("%")
        elif conv in "diu":
            out.append(_INT)
        elif conv in "xXp":
            out.append(_HEX)
        elif conv in "eEfgG":
            out.append(_FLOAT)
        elif conv == "c":
            out.append("(.)")
        else:  # s, m (strerror(errno))
            out.append("(.{0,400})" if m.end() == len(fmt) else "(.{0,400}?)")
        pos = m.end()
    out.append("".join("\\" + c if c in _RE2_SPECIAL else c for c in fmt[pos:]))
    return "".join(out)


def sample_of(fmt: str) -> str:
    """The format with sample values, for the test that each pattern matches its own format."""
    def value(m: re.Match) -> str:
        conv = m.group(5)
        return {"%": "%", "d": "12", "i": "12", "u": "12", "o": "17", "x": "1f", "X": "1F", "p": "0x7f3a2c001000",
                "c": "x", "e": "1.5e+03", "E": "1.5E+03", "f": "1.5", "g": "1.5", "G": "1.5"}.get(conv, "eth0")
    return _CONV.sub(value, fmt)


_NCCL_COORDINATION = "NCCL's coordination between ranks failed: look for the first failing rank and its first WARN line."

# (class, code, words any of which in the lowercased format picks the rule); first rule that matches wins.
NCCL_WARN_RULES: tuple[tuple[str, str | None, tuple[str, ...], str], ...] = (
    ("internal", None, ("cuda failure",),
     "A CUDA call inside NCCL failed: the quoted CUDA error decides (see the CUDA table); an ECC or Xid message "
     "there makes it the GPU's, an illegal address the code's."),
    ("resources", "training.shm_exhausted", ("/dev/shm", "shared memory", "shm ", "failed to extend", "could not map"),
     "NCCL could not create or grow its shared-memory segment: /dev/shm in the pod is too small (mount an "
     "emptyDir with medium: Memory there) or NCCL_SHM_DISABLE=1."),
    ("environment", "nccl.network_config", (
        "no socket interface found", "no usable listening interface", "no interface found",
        "failed to initialize any net plugin", "network %s not found", "no device found matching",
        "no device found after excluding", "no ip interface found", "unable to open device",
        "invalid nccl_comm_id", "no valid", "unable to query device", "can't make virtual nic",
        "incompatible devices", "device is incompatible", "plugin has incompatible version"),
     "NCCL cannot set up its network in this pod: NCCL_SOCKET_IFNAME / NCCL_IB_HCA name interfaces the pod "
     "lacks, or NCCL_NET forces a plugin (IB, AWS Libfabric) the image or node does not have."),
    ("code", "nccl.invalid_usage", ("duplicate gpu detected", "multiple ranks are using the same gpu",
                                    "invalid rank requested", "invalid device count", "improper usage",
                                    "mismatched nccl version", "before the previous operation returned",
                                    "invalid arguments comm", "nccl version mismatch with remote peer",
                                    "compiled with nccl version", "compiled with too old version of nccl",
                                    "multiple ranks using the same nvml device"),
     "NCCL refused the job's configuration: more ranks than GPUs in the pod, two ranks on one GPU, or "
     "mismatched NCCL builds across ranks."),
    # NCCL_ALGO / NCCL_PROTO leave no algorithm for the collective (src/enqueue.cc; since 2.28 the message
    # names the variables and NCCL returns ncclInvalidUsage for them, src/graph/tuning.cc prints
    # "NCCL_ALGO set by environment to %s" at INFO): the setting, not a peer, is the cause.
    ("environment", "nccl.network_config", ("no algorithm/protocol available", "ignoring nccl_algo"),
     "NCCL found no algorithm/protocol for the collective: NCCL_ALGO / NCCL_PROTO (named in the message since "
     "2.28, or in an INFO line 'NCCL_ALGO set by environment to ...') exclude every algorithm this topology "
     "supports (NVLS needs NVSwitch, CollNet needs SHARP): unset them or pick one the topology has; with neither "
     "set it is an internal NCCL error."),
    # The node's driver, CUDA or NVML libraries as NCCL loads them (src/misc/cudawrap.cc, nvmlwrap.cc,
    # strongstream.cc): the image's or the node's set-up.
    ("environment", "training.gpu_not_visible", ("cuda driver version found is", "minimum requirement is",
                                                 "installed cuda driver is older", "failed to find cuda library",
                                                 "failed to load cuda missing symbol", "libnvidia-ml.so",
                                                 "requires cuda driver"),
     "NCCL cannot use the node's NVIDIA driver from this container: the driver is older than NCCL or the image's "
     "CUDA needs, or the driver libraries (libcuda, libnvidia-ml) are not mounted (no NVIDIA runtime, no "
     "nvidia.com/gpu limit)."),
    # Multi-node NVLink, NVLink SHARP and the topology files NCCL was told to read: the node's configuration.
    ("environment", None, ("imex", "nvlink sharp", "xml topology file", "xml graph file", "xml parse",
                           "xml topology has wrong version", "xml graph has wrong version", "nccl_topo_file"),
     "The node's GPU fabric set-up (IMEX channels for multi-node NVLink, Fabric Manager for NVLink SHARP) or a "
     "topology file NCCL was told to read (NCCL_TOPO_FILE, NCCL_GRAPH_FILE) does not fit: fix the node's "
     "configuration or unset the variable (NCCL_MNNVL_ENABLE=0, NCCL_NVLS_ENABLE=0 to do without)."),
    ("hardware", None, ("probably due to a hardware issue",),
     "NCCL found NVLink-connected GPUs that cannot reach each other peer to peer: a hardware or driver fault of "
     "the node; check nvidia-smi topo -m and the node's Xids, and replace the instance if it persists."),
    # API misuse caught by src/misc/argcheck.cc, src/enqueue.cc and src/group.cc: the job's code.
    ("code", "nccl.invalid_usage", ("argument is null", "invalid root", "invalid type %d", "invalid reduction operation",
                                    "is not a valid pointer", "mismatchs with nccl device", "without a matching",
                                    "not in a group call", "are not allowed in the same group",
                                    "must be initialized via", "not initialized via", "ncclredopdestroy",
                                    "unknown to this communicator", "does not match type given to reduction",
                                    "fp8 reduction support begins", "either none or all communicators",
                                    "must either be all uncaptured"),
     "The job called NCCL wrongly (a NULL or foreign buffer, a bad root, datatype or reduction, mismatched group "
     "calls): a bug in the job's distributed code or a library it uses."),
    ("distributed", "nccl.peer_unresponsive", ("connection closed by remote peer", "message truncated",
                                               "remote process exited", "got completion from peer",
                                               "closed by remote"),
     "A peer rank went away or sent something unexpected: find the rank that failed first; this rank's "
     "error is a consequence."),
    ("network", None, ("connect to", "socketpollconnect", "accept failed", "call to %s %s failed",
                       "error encountered when getting address info", "async fatal event", "cqe with error",
                       "got non-fatal async event", "gid table changed", "socket progress error",
                       "net/ib", "net/socket", "net :", "socket"),
     "A network operation of NCCL failed (socket, InfiniBand or EFA): check the NICs and the security groups "
     "between the nodes, then the other ranks' logs."),
    # 2.14's proxy.cc "Proxy Call to rank %d failed (%s)" names the peer and the proxy operation, not a
    # system call's strerror: the coordination rule's, ahead of the system-call one below.
    ("distributed", None, ("proxy call to rank",), _NCCL_COORDINATION),
    ("environment", None, ("call to ", "failed: %s", "thread creation failed", "failed to malloc",
                           "failed to cuda", "allocation failed", "unable to create thread context"),
     "A system or allocation call inside NCCL failed: the quoted strerror (see the errno table) says what "
     "the node or pod lacks."),
    # Libraries NCCL opens at run time (src/misc/ibvwrap.cc, mlx5dvwrap.cc, gdrwrap.cc): the image or the node.
    ("environment", None, ("dlsym failed", "dlvsym failed", "lib wrapper not initialized", "gdrcopy", "gdr_",
                           "failed to open %s"),
     "A library NCCL loads at run time (libibverbs, libmlx5, GDRCopy) is missing or failed in this image or on "
     "this node: install it in the image or disable the feature (NCCL_GDRCOPY_ENABLE=0, NCCL_IB_DISABLE=1)."),
    ("resources", None, ("returned null", "failed to allocate"),
     "A host memory allocation inside NCCL failed: the container is at its memory limit; raise the limit or "
     "lower what the job holds in host memory."),
    ("distributed", None, ("bootstrap", "proxy", "rank", "comm ", "communicator", "peer"), _NCCL_COORDINATION),
)
NCCL_WARN_DEFAULT = ("internal", None, "An internal check of NCCL failed, usually after an earlier error: "
                     "read the first WARN line of the first failing rank.")


# src/os/windows*.cc (2.30+) is NCCL's Windows build: a Linux pod never prints its formats.
_WINDOWS_ONLY = re.compile(r"^v[^:]+:src/os/windows[^/]*$")
NCCL_WARN_WINDOWS = ("environment", None, "Printed only by NCCL's Windows build (src/os/windows*.cc): not from a "
                     "Linux node; read the first WARN line of the first failing rank.")


def classify_warn(fmt: str, where: list[str] | None = None) -> tuple[str, str | None, str]:
    if where and all(_WINDOWS_ONLY.match(w.rsplit(":", 1)[0]) for w in where):
        return NCCL_WARN_WINDOWS
    low = fmt.lower()
    for klass, code, words, meaning in NCCL_WARN_RULES:
        if any(w in low for w in words):
            return klass, code, meaning
    return NCCL_WARN_DEFAULT


def nccl_warnings_table(nccl: dict) -> dict:
    rows = []
    for w in nccl["warns"]:
        fmt = w["format"]
        if sum(c.isalpha() for c in _CONV.sub("", fmt)) < _MIN_LETTERS:
            continue
        klass, code, meaning = classify_warn(fmt, w["where"])
        rows.append(entry(name=fmt, message=fmt, klass=klass, meaning=meaning, code=code,
                          pattern=format_to_pattern(fmt), sample=sample_of(fmt), where=w["where"]))
    tags = ", ".join(f"{t} ({nccl['commits'][t][:12]})" for t in nccl["tags"])
    return table(f"NVIDIA/nccl WARN(...) formats of {', '.join(nccl['files'])} at {tags}", rows)


# --------------------------------------------------------------------------------------- errno, signals
ERRNO_RULES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "storage": ("storage.disk_full", ("ENOSPC", "EDQUOT")),
    "storage-": (None, ("EIO", "EFBIG", "ESTALE", "EUCLEAN", "ENOMEDIUM", "EMEDIUMTYPE", "EXDEV", "ETXTBSY", "EMLINK",
                        "EREMOTEIO", "ENOTBLK", "ENAVAIL", "EISNAM", "ENOTNAM", "EBADE", "EBADR", "EBADSLT", "EBFONT")),
    "resources": (None, ("ENOMEM", "EBUSY", "EMFILE", "ENFILE", "ENOBUFS", "EAGAIN", "EWOULDBLOCK", "EUSERS", "ENOSR", "ENOLCK")),
    "network": (None, ("ECONNREFUSED", "ETIMEDOUT", "EHOSTUNREACH", "ECONNRESET", "EADDRINUSE", "EADDRNOTAVAIL",
                       "ENETUNREACH", "ENETDOWN", "ENETRESET", "ECONNABORTED", "EHOSTDOWN", "EPIPE", "ENOTCONN",
                       "EISCONN", "ESHUTDOWN", "ETOOMANYREFS", "EPROTO", "EPROTONOSUPPORT", "EPROTOTYPE",
                       "ENOPROTOOPT", "EAFNOSUPPORT", "EPFNOSUPPORT", "EDESTADDRREQ", "EMSGSIZE", "ENOTSOCK",
                       "ESOCKTNOSUPPORT", "ECOMM", "ENONET", "ENOLINK", "EREMOTE", "ETIME", "EBADMSG", "ENOSTR",
                       "EREMCHG", "ENOTUNIQ", "EBADFD", "EMULTIHOP", "EDOTDOT", "ENOANO", "EADV", "ESRMNT")),
    "permission": (None, ("EACCES", "EPERM", "EROFS", "EKEYREJECTED", "EKEYREVOKED", "EKEYEXPIRED", "ENOKEY",
                          "EOWNERDEAD", "ENOTRECOVERABLE", "EHWPOISON", "ERFKILL")),
    "environment": (None, ("ENOENT", "ENOTDIR", "ENXIO", "ENODEV", "ENOEXEC", "ELIBBAD", "ELIBACC", "ELIBMAX",
                           "ELIBSCN", "ELIBEXEC", "ENOPKG", "ENOSYS", "ENOTSUP", "EOPNOTSUPP", "ESRCH", "ECHILD",
                           "ENOTTY", "ENODATA", "ENOTEMPTY", "EISDIR", "EEXIST", "ELOOP", "ENAMETOOLONG")),
    "benign": (None, ("EINTR", "EINPROGRESS", "EALREADY", "ECANCELED", "ERESTART")),
    "code": (None, ("EINVAL", "EBADF", "EFAULT", "ERANGE", "EDOM", "ESPIPE", "EILSEQ", "EDEADLK", "EDEADLOCK",
                    "E2BIG", "EOVERFLOW", "ENOMSG", "EIDRM", "ECHRNG", "EL2NSYNC", "EL3HLT", "EL3RST", "ELNRNG",
                    "EUNATCH", "ENOCSI", "EL2HLT", "EXFULL", "ESTRPIPE", "EBADRQC", "ENOTCAPABLE")),
}
ERRNO_DEFAULT = ("internal", None)
ERRNO_MEANING = {
    "storage": "A filesystem the job writes is full (checkpoints, caches, logs): free space or give the pod a "
               "larger volume or ephemeral-storage request.",
    "storage-": "The filesystem or device failed the operation: check the volume (EBS, FSx, NFS) and the node's "
                "kernel log.",
    "resources": "The process hit a memory or descriptor limit: raise the pod's memory limit or the open-file "
                 "limit, or use fewer workers.",
    "network": "A network connection failed: the peer is down or not yet listening, a Service or port is wrong, "
               "or a security group blocks it; check the other side first.",
    "permission": "The operation was refused: the container's user, a read-only mount or a missing capability; "
                  "check the pod's securityContext and volume mounts.",
    "environment": "A file, device or program the job expects is not there: check the path, the mounted volumes "
                   "and the image.",
    "benign": "A transient or informational status, not a failure by itself: look for the error that followed.",
    "code": "The call was made with an invalid argument or in a wrong state: a bug in the job's code or a library.",
    "internal": "An uncommon system error: the call that failed names what to look at.",
}
ERRNO_MEANING_BY_NAME = {
    "ENOMEM": "The kernel could not allocate memory for the process: the pod is near its memory limit or the node "
              "is out of memory; raise the limit or use fewer DataLoader workers.",
    "ENOENT": "A file or directory the job opened does not exist: check the path, the volume mount and whether "
              "a previous step wrote it.",
    "EADDRINUSE": "The port is already taken: another process (or a previous attempt of the job) is still "
                  "listening on MASTER_PORT; pick another port or wait for it to exit.",
    "ECONNREFUSED": "Nothing listens at the address yet: the master or store is not up, or MASTER_ADDR / the "
                    "Service point elsewhere.",
}

SIGNAL_RULES: dict[str, tuple[str, str | None, str]] = {
    "SIGKILL": ("resources", "training.terminated",
                "Killed outright: usually the kernel's OOM killer (the pod hit its memory limit: OOMKilled), "
                "otherwise a forced kill from outside (kubectl delete --force, eviction past its grace period)."),
    "SIGTERM": ("external", "training.terminated",
                "Asked to stop from outside (pod deletion, eviction, node drain, torchrun stopping the other ranks "
                "after one failed): look for the rank or event that came first."),
    "SIGBUS": ("resources", "training.shm_exhausted",
               "Touched shared or mapped memory that is not there: /dev/shm is too small for DataLoader workers or "
               "NCCL (mount an emptyDir with medium: Memory), or a mmapped file was truncated."),
    "SIGSEGV": ("code", None, "A native crash (segmentation fault) in the job's extension code or a library: "
                              "read the faulthandler / core dump stack to see which."),
    "SIGABRT": ("code", None, "A native library aborted, usually after a failed check or an uncaught C++ "
                              "exception printed just before: read the lines above it."),
    "SIGILL": ("image", None, "An instruction the CPU does not support: the image was built for a newer CPU than "
                              "the node's (or a corrupt binary)."),
    "SIGFPE": ("code", None, "A native arithmetic fault (integer division by zero) in the job's or a library's "
                             "native code."),
    "SIGINT": ("external", "training.terminated", "Interrupted (Ctrl-C or an interrupt sent by a launcher)."),
    "SIGHUP": ("external", "training.terminated", "The controlling terminal went away (an interactive session "
                                                  "closed): run the job detached."),
    "SIGQUIT": ("external", None, "Asked to quit and dump core from outside."),
    "SIGPIPE": ("network", None, "Wrote to a pipe or socket whose reader had gone: the other side exited first."),
    "SIGXFSZ": ("storage", None, "A file grew past the process's file-size limit (ulimit -f)."),
    "SIGXCPU": ("resources", None, "The process used up its CPU-time limit (ulimit -t)."),
    "SIGSYS": ("permission", None, "A system call the container's seccomp profile forbids: use a profile that "
                                   "allows it."),
    "SIGTRAP": ("code", None, "A breakpoint or trap instruction in native code (a debugger or a failed check)."),
    "SIGSTKFLT": ("code", None, "A coprocessor stack fault in native code."),
    "SIGUSR1": ("external", None, "A user-defined signal the process did not handle, sent from outside."),
    "SIGUSR2": ("external", None, "A user-defined signal the process did not handle, sent from outside."),
    "SIGALRM": ("code", None, "A timer the process set expired without a handler."),
    "SIGVTALRM": ("code", None, "A virtual timer the process set expired without a handler."),
    "SIGPROF": ("code", None, "A profiling timer expired without a handler."),
    "SIGPWR": ("external", None, "The system announced a power failure."),
}
SIGNAL_DEFAULT = ("benign", None, "Not a failure by itself (job control or a notification): look for the error "
                                  "that came with it.")


def errno_table(snapshot: dict) -> dict:
    rows = []
    for e in snapshot["errno"]:
        rule = next((r for r, (_, names) in ERRNO_RULES.items() if e["name"] in names), None)
        klass, code = (klass_of(rule), ERRNO_RULES[rule][0]) if rule else ERRNO_DEFAULT
        meaning = ERRNO_MEANING_BY_NAME.get(e["name"], ERRNO_MEANING[rule or "internal"])
        rows.append(entry(name=e["name"], message=e["strerror"], klass=klass, meaning=meaning, code=code,
                          number=e["number"]))
    return table(f"Python {snapshot['python']} errno.errorcode and os.strerror on {snapshot['platform']} "
                 f"(glibc {snapshot['libc']}), snapshot upstream/python_errno_signals.json", rows)


def signals_table(snapshot: dict) -> dict:
    rows = []
    for s in snapshot["signals"]:
        klass, code, meaning = SIGNAL_RULES.get(s["name"], SIGNAL_DEFAULT)
        rows.append(entry(name=s["name"], message=s["strsignal"], klass=klass, meaning=meaning, code=code,
                          number=s["number"]))
    return table(f"Python {snapshot['python']} signal.Signals and signal.strsignal on {snapshot['platform']} "
                 f"(glibc {snapshot['libc']}), snapshot upstream/python_errno_signals.json", rows)


# ---------------------------------------------------------------------------------------------- exceptions
EXCEPTION_RULES: dict[str, tuple[str, str | None, str]] = {
    "ModuleNotFoundError": ("image", None, "The image lacks a Python module the job imports: install it in the "
                                           "image (or fix the module path / PYTHONPATH)."),
    "ImportError": ("image", None, "A module or one of its native libraries could not be loaded: the image lacks "
                                   "it or has a build that does not match (CUDA, Python or torch version)."),
    "FileNotFoundError": ("environment", None, "A file the job opens is not there: check the path, the volume "
                                               "mount and whether an earlier step wrote it."),
    "NotADirectoryError": ("environment", None, "A path the job treats as a directory is a file: check the path."),
    "IsADirectoryError": ("environment", None, "A path the job opens as a file is a directory: check the path."),
    "FileExistsError": ("code", None, "The job creates a file or directory that already exists: use exist_ok or "
                                      "a fresh output path."),
    "PermissionError": ("permission", None, "The job may not read or write a path: the container's user, a "
                                            "read-only mount or the volume's ownership (fsGroup)."),
    "OSError": ("environment", None, "An operating-system call failed: its errno (see the errno table) says why."),
    "EnvironmentError": ("environment", None, "An operating-system call failed: its errno says why."),
    "IOError": ("environment", None, "An operating-system call failed: its errno says why."),
    "BlockingIOError": ("benign", None, "A non-blocking operation would block: not a failure by itself."),
    "InterruptedError": ("benign", None, "A system call was interrupted by a signal: look for the signal."),
    "ChildProcessError": ("internal", None, "A child-process operation failed: the child was already reaped."),
    "ProcessLookupError": ("internal", None, "The process to signal no longer exists."),
    "ConnectionError": ("network", None, "A network connection failed: check that the other side is up and "
                                         "reachable."),
    "ConnectionRefusedError": ("network", None, "Nothing listens at the address yet: the master or server is not "
                                                "up, or the address points elsewhere."),
    "ConnectionResetError": ("network", None, "The other side dropped the connection: it exited or crashed first."),
    "ConnectionAbortedError": ("network", None, "The connection was aborted on this side."),
    "BrokenPipeError": ("network", None, "Wrote to a pipe or socket whose other side had gone: it exited first."),
    "TimeoutError": ("network", None, "An operation timed out: the other side is slow, hung or unreachable."),
    "MemoryError": ("resources", None, "The process ran out of host memory: raise the pod's memory limit, load "
                                       "less at once, or use fewer DataLoader workers."),
    "KeyboardInterrupt": ("external", "training.terminated", "Interrupted by SIGINT (Ctrl-C or a launcher "
                                                            "stopping the process)."),
    "SystemExit": ("code", None, "The program chose to exit with this status: read what it printed before."),
    "GeneratorExit": ("benign", None, "A generator was closed: not a failure."),
    "StopIteration": ("code", None, "An iterator ran out where the code did not expect it (e.g. next() on an "
                                    "empty DataLoader)."),
    "StopAsyncIteration": ("code", None, "An async iterator ran out where the code did not expect it."),
    "UnicodeError": ("data", None, "Text in the data could not be encoded or decoded: check the files' encoding."),
    "UnicodeDecodeError": ("data", None, "Bytes in the data are not valid in the expected encoding: check the "
                                         "files' encoding or open them in binary."),
    "UnicodeEncodeError": ("data", None, "Text could not be encoded (often printing to a non-UTF-8 stream): set "
                                         "PYTHONIOENCODING=utf-8."),
    "UnicodeTranslateError": ("data", None, "Text could not be translated between encodings."),
    "EOFError": ("data", None, "Input ended early: a truncated file or a closed pipe."),
    "BaseExceptionGroup": ("code", None, "Several exceptions at once: the grouped exceptions decide."),
    "ExceptionGroup": ("code", None, "Several exceptions at once: the grouped exceptions decide."),
    "RuntimeError": ("code", None, "A generic runtime error: its message decides (PyTorch raises most failures "
                                   "as RuntimeError, CUDA and NCCL ones included)."),
    "NotImplementedError": ("code", None, "The code called something not implemented for these inputs (an "
                                          "operator for this dtype or device)."),
    "RecursionError": ("code", None, "Infinite or too deep recursion in the job's code."),
    "FloatingPointError": ("code", "training.numerical", "A floating-point operation failed (numpy errstate "
                                                        "raise): NaN or overflow in the computation."),
    "OverflowError": ("code", None, "A number grew too large for its type."),
    "ZeroDivisionError": ("code", None, "Division by zero in the job's code (an empty batch or a count of zero)."),
    "Exception": ("code", None, "A generic exception: its message decides."),
    "BaseException": ("code", None, "A generic exception: its message decides."),
    # PyTorch
    "torch.OutOfMemoryError": ("resources", "training.cuda_oom", "The GPU ran out of memory: the numbers in the "
                               "message tell whether this process holds it (smaller batch, activation checkpointing, "
                               "bigger GPU) or another process does."),
    "torch.cuda.OutOfMemoryError": ("resources", "training.cuda_oom", "The GPU ran out of memory: the numbers in the "
                                    "message tell whether this process or another holds it."),
    "torch.AcceleratorError": ("code", None, "A CUDA (accelerator) error raised by PyTorch: the CUDA error in its "
                               "message decides (see the CUDA table); most are the code's, an ECC error the GPU's."),
    "torch.distributed.DistError": ("distributed", None, "A torch.distributed failure: the message decides."),
    "torch.distributed.DistBackendError": ("distributed", None, "The communication backend (NCCL) failed: the NCCL "
                                           "error and WARN lines in the message decide; look for the first failing rank."),
    "torch.distributed.DistStoreError": ("distributed", "training.rendezvous_failed", "The rendezvous store timed out "
                                         "or failed: not every rank arrived (one crashed or is still starting) or "
                                         "the store's address is wrong."),
    "torch.distributed.DistNetworkError": ("network", "training.rendezvous_failed", "A rank could not reach the "
                                           "rendezvous store (MASTER_ADDR:MASTER_PORT): the master is not up, the "
                                           "Service or port is wrong, or the port is taken."),
    "torch.distributed.DistQueueEmptyError": ("distributed", None, "A store queue was empty when read."),
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError": (
        "distributed", None, "torchrun reports that worker processes failed: its Root Cause entry (rank, exit "
        "code, signal, error file) is the failure; the other ranks are consequences."),
    "torch.distributed.elastic.multiprocessing.api.SignalException": (
        "external", "training.terminated", "The torchrun agent itself received a signal (SIGTERM from pod deletion "
        "or eviction) and stopped its workers."),
    "torch.distributed.elastic.rendezvous.api.RendezvousError": (
        "distributed", "training.rendezvous_failed", "Rendezvous between the nodes failed."),
    "torch.distributed.elastic.rendezvous.api.RendezvousClosedError": (
        "distributed", "training.rendezvous_failed", "The rendezvous was closed (the job is finishing or another "
        "node closed it after a failure): look at the other nodes."),
    "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError": (
        "distributed", "training.rendezvous_failed", "Not enough nodes joined the rendezvous in time: the other "
        "pods are pending, crashed, or point at another endpoint."),
    "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError": (
        "network", "training.rendezvous_failed", "The rendezvous backend (c10d store, etcd) could not be reached."),
    "torch.distributed.elastic.rendezvous.api.RendezvousStateError": (
        "distributed", None, "The rendezvous state is corrupt: restart the whole job."),
    "torch.distributed.elastic.rendezvous.api.RendezvousGracefulExitError": (
        "benign", None, "This node was not included in the rendezvous and left cleanly."),
    "torch._dynamo.exc.TorchDynamoException": ("code", None, "torch.compile failed: the message decides; "
                                               "TORCHDYNAMO_VERBOSE=1 shows where."),
    "torch._dynamo.exc.InternalTorchDynamoError": ("internal", None, "torch.compile hit an internal error: try "
                                                   "without compile or a newer PyTorch, and report it."),
    "torch._dynamo.exc.RestartAnalysis": ("benign", None, "Internal control flow of torch.compile, not a failure."),
    "torch._dynamo.exc.SkipFrame": ("benign", None, "Internal control flow of torch.compile, not a failure."),
    "torch._dynamo.exc.TorchRuntimeError": ("code", None, "An operation failed while torch.compile traced it (a "
                                            "shape or dtype error of the code): the message names it."),
    "torch._dynamo.exc.InvalidBackend": ("code", None, "torch.compile was given a backend name it does not know."),
    "torch._dynamo.exc.ResetRequired": ("code", None, "torch.compile was called with another backend without "
                                        "torch._dynamo.reset()."),
    "torch._dynamo.exc.ShortenTraceback": ("code", None, "torch.compile failed: the message decides."),
    "torch._dynamo.exc.BackendCompilerFailed": ("code", None, "torch.compile's backend failed: the inner exception "
                                                "in the message decides."),
    "torch._dynamo.exc.Unsupported": ("code", None, "torch.compile cannot trace this code (fullgraph=True or an "
                                      "unsupported construct): change the code or allow graph breaks."),
    "torch._dynamo.exc.RecompileError": ("code", None, "torch.compile had to recompile where it was told not to."),
    "torch._dynamo.exc.UserError": ("code", None, "torch.compile / export rejected the code: the message says how "
                                    "to change it."),
    "torch._dynamo.exc.UncapturedHigherOrderOpError": ("code", None, "torch.compile could not capture a "
                                                       "higher-order op (cond, map, checkpoint) in the code."),
    "torch._dynamo.exc.FailOnRecompileLimitHit": ("code", None, "torch.compile hit its recompile limit: the code's "
                                                  "shapes or guards change every step."),
    "torch._inductor.exc.OperatorIssue": ("code", None, "Inductor cannot lower an operator of the code."),
    "torch._inductor.exc.MissingOperatorWithoutDecomp": ("code", None, "Inductor has no lowering for an operator "
                                                         "the code uses."),
    "torch._inductor.exc.MissingOperatorWithDecomp": ("code", None, "Inductor has no lowering for an operator the "
                                                      "code uses (a decomposition exists)."),
    "torch._inductor.exc.LoweringException": ("code", None, "Inductor failed lowering an operator: the message names "
                                              "it and the inner error."),
    "torch._inductor.exc.InvalidCxxCompiler": ("image", None, "Inductor found no working C++ compiler in the image: "
                                               "install one (g++) or set TORCHINDUCTOR_CPP_CXX."),
    "torch._inductor.exc.CppCompileError": ("image", None, "Inductor's generated C++ did not compile: usually the "
                                            "image's compiler or headers (Python.h) are missing or too old."),
    "torch._inductor.exc.CUDACompileError": ("image", None, "Inductor's generated CUDA code did not compile: the "
                                             "image's nvcc or CUDA headers are missing or do not match."),
    "torch._inductor.exc.TritonMissing": ("image", None, "Inductor found no working Triton in the image: install "
                                          "the triton that matches torch."),
    "torch._inductor.exc.GPUTooOldForTriton": ("environment", None, "The GPU is too old for Triton (compute "
                                               "capability < 7.0): use another GPU or another backend."),
    "torch._inductor.exc.InductorError": ("code", None, "Inductor (torch.compile's default backend) failed: the "
                                          "inner exception in the message decides."),
    "triton.runtime.errors.OutOfResources": ("resources", None, "A Triton kernel needs more shared memory or "
                                             "registers than the GPU has: smaller block sizes or num_stages."),
    "triton.compiler.errors.CompilationError": ("code", None, "A Triton kernel of the code did not compile: the "
                                                "message points at the line."),
    "cupy_backends.cuda.api.runtime.CUDARuntimeError": ("code", None, "A CUDA runtime error raised by CuPy: the "
                                                        "cudaError name in the message decides (see the CUDA table)."),
    "cupy_backends.cuda.api.driver.CUDADriverError": ("code", None, "A CUDA driver error raised by CuPy: the "
                                                      "CUDA_ERROR name in the message decides (see the CUDA table)."),
    "cupy.cuda.memory.OutOfMemoryError": ("resources", "training.cuda_oom", "CuPy ran out of GPU memory."),
    "jax.errors.JaxRuntimeError": ("code", None, "An XLA runtime error raised by JAX: its status decides "
                                   "(RESOURCE_EXHAUSTED is out of memory, INTERNAL a CUDA or NCCL failure)."),
    "jaxlib.xla_extension.XlaRuntimeError": ("code", None, "An XLA runtime error raised by JAX: its status decides "
                                             "(RESOURCE_EXHAUSTED is out of memory)."),
    "safetensors_rust.SafetensorError": ("data", None, "A safetensors file could not be read: truncated or corrupt "
                                         "(an interrupted download or write); fetch or write it again."),
    "huggingface_hub.errors.HFValidationError": ("environment", None, "A model path was taken for a Hub repo id: "
                                                 "the local directory does not exist (check the mount and path)."),
    "huggingface_hub.errors.HfHubHTTPError": ("external", None, "The Hugging Face Hub answered with an HTTP error."),
    "huggingface_hub.errors.RepositoryNotFoundError": ("environment", None, "The Hub repository does not exist or "
                                                       "the token cannot see it: check the name and HF_TOKEN."),
    "huggingface_hub.errors.GatedRepoError": ("permission", None, "The Hub repository is gated: accept its terms "
                                              "and give the pod a token (HF_TOKEN) that has access."),
    "huggingface_hub.errors.RevisionNotFoundError": ("environment", None, "The requested revision of the Hub "
                                                     "repository does not exist."),
    "huggingface_hub.errors.EntryNotFoundError": ("environment", None, "The file is not in the Hub repository."),
    "huggingface_hub.errors.LocalEntryNotFoundError": ("environment", None, "The file is not in the local Hub cache "
                                                       "and downloads are off (HF_HUB_OFFLINE) or failed: pre-fetch it."),
    "huggingface_hub.errors.OfflineModeIsEnabled": ("environment", None, "A download was needed but HF_HUB_OFFLINE "
                                                    "is set: pre-fetch the files into the cache or volume."),
    "numpy._core._exceptions._ArrayMemoryError": ("resources", None, "numpy could not allocate an array in host "
                                                  "memory: the pod's memory limit or the array's size."),
    "json.decoder.JSONDecodeError": ("data", None, "A JSON file or record is malformed or truncated: check the "
                                     "data file the message names."),
    # Ray (python/ray/exceptions.py): its memory monitor kills tasks when the node's host memory runs low, and
    # its own OutOfMemoryError must not be taken for PyTorch's (GPU memory).
    "ray.exceptions.OutOfMemoryError": ("resources", "training.terminated", "Ray's memory monitor killed a task or "
                                        "actor because the node ran low on host memory (not GPU memory): give the "
                                        "Ray worker pods more memory or run fewer tasks per node."),
    "ray.exceptions.OutOfDiskError": ("storage", "storage.disk_full", "Ray's object store could not spill: the "
                                      "node's disk is over its threshold (95%)."),
    "ray.exceptions.NodeDiedError": ("external", None, "A Ray node died or became unreachable: its pod was evicted "
                                     "or OOM-killed or its node went away; read that pod's events."),
    "ray.exceptions.WorkerCrashedError": ("internal", None, "A Ray worker process died unexpectedly (a crash, a "
                                          "signal, the OOM killer): its own log and the raylet's say why."),
    "ray.exceptions.RayActorError": ("internal", None, "A Ray actor died unexpectedly: its own log or the raylet's "
                                     "says why (often the OOM killer or its node leaving)."),
    "ray.exceptions.RayTaskError": ("code", None, "A Ray task raised: the exception it wraps, printed with it, "
                                    "decides."),
    "ray.exceptions.ObjectLostError": ("external", None, "A Ray object was lost with the node that held it."),
    "_pickle.UnpicklingError": ("data", None, "A pickle (often a checkpoint) is truncated or corrupt, or was "
                                "written by another version: write it again or load another one."),
}
# Builtins not named above, by the nearest base named above; Warning subclasses are benign.
EXCEPTION_BASE_DEFAULT = {
    "LookupError": ("code", None, "A lookup failed in the job's code (a missing key or index)."),
    "ArithmeticError": ("code", None, "An arithmetic error in the job's code."),
    "Warning": ("benign", None, "A warning, not a failure: the job went on after it."),
}
EXCEPTION_CODE_NAMES = {
    "KeyError": "A key the code looked up is missing: a config, state_dict or dataset field name that differs.",
    "IndexError": "An index is out of range in the job's code or data (a label >= num_classes, an empty list).",
    "ValueError": "A function got a value it does not accept: a bug in the code or a bad value in the data or config.",
    "TypeError": "A function got an argument of the wrong type or number: a bug in the job's code or a library "
                 "version that changed an API.",
    "AssertionError": "An assert in the job's code failed: the assertion's message says which condition.",
    "AttributeError": "The code used an attribute the object does not have: a bug or a library version that "
                      "changed an API.",
    "NameError": "The code used a name that is not defined.",
    "UnboundLocalError": "The code used a local variable before assigning it.",
    "SyntaxError": "The job's Python file does not parse: a syntax error or a Python version it was not written for.",
    "IndentationError": "The job's Python file does not parse: wrong indentation.",
    "TabError": "The job's Python file mixes tabs and spaces.",
    "ReferenceError": "The code used an object through a weak reference after it was freed.",
    "BufferError": "A buffer operation failed in the job's code.",
}


def builtin_exception_rows(snapshot: dict) -> list[dict]:
    rows = []
    for b in snapshot["builtin_exceptions"]:
        name, mro = b["name"], b["mro"]
        if name in EXCEPTION_RULES:
            klass, code, meaning = EXCEPTION_RULES[name]
        elif name in EXCEPTION_CODE_NAMES:
            klass, code, meaning = "code", "training.code_error", EXCEPTION_CODE_NAMES[name]
        else:
            base = next((m for m in mro if m in EXCEPTION_RULES or m in EXCEPTION_BASE_DEFAULT), "Exception")
            klass, code, meaning = EXCEPTION_RULES.get(base) or EXCEPTION_BASE_DEFAULT[base]
        rows.append(entry(name=name, message=b["doc"], klass=klass, meaning=meaning, code=code, bases=mro[1:],
                          source=f"Python {snapshot['python']} builtins"))
    return rows


def exceptions_table(snapshot: dict, listed: dict) -> dict:
    rows = builtin_exception_rows(snapshot)
    for name, base, where in listed["classes"]:
        klass, code, meaning = EXCEPTION_RULES[name]
        rows.append(entry(name=name, message="", klass=klass, meaning=meaning, code=code, bases=[base], source=where))
    return table("Python builtins (every class in builtins that subclasses BaseException, from "
                 f"Python {snapshot['python']}) and upstream/exceptions.json (PyTorch, Triton, CuPy, JAX, "
                 "safetensors, huggingface_hub, numpy, Ray, read from their source)", rows)


# ---------------------------------------------------------------------------------------------- Xid
# NVIDIA's immediate action (the catalogue's "Resolution Bucket (Immediate Action)") read as what the operator
# of an EKS node does. Only these buckets have a direct reading; the others (WORKFLOW_*, RESTART_BM,
# CHECK_MECHANICALS, UPDATE_SWFW, CHECK_UVM, XID_154, none given) need this project's reading, in XID_RULES.
NVIDIA_ACTIONS = {"RESTART_APP": "restart_app", "RESET_GPU": "reset_gpu", "IGNORE": "none",
                  "CONTACT_SUPPORT": "investigate", "RESTART_VM": "reboot"}
XID_ACTIONS = ("none", "restart_app", "reset_gpu", "drain", "reboot", "investigate")
# Kind and meaning of an Xid this table does not describe one by one, by its action.
XID_DEFAULT_KIND = {"restart_app": "application", "reset_gpu": "driver", "none": "informational",
                    "investigate": "driver", "reboot": "driver", "drain": "hardware"}
XID_DEFAULT_MEANING = {
    "restart_app": "Only the application whose channel or engine faulted is affected: restart it; the GPU stays in "
                   "service.",
    "reset_gpu": "The GPU needs a reset before it is trusted again: drain the node when the job allows and reset the "
                 "GPU; replace the instance if it repeats.",
    "none": "Nothing failed that needs action: the error before it, if any, decides.",
    "investigate": "NVIDIA lists it as unused on Ampere and newer GPUs and asks to contact support: read dmesg and "
                   "nvidia-smi -q before acting, and report it with an nvidia-bug-report.",
    "reboot": "The driver needs the node restarted: drain it and reboot or replace it.",
    "drain": "The GPU cannot be trusted: drain the node and replace the instance.",
}
# Xids described one by one: (kind, action, meaning, why gpubot's action differs from or adds to NVIDIA's;
# None when the action is NVIDIA's own). Application Xids (the device plugin's list) affect only the process
# that faulted; 94 (contained ECC) ends only the faulting application; 63 records a row remap that takes
# effect at the next GPU reset (NVIDIA's row remapping guide); 154 says which recovery the driver now wants,
# in the line itself.
_PLUGIN = ("NVIDIA's device plugin treats it as the application's (internal/rm/health.go ignores it for GPU "
           "health): the process that faulted ends, the GPU stays in service")
# NVIDIA's RESET_GPU where the GPU is unusable until the reset: gpubot's reset_gpu waits for a convenient time.
_NOW = ("NVIDIA's RESET_GPU must happen before any job uses the GPU again, while gpubot's reset_gpu waits for a "
        "convenient time; on EKS draining the node and replacing the instance is that reset, now")
XID_RULES: dict[int, tuple[str, str, str, str | None]] = {
    8: ("application", "restart_app", "The GPU stopped processing the application's work (a hang or timeout of "
                                      "its kernels): restart the job; the GPU stays in service.", None),
    11: ("application", "restart_app", "The application sent a corrupt command stream: restart it; the GPU stays "
                                       "in service.", None),
    13: ("application", "restart_app", "A graphics engine exception from the job's kernel (out-of-range access, "
                                       "illegal instruction): a fault of the job's CUDA code; restart it.", None),
    31: ("application", "restart_app", "A GPU memory page fault from the job's kernel (illegal address): a fault "
                                       "of the job's CUDA code; restart it.", None),
    32: ("driver", "restart_app", "A corrupt push buffer stream (PBDMA error, mostly PCIe quality): restart the job; "
                                  "drain the node if it repeats.", None),
    38: ("driver", "none", "A driver firmware watchdog timeout that NVIDIA classes as ignorable: the error before it, "
                           "if any, decides; reset the GPU only if jobs keep failing on it.", None),
    43: ("application", "restart_app", "The GPU stopped the application's channel after a fault in its code (e.g. "
                                       "a device-side assert): restart the job; the GPU stays in service.",
         "NVIDIA's IGNORE is about the GPU, which stays healthy; the job that hit the fault has ended and needs a "
         "restart, and " + _PLUGIN),
    45: ("informational", "none", "Preemptive cleanup after an earlier error ended the processes on the GPU: the "
                                  "earlier error decides; nothing to do for this one.",
         "NVIDIA's WORKFLOW_XID_45 follows the other Xid when one is logged and " + _PLUGIN),
    46: ("driver", "reset_gpu", "The GPU stopped processing (a GPU timeout): reset the GPU before it runs jobs again "
                                "(NVIDIA Health Validation: drain, reset the GPU, service if it returns).", None),
    48: ("hardware", "drain", "An uncorrectable double-bit ECC error in GPU memory: drain the node and replace the "
                              "instance.",
         "NVIDIA's WORKFLOW_XID_48 needs a GPU reset or reboot and checks RMA thresholds; on EKS replacing the "
         "instance does both and hands the GPU back to AWS"),
    54: ("hardware", "drain", "The GPU board runs without its auxiliary power: drain the node and replace the "
                              "instance.",
         "NVIDIA's CHECK_MECHANICALS is the data center's to do; on EC2 that means a new instance"),
    62: ("driver", "reset_gpu", "An internal micro-controller halted: reset the GPU (drain the node when the job "
                                "allows); replace it if it repeats.", None),
    63: ("hardware", "reset_gpu", "A memory row was marked for remapping (or a page retired): it takes effect at "
                                  "the next GPU reset; drain and reset at a convenient time, no immediate drain.",
         "NVIDIA's IGNORE lets running jobs go on; NVIDIA's row remapping guide applies the remap only at the next "
         "GPU reset, so the reset is due at a convenient time"),
    64: ("hardware", "drain", "Recording a row remap or page retirement failed: the GPU's memory cannot be "
                              "trusted; drain the node and replace the instance.",
         "a failed remap leaves the bad row in use (NVIDIA's row remapping guide counts it toward RMA); on EKS a "
         "new instance is the reset that also replaces the memory"),
    68: ("application", "restart_app", "A video decoder (NVDEC0) exception in the application: restart it; the GPU "
                                       "stays in service.", None),
    69: ("application", "restart_app", "A graphics engine class error from the application: restart it; the GPU "
                                       "stays in service.", None),
    74: ("hardware", "drain", "An NVLink error: the GPU's links (or the GPU at their other end) are faulty; drain "
                              "the node and replace the instance if it repeats after a reset.",
         "NVIDIA's WORKFLOW_NVLINK_ERR needs a GPU reset or reboot and support if it returns; on EKS replacing the "
         "instance does both"),
    79: ("hardware", "drain", "The GPU no longer answers on PCIe: it is gone until the instance is replaced; drain "
                              "the node and replace it.",
         "NVIDIA's RESTART_BM restarts the machine; on EC2 a GPU off the bus rarely returns after a reboot, and a "
         "new instance is the restart that does"),
    78: ("driver", "investigate", "A vGPU failed to start: update the driver and firmware; not seen on EC2 GPU "
                                  "instances, which pass whole GPUs through.",
         "NVIDIA's UPDATE_SWFW is an upgrade of the node's driver and firmware, not a step a job takes"),
    92: ("hardware", "none", "A high rate of corrected single-bit ECC errors: nothing failed; watch the ECC "
                             "counters and remapped rows, drain if uncorrectable errors follow.", None),
    94: ("hardware", "restart_app", "A contained ECC error: only the application that touched the bad memory was "
                                    "stopped; restart it. The row is remapped at the next GPU reset.", None),
    95: ("hardware", "drain", "An uncontained memory error: every application on the GPU is affected and the GPU "
                              "must be reset before any of them runs again; drain the node and replace the instance.",
         _NOW),
    109: ("application", "restart_app", "A context switch timed out for the application: restart it; the GPU "
                                        "stays in service.",
          "NVIDIA's RESET_GPU is for a GPU that keeps timing out; " + _PLUGIN),
    119: ("driver", "reset_gpu", "The GPU System Processor (GSP) stopped answering: reset the GPU (drain the "
                                 "node); replace it if it repeats.", None),
    120: ("driver", "reset_gpu", "The GPU System Processor (GSP) reported an error: reset the GPU (drain the "
                                 "node); replace it if it repeats.", None),
    121: ("informational", "none", "A corrected C2C link error: nothing to do unless it repeats.", None),
    136: ("hardware", "reset_gpu", "NVLink link training failed: reset the GPU; replace the instance if the link "
                                   "does not train after it.", None),
    140: ("hardware", "drain", "An uncorrectable ECC error the driver could not retire or remap: drain the node "
                               "and replace the instance.", _NOW),
    143: ("hardware", "drain", "The GPU failed to initialise: no job can use it; drain the node and replace the "
                               "instance.", _NOW),
    **{n: ("hardware", "drain", f"An NVLink5 error ({name}): the link or the GPU at its other end is faulty; drain "
                                "the node and replace the instance if it returns after a reset.",
           "NVIDIA's WORKFLOW_NVLINK5_ERR decodes the subcode into ignore or reset; the line rarely carries the "
           "decode, so the safe reading on EKS is a drain and a new instance")
       for n, name in ((144, "SAW"), (145, "RLW"), (146, "TLW"), (147, "TREX"), (148, "NVLPW_CTRL"),
                       (149, "NETIR"), (150, "MSE"))},
    154: ("informational", "none", "The driver changed the GPU's recovery action: the new action in the line "
                                   "decides (None: nothing; GPU Reset Required: reset; Node Reboot Required: "
                                   "reboot; Drain P2P / Drain and Reset: drain).",
          "NVIDIA's XID_154 follows the recovery action the line names, which signatures/gpu.py reads from it"),
    156: ("hardware", "reset_gpu", "A GPU resource (memory row, channel) was retired: reset the GPU for it to take "
                                   "effect.", None),
    158: ("driver", "reset_gpu", "A fatal GPU timeout: reset the GPU before it runs jobs again; replace the "
                                 "instance if it repeats.", None),
    159: ("hardware", "investigate", "A C2C (chip-to-chip) non-data error between a Grace CPU and the GPU: check "
                                     "UVM and the C2C link before acting.",
          "NVIDIA's CHECK_UVM is an investigation, not a fixed step"),
    **{n: ("informational", "none", f"The GPU's power smoothing circuitry {what}: no job fails for it; power swings "
                                    "are the data center's concern.",
           "the catalogue gives no immediate action, only a note: no GPU reset is required")
       for n, what in ((162, "re-engaged"), (163, "disengaged"), (164, "nears the end of its lifetime"),
                       (165, "reached the end of its lifetime"))},
    **{n: ("driver", "investigate", "An NVLink event of confidential computing mode: only in CC mode; read dmesg "
                                    "before acting.",
           "the catalogue gives no immediate action; it applies to confidential computing mode only")
       for n in (166, 170)},
    167: ("hardware", "drain", "A fatal PCIe timeout talking to the GPU: drain the node and replace the instance.",
          "the catalogue gives no immediate action; a fatal PCIe timeout is the GPU leaving the bus (as Xid 79)"),
    168: ("hardware", "investigate", "Errors in the GPU's write-protected region reduced its memory: seen with ECC "
                                     "disabled; enable ECC (row remapping) or replace the instance.",
          "the catalogue gives no immediate action, only a note to enable ECC or retry the boot"),
    169: ("driver", "reset_gpu", "An internal micro-controller (SEC2) halted: reset the GPU (drain the node when the "
                                 "job allows); replace it if it repeats.",
          "the catalogue gives no immediate action; NVIDIA's action for the other micro-controller halt (Xid 62) "
          "is RESET_GPU"),
    **{n: ("hardware", "drain", f"The {mem} detail of an uncorrectable ECC error (Xid 48): drain the node and "
                                "replace the instance.",
           "the catalogue gives no immediate action; it details an Xid 48, whose reading it takes")
       for n, mem in ((171, "DRAM"), (172, "SRAM"))},
}


def xid_table(catalogue: dict, plugin: dict) -> dict:
    ignored = {x["xid"] for x in plugin["ignored_xids"]}
    rows = []
    for x in catalogue["xids"]:
        nvidia = NVIDIA_ACTIONS.get(x["nvidia_action"] or "")
        kind, action, meaning, reason = XID_RULES.get(x["xid"], (None, nvidia, None, None))
        if action is None:
            raise SystemExit(f"Xid {x['xid']}: NVIDIA's action {x['nvidia_action']!r} has no reading; add it to XID_RULES")
        if action != nvidia and not reason:
            raise SystemExit(f"Xid {x['xid']}: action {action!r} is not NVIDIA's {x['nvidia_action']!r}; say why in XID_RULES")
        if action not in XID_ACTIONS:
            raise SystemExit(f"Xid {x['xid']}: action {action!r} is not one of {XID_ACTIONS}")
        source = "nvidia" if action == nvidia else "gpubot"
        rows.append({"xid": x["xid"], "name": x["name"], "kind": kind or XID_DEFAULT_KIND[action], "action": action,
                     "meaning": meaning or XID_DEFAULT_MEANING[action], "mnemonic": x["mnemonic"],
                     "nvidia_action": x["nvidia_action"], "action_source": source,
                     "action_reason": reason if source == "gpubot" else None,
                     "device_plugin_ignores": x["xid"] in ignored})
    missing = sorted(ignored - {r["xid"] for r in rows})
    if missing:
        raise SystemExit(f"Xids the device plugin ignores but xid_catalogue.json lacks: {missing}")
    source = (f"scripts/gpu_failures/upstream/xid_catalogue.json: NVIDIA's Xid catalogue "
              f"({catalogue['sources']['nvidia_catalogue'].split()[0]}), action_source nvidia: its Immediate Action; "
              f"gpubot: this project's reading, with action_reason; and NVIDIA/k8s-device-plugin {plugin['file']} at "
              f"{plugin['tag']} ({plugin['commit'][:12]})")
    return table(source, rows)


# ---------------------------------------------------------------------------------------------- shared
def entry(*, name: str, message: str, klass: str, meaning: str, code: str | None, number: int | None = None,
          **extra) -> dict:
    if klass not in CLASSES:
        raise SystemExit(f"{name}: class {klass!r} is not one of {CLASSES}")
    if code is not None and code not in CODES:
        raise SystemExit(f"{name}: code {code!r} is not one of {CODES}")
    row = {"name": name, "message": message, "class": klass, "meaning": meaning, "code": code, "number": number}
    row.update(extra)
    return row


_DATE = "1970-01-01"  # replaced in main


def table(source: str, entries: list[dict]) -> dict:
    return {"source": source, "generated": _DATE, "generator": GENERATOR, "entries": entries}


# ---------------------------------------------------------------------------------------------- refresh
def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


_TOKEN = re.compile(r'\s+|\\\n|"((?:[^"\\]|\\.)*)"|(#?\s*[A-Za-z_][A-Za-z0-9_]*)|(.)', re.S)
_PRI = {"PRIu64": "lu", "PRId64": "ld", "PRIx64": "lx", "PRIi64": "ld", "PRIu32": "u", "PRId32": "d", "PRIx32": "x"}


def warn_format(src: str, start: int) -> str | None:
    """The format string of the WARN( call opening at start: adjacent literals, PRI* macros, other
    macro arguments (CHECK macros' `name`) as %s; None when the first argument is not a literal."""
    parts, pos, literal = [], start, False
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        pos = m.end()
        if m.group(1) is not None:
            parts.append(bytes(m.group(1), "utf-8").decode("unicode_escape").replace("\n", " "))
            literal = True
        elif m.group(2):
            ident = m.group(2).replace(" ", "")
            parts.append(_PRI.get(ident, "%s"))
        elif m.group(3) is not None:
            if m.group(3) in ",)":
                break
            return None
    fmt = "".join(parts).strip()
    return fmt if literal else None


def refresh_nccl(mirrors: Path) -> dict:
    repo = mirrors / "NVIDIA+nccl" / "repo"
    warns: dict[str, dict] = {}
    files: set[str] = set()
    commits = {}
    for tag in NCCL_TAGS:
        commits[tag] = git(repo, "rev-parse", f"{tag}^{{commit}}").strip()
        for path in git(repo, "ls-tree", "-r", "--name-only", tag, "src").split():
            if not NCCL_FILES.match(path):
                continue
            src = git(repo, "show", f"{tag}:{path}")
            for m in re.finditer(r"(?<![A-Za-z0-9_])WARN\(", src):
                fmt = warn_format(src, m.end())
                if not fmt:
                    continue
                files.add(path)
                line = src.count("\n", 0, m.start()) + 1
                w = warns.setdefault(fmt, {"format": fmt, "where": []})
                w["where"].append(f"{tag}:{path}:{line}")
    newest = NCCL_TAGS[-1]
    header = git(repo, "show", f"{newest}:src/nccl.h.in")
    block = header[header.index("typedef enum { ncclSuccess"):]
    block = block[:block.index("ncclResult_t;")]
    results = [[n, int(v)] for n, v in re.findall(r"(nccl[A-Za-z]+)\s*=\s*(\d+)", block)]
    init = git(repo, "show", f"{newest}:src/init.cc")
    body = init[init.index("const char* ncclGetErrorString"):]
    strings = dict(re.findall(r"case (nccl[A-Za-z]+)\s*:\s*return \"([^\"]*)\"", body[:body.index("\n}\n")]))
    return {"tags": list(NCCL_TAGS), "commits": commits, "files": sorted(files), "results_tag": newest,
            "results": results, "error_strings": strings,
            "warns": sorted(warns.values(), key=lambda w: w["format"])}


def refresh_device_plugin(mirrors: Path) -> dict:
    repo = mirrors / "NVIDIA+k8s-device-plugin" / "repo"
    path = "internal/rm/health.go"
    tag = git(repo, "describe", "--tags", "--abbrev=0", "HEAD").strip()
    src = git(repo, "show", f"HEAD:{path}")
    block = src[src.index("ignoredXids := []uint64{"):]
    block = block[:block.index("}")]
    ignored = [{"xid": int(n), "comment": c.strip()} for n, c in re.findall(r"(\d+),\s*//\s*([^\n]*)", block)]
    return {"repo": "NVIDIA/k8s-device-plugin", "tag": tag, "commit": git(repo, "rev-parse", "HEAD").strip(),
            "file": path, "ignored_xids": ignored}


def refresh_python() -> dict:
    errnos = [{"name": name, "number": number, "strerror": os.strerror(number)}
              for number, name in sorted(errno_module.errorcode.items())]
    # errno names that alias another's number (EWOULDBLOCK = EAGAIN) are looked up by name too.
    known = {e["name"] for e in errnos}
    for name in sorted(dir(errno_module)):
        if name.startswith("E") and name not in known and isinstance(getattr(errno_module, name), int):
            number = getattr(errno_module, name)
            errnos.append({"name": name, "number": number, "strerror": os.strerror(number)})
    signals = [{"name": s.name, "number": int(s), "strsignal": signal_module.strsignal(s) or ""}
               for s in sorted(signal_module.Signals, key=int)]
    exceptions = []
    for name in sorted(dir(builtins)):
        obj = getattr(builtins, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            doc = (obj.__doc__ or "").strip().splitlines()[0] if obj.__doc__ else ""
            exceptions.append({"name": name, "mro": [name] + [c.__name__ for c in obj.__mro__[1:] if c is not object],
                               "doc": doc})
    libc = " ".join(os.confstr("CS_GNU_LIBC_VERSION").split()[1:]) if hasattr(os, "confstr") else "?"
    return {"python": sys.version.split()[0], "platform": sys.platform, "libc": libc,
            "errno": errnos, "signals": signals, "builtin_exceptions": exceptions}


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def build(*, date: str) -> dict[str, dict]:
    global _DATE
    _DATE = date
    captured = load(CAPTURED / "tables.json")
    nccl = load(UPSTREAM / "nccl.json")
    snapshot = load(UPSTREAM / "python_errno_signals.json")
    runtime, driver = cuda_tables(captured)
    return {
        "cuda_runtime.json": runtime,
        "cuda_driver.json": driver,
        "nccl_results.json": nccl_results_table(captured, nccl),
        "nccl_warnings.json": nccl_warnings_table(nccl),
        "errno.json": errno_table(snapshot),
        "signals.json": signals_table(snapshot),
        "exceptions.json": exceptions_table(snapshot, load(UPSTREAM / "exceptions.json")),
        "xid.json": xid_table(load(UPSTREAM / "xid_catalogue.json"), load(UPSTREAM / "k8s_device_plugin.json")),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="directory for the tables (default: %(default)s)")
    parser.add_argument("--date", default=dt.date.today().isoformat(), help="the 'generated' date to write")
    parser.add_argument("--refresh", action="store_true",
                        help="first rewrite the NCCL, device plugin and Python snapshots from the mirrors and this Python")
    parser.add_argument("--mirrors", type=Path, default=MIRRORS, help="where `fetch` put the git mirrors")
    args = parser.parse_args(argv)
    try:
        dt.date.fromisoformat(args.date)
    except ValueError:
        parser.error(f"--date {args.date!r} is not YYYY-MM-DD")
    if args.refresh:
        for name in ("NVIDIA+nccl", "NVIDIA+k8s-device-plugin"):
            if not (args.mirrors / name / "repo").is_dir():
                parser.error(f"--refresh needs the mirror {args.mirrors / name / 'repo'}: fetch github:{name.replace('+', '/')} first")
        write_json(UPSTREAM / "nccl.json", refresh_nccl(args.mirrors))
        write_json(UPSTREAM / "k8s_device_plugin.json", refresh_device_plugin(args.mirrors))
        write_json(UPSTREAM / "python_errno_signals.json", refresh_python())
    tables = build(date=args.date)
    for name, data in tables.items():
        write_json(args.out / name, data)
    print("entries:", ", ".join(f"{name.removesuffix('.json')} {len(data['entries'])}" for name, data in tables.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
