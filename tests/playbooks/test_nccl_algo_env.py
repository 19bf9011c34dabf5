"""NCCL_ALGO / NCCL_PROTO that leave a collective no algorithm (NVIDIA/nccl src/enqueue.cc, src/graph/tuning.cc):
the setting is the cause, not a peer or the network, and the fix is to unset it."""
from __future__ import annotations

from playbooks.explain import explain_text

INFO = "ip-10-1-77-12:105:105 [0] NCCL INFO NCCL_ALGO set by environment to NVLS"
WARN_228 = ("ip-10-1-77-12:105:180 [0] enqueue.cc:1859 NCCL WARN Error : no algorithm/protocol available for function "
            "AllReduce with datatype ncclBfloat16. NCCL_ALGO was set to NVLS.")
WARN_230 = ("ip-10-1-77-12:105:180 [0] enqueue.cc:2063 NCCL WARN No algorithm/protocol available for function "
            "AllGather with datatype ncclInt8. NCCL_PROTO was set to LL128.")
WARN_OLD = "ip-10-1-77-12:105:180 [0] enqueue.cc:1528 NCCL WARN Error : no algorithm/protocol available"
TORCH = ("[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
         "ProcessGroupNCCL.cpp:3699, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.28.9")


def _cause(text: str):
    return explain_text(text).findings[0]


def test_the_warn_naming_nccl_algo_blames_the_setting():
    cause = _cause("\n".join((WARN_228, TORCH)))
    assert cause.code == "nccl.network_config" and cause.confidence == "high"
    assert "NCCL_ALGO=NVLS" in cause.title and "unset it" in cause.title
    assert "NCCL_ALGO=NVLS" in cause.detail and "not a peer or the network" in cause.detail
    assert "peer or the network failed first" not in cause.detail
    assert "Unset" in cause.detail and "env | grep" in cause.fix.snippet
    assert "nproc_per_node" not in cause.fix.summary


def test_nccl_proto_in_the_2_30_wording():
    cause = _cause(WARN_230)
    assert cause.code == "nccl.network_config" and "NCCL_PROTO=LL128" in cause.detail


def test_an_info_line_names_the_setting_for_older_nccl():
    cause = _cause("\n".join((INFO, WARN_OLD)))
    assert cause.code == "nccl.network_config" and cause.confidence == "high"
    assert "NCCL_ALGO=NVLS" in cause.detail and any(INFO in e.text for e in cause.evidence)


def test_without_the_setting_in_sight_it_says_what_to_check():
    cause = _cause(WARN_OLD)
    assert cause.code == "nccl.network_config" and cause.confidence == "low"
    assert "neither NCCL_ALGO nor NCCL_PROTO" in cause.detail and "internal error" in cause.detail


def test_the_info_line_alone_is_no_finding():
    assert explain_text(INFO).findings == []
