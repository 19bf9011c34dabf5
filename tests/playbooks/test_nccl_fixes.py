"""nccl.py's ofi.request_error on libfabric's own ``err: <errno>, message: <text> (<EFA number>)`` warning, and the
timestamps the peer rules carry for blame (playbooks/signatures/log_time.py).

The libfabric line shape is ofiwg/libfabric prov/efa/src/rdm/efa_rdm_ope.c ``efa_rdm_txe_handle_error``
(``"err: %d, message: %s (%d)"``) as aws/aws-ofi-nccl#346 quotes it
(https://github.com/aws/aws-ofi-nccl/issues/346: ``err: 5, message: Invalid address My EFA addr: ... (7)``);
the other numbers and texts are efa_errno.h's (v2.x spells 15 "Unreachable remote - never received a response")."""
from __future__ import annotations

import pytest

from playbooks.signatures import log_time
from playbooks.signatures.catalogue import scan_line
from playbooks.signatures.nccl import PEER_GONE_ERRORS, RULES

PREFIX = "libfabric:451707:1708520807::efa:cq:efa_rdm_txe_handle_error():737<warn> "
ADDRS = ("My EFA addr: fi_addr_efa://[fe80::13:c2ff:fe6f:f03d]:0:1072483550 My host id: i-0db7083f3fcbebb65 "
         "Peer EFA addr: fi_addr_efa://[fe80::b8:aff:fe44:425]:0:947699476 Peer host id: i-0ce6d3d57139f053c")
ISSUE_346 = PREFIX + "err: 5, message: Invalid address " + ADDRS + " (7)"


def libfabric(err: int, message: str, efa_number: int) -> str:
    return f"{PREFIX}err: {err}, message: {message} {ADDRS} ({efa_number})"


def only(line: str):
    signals = scan_line(line, source="t")
    assert len(signals) == 1, [(s.code, s.title) for s in signals]
    return signals[0]


def test_the_trailing_number_is_the_efa_error_not_the_libfabric_errno() -> None:
    signal = only(libfabric(103, "Unresponsive receiver (reachable by EFA device but handshake failed)", 4126))
    assert signal.code == "nccl.peer_unresponsive"
    assert (signal.fields["ofi_error"], signal.fields["fi_errno"]) == ("4126", "103")
    assert "My EFA addr" not in signal.title


@pytest.mark.parametrize("number, message", [
    (9, "Bad queue pair (QP) number (QP does not exist or is in error state)"),
    (14, "No valid address handle at remote side (required for RDMA operations)"),
    (4127, "Operation aborted"),  # efa_rdm_rxe_mark_peer_aborted wording, as test_efa_families.py quotes it
    (13, "Unresponsive remote (was previously responsive)"),
])
def test_every_vanished_peer_number_agrees_with_efa_py(number: int, message: str) -> None:
    assert only(libfabric(103, message, number)).code == "nccl.peer_unresponsive"


def test_issue_346_invalid_address_stays_an_efa_error_with_a_clean_message() -> None:
    signal = only(ISSUE_346)
    assert signal.code == "efa.network_unreachable" and signal.confidence == "medium"
    assert signal.fields["ofi_error"] == "7" and signal.fields["ofi_message"] == "Invalid address"
    assert signal.title == "EFA/libfabric error 7 (Invalid address)"


def test_v2_unreachable_remote_message_stops_before_the_addresses() -> None:
    signal = only(libfabric(113, "Unreachable remote - never received a response", 15))
    assert signal.code == "efa.network_unreachable" and signal.confidence == "high"
    assert signal.fields["ofi_message"] == "Unreachable remote - never received a response"
    assert "fi_addr_efa" not in signal.title
    # aws-ofi-nccl's "Error: 15 (<text> My EFA addr: ...)" shape with the v2.x text: the same cut
    ofi = ("ip-10-0-5-89:194:710 [0] NCCL WARN NET/OFI Request 0x7f2a1c0 completed with error. RC: 113. Error: 15 "
           "(Unreachable remote - never received a response " + ADDRS + "). Completed length: 0")
    assert only(ofi).fields["ofi_message"] == "Unreachable remote - never received a response"


def test_aws_ofi_nccl_error_shape_keeps_its_number() -> None:
    # "Error: N (" carries the EFA number itself; a "(N)" inside the text must not replace it
    line = ("NCCL WARN NET/OFI Request 0x7f456c222f60 completed with error. RC: 103. Error: 4126 (Unresponsive receiver "
            "(reachable by EFA device but handshake failed) " + ADDRS + "). Completed length: 0")
    signal = only(line)
    assert signal.fields["ofi_error"] == "4126" and "fi_errno" not in signal.fields


def test_peer_gone_list_is_efa_py_list() -> None:
    assert {"4126", "4124", "13", "8", "9", "14", "4127"} == PEER_GONE_ERRORS


