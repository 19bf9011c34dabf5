"""EFA (libfabric / aws-ofi-nccl) and NCCL errors.

libfabric EFA error numbers (prov/efa/src/efa_errno.h): a peer that vanished shows as 4126
"Unresponsive receiver (reachable by EFA device but handshake failed)", 4124 "Unresponsive receiver
(connection previously established)", 13 "Unresponsive remote (was previously responsive)", 8
"Connection was reset by remote peer", 9, 14 or 4127 (efa.py's PEER_GONE, which this module shares).
15 "Unreachable remote (never received a response)" is usually security groups or subnets. Anything
else is treated as an EFA network problem.

Two shapes carry the number (rule ofi.request_error):
- aws-ofi-nccl ``cm_req_handle_error_entry`` / ``ofi_process_cq`` (v1.6-v1.17): ``RC: 103. Error: 4126
  (Unresponsive receiver (...) My EFA addr: ...)``: the number after ``Error:`` is the EFA one.
- libfabric's own ``efa_rdm_txe_handle_error`` / ``efa_rdm_rxe_handle_error`` / ``efa_base_ep`` warning
  (ofiwg/libfabric v1.18-v2.x prov/efa/src/rdm/efa_rdm_ope.c, ``EFA_WARN(FI_LOG_CQ, "err: %d, message: %s
  (%d)", err, err_data, prov_errno)``; aws/aws-ofi-nccl#346 quotes ``err: 5, message: Invalid address My EFA
  addr: ... Peer host id: i-0ce6d3d57139f053c (7)``): ``err`` is the libfabric errno (103 FI_ECONNABORTED for
  every vanished peer) and the EFA number is the trailing ``(N)``.
The message stops before `` My EFA addr`` (efa_strerror.c ``efa_write_error_msg`` appends the addresses):
libfabric v2.x spells error 15 ``Unreachable remote - never received a response`` with no parenthesis to end it.

Timestamps for blame: the peer rules (ofi.*, nccl.remote_error, nccl.watchdog_timeout, nccl.socket_error,
nccl.heartbeat_timeout, nccl.system_error) add ``time`` (the line's leading timestamp, ISO-8601 UTC) and
``host`` (NCCL's ``host:pid:tid [dev]`` prefix) when the line has them (playbooks/signatures/log_time.py).

NCCL result codes as ``ncclGetErrorString`` spells them (NVIDIA/nccl src/init.cc; 2.12 and older without the
parenthesis) and as PyTorch explains them (pytorch/pytorch torch/csrc/distributed/c10d/NCCLUtils.cpp
``getNcclErrorDetailStr``, wrapped as ``DistBackendError: NCCL error in: ...ProcessGroupNCCL.cpp:<n>, <string>,
NCCL version 2.x``):
- ``remote process exited or there was a network error`` / ``ncclRemoteError`` (2.13+): a peer vanished
  (rule nccl.remote_error).
- ``unhandled system error (run with NCCL_DEBUG=INFO for details)`` / ``ncclSystemError: System call (e.g.
  socket, malloc) or external library call failed or device error.``: a socket, /dev/shm or device call on
  this host failed; before ncclRemoteError existed a vanished peer also read this way, and PyTorch still
  says "It can be also caused by unexpected exit of a remote peer". Low confidence; NCCL_DEBUG=INFO names
  the call (rule nccl.system_error). With "shared memory" in the text it is /dev/shm.
- ``unhandled cuda error (run with NCCL_DEBUG=INFO for details)`` / ``ncclUnhandledCudaError: Call to CUDA
  function failed.``: the ``NCCL WARN Cuda failure '<cudaGetErrorString>'`` line before it (src/include/
  checks.h; ``Cuda failure <n> '<msg>'`` from cudawrap.h for driver calls) says which call. 'out of memory' is
  an OOM (cuda_oom.py); 'invalid device ordinal', a driver older than the CUDA runtime and missing peer access
  are the job's set-up (rules nccl.cuda_failure, nccl.unhandled_cuda_error).

Watchdog (pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp, 2.0 to 2.11): ``[PG ID 0 PG GUID
0(default_pg) Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=.., OpType=ALLREDUCE, ...,
Timeout(ms)=600000) ran for 600123 milliseconds before timing out.`` (``[Rank 0]`` / ``[PG 0 Rank 0]`` in older
releases), ``Some NCCL operations have failed or timed out.`` (1.x to 2.1), ``Timeout at NCCL work: N, last
enqueued NCCL work: N, last completed NCCL work: M.`` (2.2+) (rule nccl.watchdog_timeout); the heartbeat
monitor (2.2+): ``Heartbeat monitor timed out! Process will be terminated after dumping debug info.`` and
``ProcessGroupNCCL's watchdog got stuck for 600 seconds without making progress in monitoring enqueued
collectives.`` (rule nccl.heartbeat_timeout).
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.efa import PEER_GONE, UNREACHABLE
from playbooks.signatures.log_time import stamped
from playbooks.signatures.model import Rule, Verdict

# One list with efa.py: the same EFA number means the same thing in either log shape.
PEER_GONE_ERRORS = frozenset(PEER_GONE)
UNREACHABLE_ERRORS = frozenset(UNREACHABLE)
# libfabric's "err: <errno>, message: <text> (<EFA number>)": the trailing number is the EFA one.
_TRAILING_EFA_NUMBER = linear.compile(r"\((\d{1,5})\)\s*$")
_ADDRESSES = " My EFA addr"

_OFI_DETAILS = (
    linear.compile(r"My host id: (?P<host_id>[\w-]{1,40})"),
    linear.compile(r"Peer EFA addr: (?P<peer_addr>\S{1,120})"),
    linear.compile(r"Peer host id: (?P<peer_host_id>[\w/-]{1,40})"),
)


def _ofi(fields: dict[str, str], text: str) -> Verdict:
    if ", message: " in text:
        trailing = _TRAILING_EFA_NUMBER.search(text)
        if trailing is not None:
            fields["fi_errno"], fields["ofi_error"] = fields["ofi_error"], trailing.group(1)
    message = fields.get("ofi_message", "")
    if _ADDRESSES in message:
        fields["ofi_message"] = message.split(_ADDRESSES, 1)[0].strip()
    error = fields.get("ofi_error", "")
    if error in PEER_GONE_ERRORS:
        return Verdict(code="nccl.peer_unresponsive", title="EFA peer stopped answering (OFI error {ofi_error}: {ofi_message})")
    if error in UNREACHABLE_ERRORS:
        return Verdict(title="EFA peer unreachable (OFI error {ofi_error}: {ofi_message}): security group or subnet")
    return Verdict(confidence="medium")


def _ofi_text_only(fields: dict[str, str], text: str) -> Verdict:
    if "Unreachable remote" in text:
        return Verdict(code="efa.network_unreachable", title="EFA peer unreachable (Unreachable remote): security group or subnet")
    return Verdict()


def _socket(fields: dict[str, str], text: str) -> Verdict:
    # The peer's end went away: refused, reset, closed (src/misc/socket.cc ``socketProgress``: ``Connection
    # closed by remote peer %s``, ``Net : Connection closed by remote peer`` before 2.19) or a write into a
    # closed connection (EPIPE).
    if fields.get("problem") in ("Connection refused", "Connection reset by peer", "Connection closed by remote peer", "Broken pipe"):
        return Verdict(code="nccl.peer_unresponsive", title="NCCL socket to a peer failed ({problem}): the peer may have exited")
    return Verdict()


# ``Cuda failure '<msg>'`` messages that come from how the job is set up rather than from the GPU.
SETUP_CUDA_FAILURES = {
    "invalid device ordinal": "a rank asked for a GPU the pod does not have (more ranks than visible GPUs)",
    "CUDA driver version is insufficient for CUDA runtime version": "the image's CUDA runtime is newer than the node's driver",
    "peer access is not supported between these two devices": "GPU peer-to-peer access is unavailable (try NCCL_P2P_DISABLE=1 or check the instance topology)",
    "operation not supported": "a CUDA feature NCCL tried (cuMem / NVLS / multicast) is unavailable in this container or driver",
}


def _cuda_failure(fields: dict[str, str], text: str) -> Verdict | None:
    meaning = SETUP_CUDA_FAILURES.get(fields.get("cuda_error", ""))
    if meaning is None or "NCCL INFO" in text:
        return None  # OOM is cuda_oom.py's; a GPU fault or an unknown failure is left to the Xid / other lines
    return Verdict(fields={"meaning": meaning, "problem": "unhandled cuda error"})


def _system_error(fields: dict[str, str], text: str) -> Verdict:
    if "shared memory" in text or "/dev/shm" in text:
        return Verdict(
            code="training.shm_exhausted",
            confidence="medium",
            title="NCCL system error creating a shared-memory segment: /dev/shm is likely too small",
        )
    return Verdict(fields={"problem": "ncclSystemError"})


RULES: tuple[Rule, ...] = (
    Rule(
        name="ofi.request_error",
        code="efa.network_unreachable",
        severity="error",
        confidence="high",
        title="EFA/libfabric error {ofi_error} ({ofi_message})",
        keywords=("NET/OFI", "OFI Request", "libfabric:", "fi_addr_efa"),
        pattern=linear.compile(r"(?:Error: |err: )(?P<ofi_error>\d{1,5})(?: \(|, message: )(?P<ofi_message>[A-Za-z][^()]{0,200}(?:\([^()]{0,200}\))?)"),
        extract=_OFI_DETAILS,
        refine=stamped(_ofi),
        fields_doc="ofi_error (EFA provider error number), ofi_message, fi_errno (libfabric errno, from the err/message shape), host_id, peer_addr, peer_host_id, time, host",
        example="NCCL WARN NET/OFI Request 0x7f456c222f60 completed with error. RC: 103. Error: 4126 (Unresponsive receiver (reachable by EFA device but handshake failed) My EFA addr: fi_addr_efa://[fe80::c55:2eff:fe44:db5]:0:142160333 My host id: i-07792e0f955a9673b Peer EFA addr: fi_addr_efa://[fe80::454:14ff:fedd:d5b3]:0:825957744 Peer host id: N/A). Completed length: 0",
    ),
    Rule(
        name="ofi.message_only",
        code="nccl.peer_unresponsive",
        severity="error",
        confidence="medium",
        title="EFA peer stopped answering (Unresponsive receiver)",
        keywords=("Unresponsive receiver", "Unreachable remote", "Unresponsive remote"),
        unless=("Error: ", "err: "),
        refine=stamped(_ofi_text_only),
        fields_doc="time, host",
        example="efa_rdm_ep: Unresponsive receiver (reachable by EFA device but handshake failed)",
    ),
    Rule(
        name="nccl.remote_error",
        code="nccl.peer_unresponsive",
        severity="error",
        confidence="medium",
        title="NCCL: a remote rank exited or the network failed (ncclRemoteError)",
        keywords=("ncclRemoteError", "remote process exited or there was a network error"),
        extract=(linear.compile(r"NCCL version (?P<nccl_version>[\d.]+)"),),
        refine=stamped(),
        fields_doc="nccl_version, time, host",
        example="torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3699, remote process exited or there was a network error, NCCL version 2.27.3",
    ),
    Rule(
        name="nccl.watchdog_timeout",
        code="nccl.timeout",
        severity="error",
        confidence="low",
        title="NCCL watchdog: collective[ {op}] timed out[ after {timeout_ms} ms][ on rank {rank}]",
        keywords=("Watchdog caught collective operation timeout", "Some NCCL operations have failed or timed out", "Timeout at NCCL work: "),
        extract=(
            linear.compile(r"\bRank (?P<rank>\d{1,6})\]"),
            linear.compile(r"SeqNum=(?P<seq>\d+)|Timeout at NCCL work: (?P<seq2>\d{1,12})"),
            linear.compile(r"OpType=(?P<op>\w+)"),
            linear.compile(r"Timeout\(ms\)=(?P<timeout_ms>\d+)"),
            linear.compile(r"ran for (?P<ran_ms>\d+) milliseconds"),
        ),
        refine=stamped(lambda f, t: Verdict(fields={"seq": f.pop("seq2")}) if "seq2" in f else Verdict()),
        fields_doc="rank, seq, op (ALLREDUCE, BROADCAST, ...), timeout_ms, ran_ms, time, host",
        example="[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.",
    ),
    Rule(
        name="nccl.socket_error",
        code="efa.network_unreachable",
        severity="warning",
        confidence="low",
        title="NCCL socket to a peer failed ({problem})",
        keywords=("NCCL WARN",),
        pattern=linear.compile(r"(?P<problem>Connection refused|Connection timed out|No route to host|Connection reset by peer|Connection closed by remote peer|Broken pipe)"),
        refine=stamped(_socket),
        fields_doc="problem, time, host",
        example="ip-10-0-1-5:88:120 [0] NCCL WARN NET/Socket : Connect to 10.0.2.7<43719> failed : No route to host",
    ),
    Rule(
        name="nccl.heartbeat_timeout",
        code="nccl.timeout",
        severity="error",
        confidence="low",
        title="NCCL heartbeat monitor: the watchdog was stuck[ for {stuck_s} s][ on rank {rank}] (a hung NCCL / CUDA call)",
        keywords=("Heartbeat monitor timed out", "watchdog got stuck for"),
        extract=(
            linear.compile(r"\bRank (?P<rank>\d{1,6})\]"),
            linear.compile(r"watchdog got stuck for (?P<stuck_s>\d{1,7}) seconds"),
        ),
        refine=stamped(),
        fields_doc="rank, stuck_s (seconds without progress), time, host",
        example="[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=103",
    ),
    Rule(
        name="nccl.system_error",
        code="nccl.peer_unresponsive",
        severity="error",
        confidence="low",
        title="NCCL system call failed (ncclSystemError): usually the network or the host, or a peer that exited; rerun with NCCL_DEBUG=INFO",
        keywords=("unhandled system error", "ncclSystemError"),
        extract=(linear.compile(r"NCCL version (?P<nccl_version>[\d.]{1,20})"),),
        refine=stamped(_system_error),
        fields_doc="problem (ncclSystemError), nccl_version, time, host",
        example="torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
    ),
    Rule(
        name="nccl.cuda_failure",
        code="nccl.invalid_usage",
        severity="error",
        confidence="medium",
        title="NCCL: a CUDA call failed ({cuda_error}): {meaning}",
        keywords=("Cuda failure ",),
        pattern=linear.compile(r"Cuda failure (?:(?P<cuda_code>\d{1,4}) )?'(?P<cuda_error>[^']{1,120})'"),
        refine=_cuda_failure,
        fields_doc="cuda_code, cuda_error, meaning, problem (unhandled cuda error)",
        example="ip-10-1-77-12:105:180 [1] NCCL WARN Cuda failure 'invalid device ordinal'",
    ),
    Rule(
        name="nccl.unhandled_cuda_error",
        code="nccl.invalid_usage",
        severity="error",
        confidence="low",
        title="NCCL: a CUDA call failed inside NCCL (ncclUnhandledCudaError): the 'Cuda failure' line before it names the call",
        keywords=("unhandled cuda error", "ncclUnhandledCudaError"),
        unless=("out of memory", "Cuda failure "),
        extract=(linear.compile(r"NCCL version (?P<nccl_version>[\d.]{1,20})"),),
        refine=lambda f, t: Verdict(fields={"problem": "unhandled cuda error"}),
        fields_doc="problem (unhandled cuda error), nccl_version",
        example="torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5",
    ),
)
