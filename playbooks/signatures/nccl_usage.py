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

NCCL_ALGO / NCCL_PROTO that leave a collective no algorithm (rules nccl.algo_unavailable, nccl.algo_env):
- NVIDIA/nccl src/enqueue.cc (2.14 to 2.27): ``WARN("Error : no algorithm/protocol available")`` and
  ``return ncclInternalError``; 2.28: ``WARN("Error : no algorithm/protocol available for function %s with
  datatype %s.%s%s", ...)`` whose last two parts are `` NCCL_ALGO was set to %s.`` / `` NCCL_PROTO was set to
  %s.`` when the variables are set, then ``return (algoEnv || protoEnv) ? ncclInvalidUsage :
  ncclInternalError``; 2.30 drops the ``Error : `` prefix.
- src/graph/tuning.cc ``ncclTopoTuneModel``: ``INFO(NCCL_ENV, "NCCL_ALGO set by environment to %s", ...)`` and
  the same for NCCL_PROTO, printed at start-up with NCCL_DEBUG=INFO.
The finding is nccl.network_config, not nccl.invalid_usage: the cause is an NCCL_* variable the pod's
topology cannot honour, whose fix (unset it or choose what the GPUs and network support) is that of
NCCL_SOCKET_IFNAME / NCCL_NET; nccl.invalid_usage's remedy (one rank per GPU) would mislead, and explain.py
already reads the ncclInvalidUsage that wraps a network set-up failure as that failure's consequence.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict


def _usage(fields: dict[str, str], text: str) -> Verdict:
    if "Duplicate GPU detected" in text:
        return Verdict(title="NCCL: two ranks share one GPU[ (ranks {rank} and {other_rank}, bus id {bus_id})]: more ranks than GPUs in the pod",
                       fields={"problem": "duplicate GPU"})
    return Verdict(confidence="medium")


_ALGO_ENV = linear.compile(r"NCCL_(?P<variable>ALGO|PROTO) (?:was set to|set by environment to) (?P<value>[^\s.]{1,200}(?:\.[^\s.]{1,200})*)")


def _env(text: str) -> dict[str, str]:
    fields = {}
    for m in _ALGO_ENV.finditer(text):
        fields["nccl_" + m.group("variable").lower()] = m.group("value")
    return fields


def _algo_unavailable(fields: dict[str, str], text: str) -> Verdict:
    env = _env(text)
    facts = {"problem": "no algorithm/protocol", **env}
    if env:
        shown = " and ".join(f"NCCL_{k.removeprefix('nccl_').upper()}={v}" for k, v in env.items())
        return Verdict(confidence="high", fields=facts,
                       title=f"NCCL has no algorithm/protocol for the collective[ ({{function}}, {{datatype}})] under {shown}: unset it or pick one this topology supports")
    return Verdict(fields=facts)


def _algo_env(fields: dict[str, str], text: str) -> Verdict | None:
    env = _env(text)
    return Verdict(fields={"problem": "algorithm set by environment", **env}) if env else None


RULES: tuple[Rule, ...] = (
    Rule(
        name="nccl.algo_unavailable",
        code="nccl.network_config",
        severity="error",
        confidence="low",
        title="NCCL has no algorithm/protocol for the collective[ ({function}, {datatype})]: NCCL_ALGO / NCCL_PROTO, if set, exclude every one this topology supports; otherwise an internal NCCL error",
        keywords=("no algorithm/protocol available", "No algorithm/protocol available"),
        extract=(linear.compile(r"for function (?P<function>\w{1,40}) with datatype (?P<datatype>\w{1,40})"),),
        refine=_algo_unavailable,
        fields_doc="function, datatype, nccl_algo, nccl_proto, problem (no algorithm/protocol)",
        example="ip-10-1-77-12:105:180 [0] enqueue.cc:1859 NCCL WARN Error : no algorithm/protocol available for function AllReduce with datatype ncclBfloat16. NCCL_ALGO was set to NVLS.",
    ),
    Rule(
        # Only context: alone it is an info signal (an INFO line is no failure, explain.py drops it); next to
        # nccl.algo_unavailable it says which setting was in force on NCCL releases whose WARN does not.
        name="nccl.algo_env",
        code="nccl.network_config",
        severity="info",
        confidence="high",
        title="NCCL_ALGO / NCCL_PROTO set in the job's environment",
        keywords=("NCCL_ALGO set by environment to", "NCCL_PROTO set by environment to"),
        refine=_algo_env,
        fields_doc="nccl_algo, nccl_proto, problem (algorithm set by environment)",
        example="ip-10-1-77-12:105:105 [0] NCCL INFO NCCL_ALGO set by environment to NVLS",
    ),
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
