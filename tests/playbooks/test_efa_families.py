"""EFA / libfabric text: completion errors by EFA error number, missing EFA devices, healthy start-up.

Lines follow the upstream format strings (ofiwg/libfabric prov/efa/src/efa_errno.h, efa_cq.c,
efa_base_ep.c, src/log.c, src/fabric.c; aws/aws-ofi-nccl include/nccl_ofi_platform.h log_cq_error and
src/platform-aws.cpp) or are verbatim from the public reports cited next to them.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from playbooks.codes import CODE_SET
from playbooks.explain import explain_text
from playbooks.signatures import scan_line
from playbooks.signatures.efa import _verdict
from tests.playbooks.test_explain import check_snippet

FIXTURES = Path(__file__).parent.parent / "fixtures" / "text"
ADDRS = (
    "My EFA addr: fi_addr_efa://[fe80::c55:2eff:fe44:db5]:0:142160333 My host id: i-07792e0f955a9673b "
    "Peer EFA addr: fi_addr_efa://[fe80::454:14ff:fedd:d5b3]:0:825957744 Peer host id: N/A"
)


def aws_ofi_nccl(err: int, prov_errno: int, strerror: str) -> str:
    """aws-ofi-nccl v1.18+ Platform::log_cq_error, as NCCL prints a WARN."""
    return (
        "ip-10-1-2-3:311:395 [0] rdma_process_completions:1336 NCCL WARN NET/OFI Request 0x7f5e2c0a8f40 (recv) "
        f"completed with error: err: {err}, flags: 1026, prov_errno: {prov_errno}, strerror: {strerror} {ADDRS}, len: 0"
    )


def libfabric_cq(err_text: str, err: int, prov_text: str, prov_errno: int) -> str:
    """libfabric efa_cq.c efa_cq_write_error_data with the src/log.c prefix."""
    return (
        "libfabric:311:1755801234::efa:cq:efa_cq_write_error_data():105<info> Encountered error during CQ polling. "
        f"err: {err_text} ({err}), prov_errno: {prov_text} ({prov_errno})"
    )


def signals(line: str) -> list:
    return scan_line(line, source="test")


# (line, code, severity, confidence, fields) -- the EFA numbers and texts are efa_errno.h's.
CASES = [
    (aws_ofi_nccl(113, 15, "Unreachable remote - never received a response"), "efa.network_unreachable", "error", "high",
     {"ofi_error": "15", "fi_errno": "113", "host_id": "i-07792e0f955a9673b", "peer_host_id": "N/A"}),
    (aws_ofi_nccl(103, 4126, "Unresponsive receiver (reachable by EFA device but handshake failed)"), "nccl.peer_unresponsive",
     "error", "medium", {"ofi_error": "4126", "ofi_message": "Unresponsive receiver (reachable by EFA device but handshake failed)"}),
    (aws_ofi_nccl(103, 4124, "Unresponsive receiver (connection previously established)"), "nccl.peer_unresponsive", "error",
     "medium", {"ofi_error": "4124"}),
    (aws_ofi_nccl(107, 9, "Bad queue pair (QP) number (QP does not exist or is in error state)"), "nccl.peer_unresponsive",
     "error", "medium", {"ofi_error": "9", "ofi_message": "Bad queue pair (QP) number (QP does not exist or is in error state)"}),
    (aws_ofi_nccl(107, 14, "No valid address handle at remote side (required for RDMA operations)"), "nccl.peer_unresponsive",
     "error", "medium", {"ofi_error": "14"}),
    (aws_ofi_nccl(103, 8, "Connection was reset by remote peer"), "nccl.peer_unresponsive", "error", "medium", {"ofi_error": "8"}),
    (aws_ofi_nccl(263, 10, "Destination resource not ready (no work queue entries posted on receive queue)"),
     "nccl.peer_unresponsive", "error", "low", {"ofi_error": "10"}),
    (aws_ofi_nccl(12, 4109, "TX entries exhausted"), "efa.network_unreachable", "error", "low",
     {"ofi_error": "4109", "ofi_message": "TX entries exhausted"}),
    (aws_ofi_nccl(256, 4125, "Invalid packet type received when zero copy recv mode is ON"), "efa.network_unreachable",
     "error", "medium", {"ofi_error": "4125"}),
    (aws_ofi_nccl(22, 5, "Local memory registration is invalid, has insufficient access flags or does not match IOVA"),
     "efa.network_unreachable", "error", "low", {"ofi_error": "5"}),
    # libfabric's own line, FI_LOG_LEVEL=info or warn
    (libfabric_cq("No route to host", 113, "Unreachable remote - never received a response", 15), "efa.network_unreachable",
     "error", "high", {"ofi_error": "15", "fi_errno": "113"}),
    (libfabric_cq("Software caused connection abort", 103, "Unresponsive receiver (reachable by EFA device but handshake failed)", 4126),
     "nccl.peer_unresponsive", "error", "medium", {"ofi_error": "4126"}),
    # efa_base_ep.c efa_base_ep_write_eq_error: "Writing error to EQ: err: %s (%zd) prov_errno: %s (%zd)"
    ("libfabric:311:1755801234::efa:eq:efa_base_ep_write_eq_error():835<warn> Writing error to EQ: err: Cannot allocate memory (12) "
     "prov_errno: Out of memory (4105)", "efa.network_unreachable", "error", "low", {"ofi_error": "4105", "ofi_message": "Out of memory"}),
    # ... and the abort text when no EQ is bound (stderr, one line each)
    ("EFA internal error: (4113) Failure posting handshake to peer", "efa.network_unreachable", "error", "low", {"ofi_error": "4113"}),
    # aws-ofi-nccl <= v1.5 / libfabric <= 1.17, verbatim from aws/aws-ofi-nccl#156 (cause: the security group)
    ("[1,13]<stdout>:nccl-tests-worker-1:35:89 [5] ofi_process_cq:1039 NCCL WARN NET/OFI Request 0x7fbb944701b8 completed with "
     "error. RC: 20. Error: unknown error. Completed length: 0, Request: { buffer_index: 255, dev: 1, size: 0, state: CREATED, direction: SEND }",
     "efa.network_unreachable", "error", "medium", {"fi_errno": "20", "ofi_message": "unknown error"}),
    ("[1,13]<stderr>:libfabric:35:1668017255::efa:cq:rxr_cq_write_tx_error():243<warn> rxr_cq_write_tx_error: err: 20, prov_err: Not a directory (20)",
     "efa.network_unreachable", "error", "medium", {"fi_errno": "20"}),
    # aws/aws-ofi-nccl#161 (title line)
    ("NCCL WARN NET/OFI Request completed with error. RC: 21. Error: unknown error", "efa.network_unreachable", "error", "medium",
     {"fi_errno": "21"}),
    # src/platform-aws.cpp banner under an EHOSTUNREACH completion
    ("* This error indicates that the security group on either this instance or the peer instance", "efa.network_unreachable",
     "error", "high", {"ofi_error": "15"}),
    # No EFA device: verbatim from ofiwg/libfabric#12708; src/fabric.c at warn when FI_PROVIDER=efa
    ("libfabric:...:core:core:fi_getinfo_():1391<warn> fi_getinfo: provider efa output empty list", "efa.resource_unavailable",
     "error", "medium", {"problem": "fi_getinfo: provider efa output empty list"}),
    ("libfabric:88:1755801234::core:core:fi_getinfo_():1453<warn> fi_getinfo: provider efa returned -61 (No data available)",
     "efa.resource_unavailable", "error", "medium", {"problem": "fi_getinfo: provider efa returned -61 (No data available)"}),
    ("libfabric:88:1755801234::efa:fabric:efa_device_list_initialize():306<info> ibv_get_device_list returns total_device_cnt=0",
     "efa.resource_unavailable", "error", "medium", {"devices": "0"}),
    # aws/aws-ofi-nccl#715 (the plugin gave up; NCCL continued on sockets)
    ("algo-1:17778:17848 [5] nccl_net_ofi_create_plugin:259 NCCL WARN NET/OFI aws-ofi-nccl initialization failed",
     "efa.resource_unavailable", "error", "low", {"problem": "aws-ofi-nccl initialization failed"}),
    # aws-ofi-nccl src/nccl_ofi_net.cpp; v1.0-v1.4 (NVIDIA/nccl#229) "Couldn't find any optimal provider"
    ("ip-10-1-2-3:311:311 [0] nccl_net_ofi_create_plugin:334 NCCL WARN NET/OFI Unable to find a protocol that worked.  Failing initialization.",
     "efa.resource_unavailable", "error", "low", {"problem": "Unable to find a protocol that worked"}),
    ("ip-172-31-37-108:5555:5580 [0] get_ofi_provider:312 NCCL WARN NET/OFI Couldn't find any optimal provider", "efa.resource_unavailable",
     "error", "medium", {}),
]


@pytest.mark.parametrize(("line", "code", "severity", "confidence", "fields"), CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_efa_line(line: str, code: str, severity: str, confidence: str, fields: dict[str, str]) -> None:
    found = [s for s in signals(line) if s.severity != "info"]
    assert [(s.code, s.severity, s.confidence) for s in found] == [(code, severity, confidence)], [(s.code, s.title) for s in found]
    assert all(found[0].fields.get(k) == v for k, v in fields.items()), dict(found[0].fields)
    assert "{" not in found[0].title and "?" not in found[0].title, found[0].title


@pytest.mark.parametrize(
    "line",
    [
        # healthy libfabric / aws-ofi-nccl start-up (efa_device.c, src/fabric.c; #5787 verbatim)
        "libfabric:194:1755801200::efa:fabric:efa_device_list_initialize():306<info> ibv_get_device_list returns total_device_cnt=32",
        "libfabric:194:1755801200::efa:fabric:efa_device_list_initialize():352<info> Ignoring non-EFA device (device_idx: 0, err: 95)",
        "libfabric:47889:core:core:fi_getinfo_():964<info> fi_getinfo: provider shm returned -61 (No data available)",
        "llama-3-8b-node-0-0:194:194 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa-direct (found 32 nics)",
        "llama-3-8b-node-0-0:194:194 [0] NCCL INFO NET/OFI Setting FI_OPT_MAX_MSG_SIZE not supported.",
        # other components' initialization
        "llama-3-8b-node-0-0:194:194 [0] NCCL INFO cudaDriverVersion 12080 - CUDA initialization failed earlier, retrying",
        # peer-abort bookkeeping uses prov_errno=, not a completion error line (efa_rdm_ope.c)
        "libfabric:194:1755801300::efa:cq:efa_rdm_rxe_mark_peer_aborted():714<info> Peer-abort marked on rxe 0x55d5 (op=1, device prov_errno=4127 Operation aborted)",
    ],
)
def test_healthy_efa_lines_are_quiet(line: str) -> None:
    assert [s.code for s in signals(line) if s.severity != "info"] == []


def test_flushed_work_is_only_a_consequence() -> None:
    (signal,) = signals(aws_ofi_nccl(125, 1, "Flushed during queue pair destroy"))
    assert signal.severity == "info"


def test_host_unreachable_errno_means_security_group_whatever_the_provider_number() -> None:
    # platform-aws.cpp: FI_EHOSTUNREACH "is only returned by EFA if packets are dropped due to security groups"
    (signal,) = signals(aws_ofi_nccl(113, 4096, "Unknown error"))
    assert (signal.code, signal.confidence) == ("efa.network_unreachable", "high")
    assert "security group" in signal.title


# efa_errno.h (libfabric v2.x): every number it defines gets a code from the public contract.
EFA_ERRNOS = [*range(0, 16), 18, *range(4096, 4128)]


@pytest.mark.parametrize("number", EFA_ERRNOS)
def test_every_efa_error_number_has_a_verdict(number: int) -> None:
    verdict = _verdict(str(number), "")
    assert (verdict.code or "efa.network_unreachable") in CODE_SET


def test_peer_gone_numbers_never_blame_the_security_group() -> None:
    for number in (8, 9, 13, 14, 4124, 4126, 4127):
        verdict = _verdict(str(number), "103")
        assert verdict.code == "nccl.peer_unresponsive", number
        assert "security group" not in (verdict.title or "")


def test_resource_exhaustion_is_not_reported_as_a_security_group() -> None:
    (signal,) = signals(aws_ofi_nccl(12, 4108, "RX entries exhausted"))
    assert "not a security-group problem" in signal.title and signal.confidence == "low"


def test_security_group_fixture_is_one_high_confidence_finding_with_the_sg_fix() -> None:
    diagnosis = explain_text((FIXTURES / "efa_security_group.log").read_text())
    assert [f.code for f in diagnosis.findings] == ["efa.network_unreachable"]
    finding = diagnosis.findings[0]
    assert (finding.severity, finding.confidence) == ("error", "high")
    assert len(finding.evidence) == 2  # the completion error and the banner line
    assert "authorize-security-group-ingress" in finding.fix.snippet
    check_snippet("generic/efa.network_unreachable.sh.j2", finding.fix.snippet)


def test_peer_gone_fixture_blames_the_peer_not_the_network() -> None:
    diagnosis = explain_text((FIXTURES / "efa_peer_gone.log").read_text())
    assert [f.code for f in diagnosis.findings] == ["nccl.peer_unresponsive"]
    assert "process most likely exited" in diagnosis.findings[0].title


def test_no_device_fixture_is_efa_resource_unavailable() -> None:
    diagnosis = explain_text((FIXTURES / "efa_no_device.log").read_text())
    assert [f.code for f in diagnosis.findings] == ["efa.resource_unavailable"]
    finding = diagnosis.findings[0]
    assert finding.confidence == "medium"  # the strongest line, not the vague plugin failure
    assert "vpc.amazonaws.com/efa" in finding.title
    check_snippet("generic/efa.resource_unavailable.yaml.j2", finding.fix.snippet)


def test_old_unnamed_error_fixture_points_at_the_security_group() -> None:
    diagnosis = explain_text((FIXTURES / "efa_unnamed_error_issue156.log").read_text())
    assert [(f.code, f.confidence) for f in diagnosis.findings] == [("efa.network_unreachable", "medium")]
    assert "security group" in diagnosis.findings[0].title


def test_benign_efa_start_up_is_quiet() -> None:
    assert explain_text((FIXTURES / "benign_efa_init.log").read_text()).findings == []