def test_peer_rules_carry_time_and_host() -> None:
    line = ("[2026-01-01 12:08:32] llama-3-8b-node-0-0:194:710 [0] int cm_req_handle_error_entry(nccl_net_ofi_context_t*, "
            "fid_cq*, fi_cq_err_entry*, uint16_t):46 NCCL WARN NET/OFI Request 0x7f456c222f60 completed with error. RC: 103. "
            "Error: 4126 (Unresponsive receiver (reachable by EFA device but handshake failed) " + ADDRS + "). Completed length: 0")
    signal = only(line)
    assert (signal.fields["time"], signal.fields["host"]) == ("2026-01-01T12:08:32Z", "llama-3-8b-node-0-0")
    assert only(ISSUE_346).fields["time"] == "2024-02-21T13:06:47Z"  # libfabric's epoch seconds
    watchdog = next(r for r in RULES if r.name == "nccl.watchdog_timeout").example
    assert only(watchdog).fields["time"] == "--12-18T20:27:21.426415Z"  # c10 logging: no year
    socket = "ip-10-0-1-5:88:120 [0] NCCL WARN NET/Socket : Connect to 10.0.2.7<43719> failed : Connection refused"
    assert only(socket).fields == {"problem": "Connection refused", "host": "ip-10-0-1-5"}
    untimed = "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3699, remote process exited or there was a network error, NCCL version 2.27.3"
    assert "time" not in only(untimed).fields and "host" not in only(untimed).fields


@pytest.mark.parametrize("line, expected", [
    ("[2026-01-01 12:08:32] host-1:1:2 [0] NCCL WARN", "2026-01-01T12:08:32Z"),
    ("[2026-01-01 12:08:32,123] torch.distributed.elastic.agent.server.api: [default] Starting worker group", "2026-01-01T12:08:32.123000Z"),
    ("2026-01-01T12:08:32.123456789Z host-1:1:2 [0] NCCL WARN", "2026-01-01T12:08:32.123456Z"),
    ("2026-01-01T14:08:32+02:00 x", "2026-01-01T12:08:32Z"),
    ("E0101 12:08:32.123456    7 api.py:874] failed (exitcode: -9)", "--01-01T12:08:32.123456Z"),
    ("[rank0]:[W101 12:08:33.945328381 ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group()", "--01-01T12:08:33.945328Z"),
    ("libfabric:194:1755801234::efa:cq:efa_cq_write_error_data():105<info> x", "2025-08-21T18:33:54Z"),
    # near misses: no stamp at the start, or one that is not a time
    ("ip-10-0-1-5:88:120 [0] NCCL WARN x", None),
    ("Error: 4126 (Unresponsive receiver", None),
    ("[1,13]<stdout>:nccl-tests-worker-1:35:89 [5] NCCL WARN", None),
    ("I1399 12:00:00.000000 1 x.go:1] month 13", None),
    ("2026-13-01T12:08:32Z x", None),
    ("12345 is not a time", None),
    ("", None),
])
def test_line_time(line: str, expected: str | None) -> None:
    assert log_time.line_time(line) == expected


def test_line_host_needs_the_whole_nccl_prefix() -> None:
    assert log_time.line_host("[2026-01-01 12:08:32] llama-3-8b-node-0-0:194:710 [0] NCCL WARN x") == "llama-3-8b-node-0-0"
    assert log_time.line_host("libfabric:451707:1708520807::efa:cq:x") is None
    assert log_time.line_host("host:1:2 NCCL WARN") is None


def test_first_failure_blames_the_host_that_failed_clearly_first() -> None:
    pairs = [("node-1", "2026-01-01T12:08:40Z"), ("node-3", "2026-01-01T12:08:02Z"), ("node-1", "2026-01-01T12:08:35Z"),
             ("node-2", "2026-01-01T12:08:39Z")]
    assert log_time.first_failure(pairs) == ("node-3", False)


def test_first_failure_within_two_seconds_blames_nobody() -> None:
    pairs = [("node-1", "2026-01-01T12:08:33.900000Z"), ("node-2", "2026-01-01T12:08:32Z"), ("node-3", "2026-01-01T12:09:30Z")]
    assert log_time.first_failure(pairs) == ("node-2", True)
    assert log_time.first_failure([("node-1", "2026-01-01T12:08:35Z"), ("node-2", "2026-01-01T12:08:32Z")]) == ("node-2", False)


def test_first_failure_edge_cases() -> None:
    assert log_time.first_failure([]) is None
    assert log_time.first_failure([("a", "not a time")]) is None
    assert log_time.first_failure([("a", "2026-01-01T12:00:00Z")]) == ("a", True)
    # a year-less klog stamp compares with full ones of the same run
    assert log_time.first_failure([("a", "2026-01-01T12:00:10Z"), ("b", "--01-01T12:00:00.5Z")]) == ("b", False)
