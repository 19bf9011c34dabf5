"""NCCL refused the job's configuration (``ncclInvalidUsage``): most often two ranks on one GPU, because
torchrun starts more processes per node (``--nproc_per_node``) than the pod was given ``nvidia.com/gpu``.

Sources:
- NVIDIA/nccl src/init.cc ``initTransportsRank``: ``WARN("Duplicate GPU detected : rank %d and rank %d both
  on CUDA device %lx", ...)`` then ``ret = ncclInvalidUsage``.
- NVIDIA/nccl src/init.cc ``ncclGetErrorString`` (codes from src/nccl.h.in): ``invalid usage (run with
  NCCL_DEBUG=WARN for details)``.
- pytorch/pytorch torch/csrc/distributed/c10d/NCCLUtils.hpp ``getNcclErrorDetailStr``: ``ncclInvalidUsage:
  This usually reflects invalid usage of NCCL library.``; ProcessGroupNCCL wraps it as ``DistBackendError:
  NCCL error in: ...ProcessGroupNCCL.cpp:<n>, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL
  version 2.x``.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict


def _usage(fields: dict[str, str], text: str) -> Verdict:
    if "Duplicate GPU detected" in text:
        return Verdict(title="NCCL: two ranks share one GPU[ (ranks {rank} and {other_rank}, bus id {bus_id})]: more ranks than GPUs in the pod",
                       fields={"problem": "duplicate GPU"})
    return Verdict(confidence="medium")


RULES: tuple[Rule, ...] = (
    Rule(
        name="nccl.invalid_usage",
        code="nccl.invalid_usage",
        severity="error",
        confidence="high",
        title="NCCL refused the job's configuration (ncclInvalidUsage)",
        keywords=("Duplicate GPU detected", "ncclInvalidUsage", "invalid usage (run with NCCL_DEBUG"),
        extract=(
            linear.compile(r"Duplicate GPU detected : rank (?P<rank>\d{1,6}) and rank (?P<other_rank>\d{1,6}) both on CUDA device (?P<bus_id>[0-9a-fA-F]{1,16})"),
            linear.compile(r"NCCL version (?P<nccl_version>[\d.]{1,20})"),
        ),
        refine=_usage,
        fields_doc="rank, other_rank, bus_id, problem (duplicate GPU), nccl_version",
        example="ip-10-1-77-12:105:105 [1] init.cc:1018 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1d000",
    ),
)
