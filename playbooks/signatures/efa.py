"""EFA and libfabric provider errors the ofi.* rules of nccl.py do not read.

Rules: ``efa.completion_error`` (a completion error that names the EFA provider error number:
aws-ofi-nccl's ``... completed with error: err: N, flags: F, prov_errno: E, strerror: ...`` and
libfabric's own ``err: <text> (N), prov_errno: <text> (E)`` / ``EFA internal error: (E) <text>``; with the
line's leading ``time`` and NCCL ``host`` prefix, playbooks/signatures/log_time.py, for blaming the first to fail),
``efa.unnamed_completion_error`` (old aws-ofi-nccl ``RC: N. Error: unknown error`` and old libfabric
``err: N, prov_err: <text> (N)``),
``efa.security_group_banner`` (the banner aws-ofi-nccl prints under an ``EHOSTUNREACH`` completion) and
``efa.no_provider`` (no usable EFA device: libfabric found none, ``fi_getinfo`` returned -61, the
plugin gave up). nccl.py keeps the older ``RC: N. Error: E (...)`` and ``err: N, message: ...`` shapes.

Sources (read Aug 2026):
- ofiwg/libfabric prov/efa/src/efa_errno.h (v2.x): the numbers and texts below; efa_strerror.c
  ``efa_show_help``: 9 "typically encountered when the peer process is no longer present", 15 "most
  often due to incorrect inbound/outbound security group rules and/or instances placed in different
  subnets", 4124 "hardware failure on the remote peer, or the peer process no longer being present",
  4126 "likely due to the peer process no longer being present", 4125 "matching the local and remote
  libfabric versions". efa_cq.c ``Encountered error during CQ polling. err: %s (%d), prov_errno: %s
  (%d)``, efa_base_ep.c ``Writing error to EQ: err: %s (%zd) prov_errno: %s (%zd)`` and the abort
  text ``EFA internal error: (%zd) %s``; src/log.c prefixes ``libfabric:<pid>:<time>::efa:<subsys>:``.
  src/fabric.c ``fi_getinfo: provider %s returned -%d (%s)`` / ``provider %s output empty list``;
  efa_device.c ``ibv_get_device_list returns total_device_cnt=%d``.
- aws/aws-ofi-nccl (v1.18+, include/nccl_ofi_platform.h ``log_cq_error`` and platform-aws.cpp, which
  adds the security-group banner when ``err`` is FI_EHOSTUNREACH, 113: "only returned by EFA if packets
  are dropped due to security groups"); src/nccl_ofi_rdma.cpp / nccl_ofi_sendrecv.cpp ``OFI fi_getinfo()
  call failed: %s``; nccl_ofi_net.cpp ``Unable to find a protocol that worked``, ``<PACKAGE_NAME>
  initialization failed``; v1.0-v1.4 ``Couldn't find any optimal provider``.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.log_time import stamped
from playbooks.signatures.model import Rule, Verdict

FI_EHOSTUNREACH = "113"  # libfabric fi_errno.h: FI_EHOSTUNREACH = EHOSTUNREACH

# efa_errno.h numbers, by what they say about the job.
PEER_GONE = {
    "8": "the peer reset the connection",
    "9": "the peer's queue pair is gone: its process most likely exited",
    "13": "a peer that answered before stopped answering",
    "14": "the peer no longer knows this rank's address (it restarted)",
    "4124": "an established peer stopped answering",
    "4126": "the peer is reachable but never completed the handshake: its process is most likely gone",
    "4127": "the peer closed its endpoint mid-transfer",
}
UNREACHABLE = {"15"}
RECEIVER_NOT_READY = {"10"}  # RNR: the peer posted no receive buffers in time (hung, slow or gone)
FLUSHED = {"1"}  # queue pair destroyed with work outstanding: a consequence of shutdown
OUT_OF_RESOURCES = {"4105", "4108", "4109"}  # Out of memory, RX / TX entries exhausted
VERSION_MISMATCH = {"18", "4097", "4098", "4099", "4125"}  # feature / packet type mismatch between peers

_DETAILS = (
    linear.compile(r"My host id: (?P<host_id>[\w-]{1,40})"),
    linear.compile(r"Peer EFA addr: (?P<peer_addr>fi_addr_efa://\S{1,100})"),
    linear.compile(r"Peer host id: (?P<peer_host_id>[\w/-]{1,40})"),
)
# The EFA message stops where the enriched part (addresses) or the next key starts.
# RE2 refuses counted repetitions nested past 1000 in all (240 x 120), so a parenthesised part of the
# message is not counted by character; the message is still at most 240 parts.
_MESSAGE = r"(?P<ofi_message>[A-Za-z](?:[^()]|\([^()]*\)){0,240}?)"
_AWS_OFI_NCCL = linear.compile(
    r"completed with error: err: (?P<fi_errno>\d{1,5}), flags: \d{1,20}, prov_errno: (?P<ofi_error>\d{1,5}), strerror: "
    + _MESSAGE + r"(?: My EFA addr|, len: |$)"
)
_LIBFABRIC = linear.compile(
    r"err: [^()]{1,80} \((?P<fi_errno>-?\d{1,5})\),? prov_errno: " + _MESSAGE + r" \((?P<ofi_error>\d{1,5})\)"
)
_ABORT = linear.compile(r"EFA internal error: \((?P<ofi_error>\d{1,5})\) " + _MESSAGE + r"(?: My EFA addr|$)")


def _completion(fields: dict[str, str], text: str) -> Verdict | None:
    for pattern in (_AWS_OFI_NCCL, _LIBFABRIC, _ABORT):
        found = pattern.search(text)
        if found:
            fields.update({k: v.strip() for k, v in found.groupdict().items() if v})
            break
    error = fields.get("ofi_error")
    if not error:
        return None
    return _verdict(error, fields.get("fi_errno", ""))


def _verdict(error: str, fi_errno: str) -> Verdict:
    """What an EFA provider error number says, from efa_errno.h and efa_show_help."""
    if error in UNREACHABLE or fi_errno == FI_EHOSTUNREACH:
        return Verdict(
            code="efa.network_unreachable", confidence="high",
            title="EFA peer unreachable (error {ofi_error}: {ofi_message}): the security group must allow all traffic to itself",
        )
    if error in PEER_GONE:
        return Verdict(
            code="nccl.peer_unresponsive", title="EFA peer stopped answering (error {ofi_error}): {peer_meaning}",
            fields={"peer_meaning": PEER_GONE[error]},
        )
    if error in RECEIVER_NOT_READY:
        return Verdict(
            code="nccl.peer_unresponsive", confidence="low",
            title="EFA receiver not ready (error {ofi_error}): the peer rank is hung, too slow or gone",
        )
    if error in FLUSHED:
        return Verdict(severity="info", confidence="low", title="EFA work flushed while the endpoint closed (a consequence, not a cause)")
    if error in OUT_OF_RESOURCES:
        return Verdict(
            confidence="low",
            title="EFA provider ran out of local resources ({ofi_message}, error {ofi_error}): not a security-group problem",
        )
    if error in VERSION_MISMATCH:
        return Verdict(
            confidence="medium",
            title="EFA peers disagree on protocol features (error {ofi_error}: {ofi_message}): mismatched libfabric versions across pods",
        )
    return Verdict(confidence="low", title="EFA completion error {ofi_error} ({ofi_message})")


def _no_provider(fields: dict[str, str], text: str) -> Verdict | None:
    if "initialization failed" in text and "aws-ofi-nccl" not in text and "AWS Libfabric" not in text:
        return None  # another component's initialization
    if "total_device_cnt=" in text and fields.get("devices") != "0":
        return None  # libfabric listing the devices it found
    if "fi_getinfo" in text and "efa" not in text and "OFI fi_getinfo()" not in text:
        return None  # another provider (shm, tcp) declining is normal
    if "initialization failed" in text or "Unable to find a protocol" in text:
        return Verdict(confidence="low", title="aws-ofi-nccl failed to initialize: NCCL falls back to TCP sockets (often no usable EFA device in the pod)")
    return Verdict()


RULES: tuple[Rule, ...] = (
    Rule(
        name="efa.completion_error",
        code="efa.network_unreachable",
        severity="error",
        confidence="medium",
        title="EFA completion error {ofi_error} ({ofi_message})",
        keywords=("prov_errno: ", "EFA internal error: ("),
        extract=_DETAILS,
        refine=stamped(_completion),
        fields_doc="ofi_error (EFA provider error number), ofi_message, fi_errno (libfabric errno), host_id, peer_addr, peer_host_id, peer_meaning, time, host",
        example="ip-10-1-2-3:311:395 [0] NCCL WARN NET/OFI Request 0x7f5e2c0a8f40 (send) completed with error: err: 113, flags: 2050, prov_errno: 15, strerror: Unreachable remote - never received a response My EFA addr: fi_addr_efa://[fe80::8d8:57ff:fe1a:b2c3]:0:1583190451 My host id: i-0a1b2c3d4e5f60718 Peer EFA addr: fi_addr_efa://[fe80::87b:1dff:fe3c:4d5e]:0:512 Peer host id: N/A, len: 0",
    ),
    Rule(
        # aws-ofi-nccl v1.0-v1.5 ofi_process_cq printed no provider number ("unknown error") and libfabric
        # of that time mistranslated it ("prov_err: Not a directory (20)"); in the public reports
        # (aws/aws-ofi-nccl#156, #161) the cause was the security group.
        name="efa.unnamed_completion_error",
        code="efa.network_unreachable",
        severity="error",
        confidence="medium",
        title="EFA request failed (RC {fi_errno}, provider error not named): check the node security group first",
        keywords=("completed with error. RC: ", "prov_err: "),
        extract=(
            linear.compile(r"completed with error\. RC: (?P<fi_errno>\d{1,5})\. Error: (?P<ofi_message>[a-z][a-z ]{0,60}?)(?:\.|$)"),
            # libfabric v1.9-v1.17 rxr_cq_write_tx_error / rx_error: "err: %d, prov_err: %s (%d)"
            linear.compile(r"err: (?P<fi_errno>\d{1,5}), prov_err: (?P<ofi_message>[A-Za-z][^()]{0,80}) \(\d{1,5}\)"),
        ),
        refine=lambda f, t: Verdict() if "ofi_message" in f else None,
        fields_doc="fi_errno (libfabric errno), ofi_message",
        example="[1,13]<stdout>:nccl-tests-worker-1:35:89 [5] ofi_process_cq:1039 NCCL WARN NET/OFI Request 0x7fbb944701b8 completed with error. RC: 20. Error: unknown error. Completed length: 0, Request: { buffer_index: 255, dev: 1, size: 0, state: CREATED, direction: SEND }",
    ),
    Rule(
        name="efa.security_group_banner",
        code="efa.network_unreachable",
        severity="error",
        confidence="high",
        title="aws-ofi-nccl: the security group of this instance or its peer does not allow EFA traffic",
        keywords=("This error indicates that the security group",),
        refine=lambda f, t: Verdict(fields={"ofi_error": "15"}),
        fields_doc="ofi_error (15: the error the banner stands for)",
        example="* This error indicates that the security group on either this instance or the peer instance",
    ),
    Rule(
        name="efa.no_provider",
        code="efa.resource_unavailable",
        severity="error",
        confidence="medium",
        title="No usable EFA device in the container: vpc.amazonaws.com/efa not requested, EFA device plugin missing or an instance type without EFA",
        keywords=(
            "total_device_cnt=0", "fi_getinfo: provider efa", "OFI fi_getinfo() call failed", "optimal provider",
            "Unable to find a protocol that worked", "initialization failed",
        ),
        pattern=linear.compile(
            r"(?P<problem>total_device_cnt=(?P<devices>\d+)|fi_getinfo: provider efa (?:returned -\d+ \([^)]{1,40}\)|output empty list)"
            r"|OFI fi_getinfo\(\) call failed: [^\n]{1,60}|Couldn't find any optimal provider[^\n]{0,60}"
            r"|Unable to find a protocol that worked|(?:aws-ofi-nccl|AWS Libfabric) initialization failed)"
        ),
        refine=_no_provider,
        fields_doc="problem, devices (RDMA devices libfabric saw)",
        example="libfabric:1:1755800000::efa:fabric:efa_device_list_initialize():306<info> ibv_get_device_list returns total_device_cnt=0",
    ),
)
