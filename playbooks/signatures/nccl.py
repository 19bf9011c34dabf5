"""EFA (libfabric / aws-ofi-nccl) and NCCL errors.

libfabric EFA error numbers (prov/efa/src/efa_errno.h): a peer that vanished shows as 4126
"Unresponsive receiver (reachable by EFA device but handshake failed)", 4124 "Unresponsive receiver
(connection previously established)", 13 "Unresponsive remote (was previously responsive)" or 8
"Connection was reset by remote peer". 15 "Unreachable remote (never received a response)" is
usually security groups or subnets. Anything else is treated as an EFA network problem.
"""
from __future__ import annotations

import re

from playbooks.signatures.model import Rule, Verdict

PEER_GONE_ERRORS = frozenset({"4126", "4124", "13", "8"})
UNREACHABLE_ERRORS = frozenset({"15"})

_OFI_DETAILS = (
    re.compile(r"My host id: (?P<host_id>[\w-]{1,40})"),
    re.compile(r"Peer EFA addr: (?P<peer_addr>\S{1,120})"),
    re.compile(r"Peer host id: (?P<peer_host_id>[\w/-]{1,40})"),
)


def _ofi(fields: dict[str, str], text: str) -> Verdict:
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
    if fields.get("problem") in ("Connection refused", "Connection reset by peer"):
        return Verdict(code="nccl.peer_unresponsive", title="NCCL socket to a peer failed ({problem}): the peer may have exited")
    return Verdict()


RULES: tuple[Rule, ...] = (
    Rule(
        name="ofi.request_error",
        code="efa.network_unreachable",
        severity="error",
        confidence="high",
        title="EFA/libfabric error {ofi_error} ({ofi_message})",
        keywords=("NET/OFI", "OFI Request", "libfabric:", "fi_addr_efa"),
        pattern=re.compile(r"(?:Error: |err: )(?P<ofi_error>\d{1,5})(?: \(|, message: )(?P<ofi_message>[A-Za-z][^()]{0,200}(?:\([^()]{0,200}\))?)"),
        extract=_OFI_DETAILS,
        refine=_ofi,
        fields_doc="ofi_error (libfabric errno), ofi_message, host_id, peer_addr, peer_host_id",
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
        refine=_ofi_text_only,
        fields_doc="(none)",
        example="efa_rdm_ep: Unresponsive receiver (reachable by EFA device but handshake failed)",
    ),
    Rule(
        name="nccl.remote_error",
        code="nccl.peer_unresponsive",
        severity="error",
        confidence="medium",
        title="NCCL: a remote rank exited or the network failed (ncclRemoteError)",
        keywords=("ncclRemoteError", "remote process exited or there was a network error"),
        extract=(re.compile(r"NCCL version (?P<nccl_version>[\d.]+)"),),
        fields_doc="nccl_version",
        example="torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3699, remote process exited or there was a network error, NCCL version 2.27.3",
    ),
    Rule(
        name="nccl.watchdog_timeout",
        code="nccl.timeout",
        severity="error",
        confidence="low",
        title="NCCL watchdog: collective[ {op}] timed out[ after {timeout_ms} ms][ on rank {rank}]",
        keywords=("Watchdog caught collective operation timeout", "Some NCCL operations have failed or timed out"),
        extract=(
            re.compile(r"\[Rank (?P<rank>\d+)\]"),
            re.compile(r"SeqNum=(?P<seq>\d+)"),
            re.compile(r"OpType=(?P<op>\w+)"),
            re.compile(r"Timeout\(ms\)=(?P<timeout_ms>\d+)"),
            re.compile(r"ran for (?P<ran_ms>\d+) milliseconds"),
        ),
        fields_doc="rank, seq, op (ALLREDUCE, BROADCAST, ...), timeout_ms, ran_ms",
        example="[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.",
    ),
    Rule(
        name="nccl.socket_error",
        code="efa.network_unreachable",
        severity="warning",
        confidence="low",
        title="NCCL socket to a peer failed ({problem})",
        keywords=("NCCL WARN",),
        pattern=re.compile(r"(?P<problem>Connection refused|Connection timed out|No route to host|Connection reset by peer)"),
        refine=_socket,
        fields_doc="problem",
        example="ip-10-0-1-5:88:120 [0] NCCL WARN NET/Socket : Connect to 10.0.2.7<43719> failed : No route to host",
    ),
)
