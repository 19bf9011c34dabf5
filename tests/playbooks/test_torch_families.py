"""PyTorch / CUDA / torchrun / NCCL failure text: OOM in its library spellings, elastic exits and signals,
rendezvous and c10d store failures, NCCL watchdog / heartbeat, system and CUDA errors.

Lines come from upstream format strings (cited in playbooks/signatures/{cuda_oom,elastic,nccl}.py) or from the
public issue named next to them; fixtures cite theirs in their header.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from playbooks.explain import explain_text
from playbooks.signatures import scan_line

FIXTURES = Path(__file__).parent.parent / "fixtures" / "text"


def signals(line: str, code: str) -> list:
    return [s for s in scan_line(line, source="test") if s.code == code]


@pytest.mark.parametrize(
    ("line", "code", "fields", "confidence"),
    [
        # OOM disguises -> training.cuda_oom
        ("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", "training.cuda_oom", {"call": "cublasCreate"}, "medium"),
        ("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED", "training.cuda_oom", {"status": "CUDNN_STATUS_ALLOC_FAILED"}, "medium"),
        ("RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", "training.cuda_oom", {"status": "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"}, "medium"),
        ("cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorMemoryAllocation: out of memory", "training.cuda_oom", {"status": "cudaErrorMemoryAllocation"}, "medium"),
        ("ip-10-1-77-12:105:180 [1] NCCL WARN Cuda failure 'out of memory'", "training.cuda_oom", {}, "medium"),
        ("ip-10-1-77-12:105:180 [1] include/alloc.h:120 NCCL WARN Cuda failure 2 'out of memory'", "training.cuda_oom", {}, "medium"),
        ("ip-10-1-77-12:105:180 [1] include/alloc.h:462 NCCL WARN Failed to CUDA malloc 2097152 bytes", "training.cuda_oom", {"nccl_bytes": "2097152"}, "medium"),
        ("RuntimeError: CUDA error: out of memory", "training.cuda_oom", {}, "medium"),
        ("torch.AcceleratorError: CUDA driver error: out of memory", "training.cuda_oom", {}, "medium"),
        ("[rank1]: torch.OutOfMemoryError: Allocation on device 1 would exceed allowed memory. (out of memory)", "training.cuda_oom", {"gpu": "1"}, "high"),
        # torchrun / elastic -> training.terminated (a signal from outside)
        ("E0325 20:57:27.620000 2606 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 5 (pid: 2630) of binary: /root/miniconda3/bin/python",  # lmzpai/roboMamba#10
         "training.terminated", {"exit_code": "-9", "signal": "SIGKILL", "local_rank": "5", "pid": "2630"}, "medium"),
        ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 3 (pid: 812917) of binary: /data/chenhao/anaconda3/envs/ColossalAI-Chat/bin/python",  # hpcaitech/ColossalAI#3514
         "training.terminated", {"signal": "SIGKILL", "local_rank": "3"}, "medium"),
        ("  exitcode  : -9 (pid: 3309)", "training.terminated", {"exit_code": "-9", "signal": "SIGKILL", "pid": "3309"}, "medium"),  # apple/ml-recurrent-drafter#5
        ("  exitcode  : -15 (pid: 194)", "training.terminated", {"signal": "SIGTERM"}, "high"),
        ("  traceback : Signal 9 (SIGKILL) received by PID 3309", "training.terminated", {"signal": "SIGKILL"}, "medium"),
        ("WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers", "training.terminated", {"signal": "SIGTERM"}, "high"),  # pytorch/pytorch#116974
        # rendezvous and c10d store -> training.rendezvous_failed
        ("torch.distributed.elastic.rendezvous.api.RendezvousClosedError", "training.rendezvous_failed", {"error": "RendezvousClosedError"}, "medium"),  # kubeflow/trainer#1638
        ("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError", "training.rendezvous_failed", {"error": "RendezvousTimeoutError"}, "medium"),
        ("torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /default_pg//0//cuda//0", "training.rendezvous_failed", {"timeout_ms": "300000", "keys": "/default_pg//0//cuda//0"}, "high"),
        ("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/4 clients joined.", "training.rendezvous_failed", {"joined": "1", "world": "4"}, "high"),
        ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
         "training.rendezvous_failed", {"port": "29500", "problem": "address already in use"}, "high"),
        ("RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).",
         "training.rendezvous_failed", {"port": "29500", "problem": "address already in use"}, "high"),
        ("torch.distributed.DistNetworkError: The client socket has timed out after 900000ms while trying to connect to (llama-3-8b-master-0, 29500).",
         "training.rendezvous_failed", {"host": "llama-3-8b-master-0", "port": "29500"}, "medium"),
        ("torch.distributed.DistNetworkError: Connection reset by peer", "training.rendezvous_failed", {}, "medium"),  # openvla/openvla#61
        ("[rank6]:[W729 10:15:17.529361055 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=76, addr=[localhost]:60950, remote=[localhost]:29500): Connection reset by peer",  # tdrussell/diffusion-pipe#333
         "training.rendezvous_failed", {}, "low"),
        # NCCL
        ("[rank6]:[E429 13:45:49.102367190 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID 0(default_pg) Rank 6] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8113, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for 600094 milliseconds before timing out.",
         "nccl.timeout", {"rank": "6", "seq": "8113", "op": "ALLREDUCE", "timeout_ms": "600000", "ran_ms": "600094"}, "low"),
        ("[rank6]:[E429 13:45:49.102713598 ProcessGroupNCCL.cpp:670] [Rank 6] Timeout at NCCL work: 8113, last enqueued NCCL work: 8113, last completed NCCL work: 8112.", "nccl.timeout", {"rank": "6", "seq": "8113"}, "low"),
        ("[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1",  # facebookresearch/dinov2#447
         "nccl.timeout", {"rank": "0"}, "low"),
        ("[rank144]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 144] [PG 0 Rank 144] ProcessGroupNCCL's watchdog got stuck for 600 seconds without making progress in monitoring enqueued collectives.",  # hiyouga/LlamaFactory#6953
         "nccl.timeout", {"rank": "144", "stuck_s": "600"}, "low"),
        ("RuntimeError: NCCL communicator was aborted on rank 3. Original reason for failure was: [Rank 3] Some NCCL operations have failed or timed out.", "nccl.timeout", {"rank": "3"}, "low"),
        ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
         "nccl.peer_unresponsive", {"problem": "ncclSystemError", "nccl_version": "2.19.3"}, "low"),
        ("ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.", "nccl.peer_unresponsive", {"problem": "ncclSystemError"}, "low"),
        ("RuntimeError: NCCL error: unhandled system error, NCCL version 2.12.12", "nccl.peer_unresponsive", {"nccl_version": "2.12.12"}, "low"),
        ("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3699, remote process exited or there was a network error, NCCL version 2.27.3",
         "nccl.peer_unresponsive", {"nccl_version": "2.27.3"}, "medium"),
        ("[rank0]: ncclUnhandledCudaError: Call to CUDA function failed.", "nccl.invalid_usage", {"problem": "unhandled cuda error"}, "low"),
        ("ip-10-1-77-12:105:180 [1] NCCL WARN Cuda failure 'invalid device ordinal'", "nccl.invalid_usage", {"cuda_error": "invalid device ordinal"}, "medium"),
        ("ip-10-1-77-12:105:180 [1] NCCL WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'", "nccl.invalid_usage", {"problem": "unhandled cuda error"}, "medium"),
    ],
)
def test_real_line_yields_code_fields_and_confidence(line: str, code: str, fields: dict[str, str], confidence: str) -> None:
    found = signals(line, code)
    assert found, (line, [s.code for s in scan_line(line, source="test")])
    assert any(all(s.fields.get(k) == v for k, v in fields.items()) for s in found), [dict(s.fields) for s in found]
    assert {s.confidence for s in found} == {confidence}
    assert all("{" not in s.title and "[" not in s.title for s in found)


def test_nccl_system_error_about_shared_memory_is_shm() -> None:
    line = ("NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error (run with NCCL_DEBUG=INFO "
            "for details), NCCL version 2.21.5 ncclSystemError: System call (e.g. socket, malloc) or external library call "
            "failed or device error. Last error: Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)")
    assert {s.code for s in scan_line(line, source="test")} == {"training.shm_exhausted"}


@pytest.mark.parametrize(
    "line",
    [
        # a clean finish, and the fields of torchrun's table (its document reader reads them as a whole)
        "  exitcode  : 1 (pid: 4121)",
        "  exitcode  : 0 (pid: 4121)",
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
        # OOM words outside an error
        '  "retry_on_cuda_out_of_memory": true,',
        '    """Halve the micro-batch and retry when CUDA runs out of memory."""',
        "    except torch.OutOfMemoryError:",
        "llama-3-8b-node-0-0:194:712 [0] NCCL INFO Cuda failure 'out of memory'",  # CUDACHECKIGNORE: cleared, went on
        # healthy NCCL and c10d lines
        "llama-3-8b-node-0-0:194:712 [0] NCCL INFO ncclCommInitRankConfig comm 0x55d5c8a0 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 101c0 commId 0x5c1e2f4d - Init COMPLETE",
        "llama-3-8b-node-0-0:194:194 [0] NCCL INFO NCCL_DEBUG set by environment to INFO.",
        "[W socket.cpp:697] [c10d] The server socket has failed to bind to [::]:29500 (errno: 97 - Address family not supported by protocol).",
        "I0101 12:00:00.100000 7 torch/distributed/launcher/api.py:188]   rdzv_configs     : {'timeout': 900}",
    ],
)
def test_near_misses_stay_quiet(line: str) -> None:
    assert scan_line(line, source="test") == [], [s.code for s in scan_line(line, source="test")]


@pytest.mark.parametrize(
    ("line", "code", "confidence"),
    [
        # the script's own exit: its output holds the error; the floor says so (never silent)
        ("failed (exitcode: 1) local_rank: 0 (pid: 876053) of binary: /usr/bin/python3.11", "training.failed", "low"),
        # not an OOM of the GPU (host memory inside cuDNN): the generic floor with cuDNN's status, not training.cuda_oom
        ("RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED", "training.failed", "low"),
        # not the set-up (no rank-count fix): the CUDA error inside NCCL read from the CUDA table, the job's code
        ("ip-10-1-77-12:105:180 [1] NCCL WARN Cuda failure 'an illegal memory access was encountered'", "training.code_error", "medium"),
        # a hardware report wherever it is printed, NCCL's CUDA check included
        ("ip-10-1-77-12:105:180 [1] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'", "gpu.unhealthy_device", "medium"),
    ],
)
def test_errors_beside_the_families_are_read_by_the_structural_floor(line: str, code: str, confidence: str) -> None:
    found = [(s.code, s.confidence) for s in scan_line(line, source="test")]
    assert found == [(code, confidence)]


@pytest.mark.parametrize(
    ("fixture", "code", "severity", "confidence", "words"),
    [
        ("torch_childfailed_sigkill.log", "training.terminated", "error", "medium", ("SIGKILL", "OOM killer")),
        ("torch_library_oom.log", "training.cuda_oom", "error", "high", ("GPU 1",)),
        ("torch_nccl_cuda_oom.log", "training.cuda_oom", "error", "medium", ("NCCL",)),
        ("torch_watchdog_timeout.log", "nccl.timeout", "error", "low", ("ALLREDUCE", "600000 ms", "rank 6")),
        ("torch_rendezvous_closed.log", "training.rendezvous_failed", "error", "medium", ("closed",)),
        ("torch_port_in_use.log", "training.rendezvous_failed", "error", "high", ("29500", "address already in use")),
        ("torch_nccl_system_error.log", "nccl.peer_unresponsive", "error", "low", ("ncclSystemError", "NCCL_DEBUG=INFO")),
    ],
)
def test_fixture_first_finding(fixture: str, code: str, severity: str, confidence: str, words: tuple[str, ...]) -> None:
    findings = explain_text((FIXTURES / fixture).read_text()).findings
    first = findings[0]
    assert (first.code, first.severity, first.confidence) == (code, severity, confidence), [(f.code, f.confidence) for f in findings]
    assert all(word in first.title for word in words), first.title
    assert first.fix.snippet and first.detail


def test_library_oom_spellings_are_one_finding_with_all_evidence() -> None:
    findings = explain_text((FIXTURES / "torch_library_oom.log").read_text()).findings
    assert [f.code for f in findings] == ["training.cuda_oom"]
    evidence = " ".join(e.text for e in findings[0].evidence)
    assert "CUBLAS_STATUS_ALLOC_FAILED" in evidence and "DEVICE_ALLOCATION_FAILED" in evidence


def test_oom_in_nccl_is_never_blamed_on_the_network() -> None:
    codes = [f.code for f in explain_text((FIXTURES / "torch_nccl_cuda_oom.log").read_text()).findings]
    assert codes[0] == "training.cuda_oom"
    assert not {"nccl.peer_unresponsive", "efa.network_unreachable"} & set(codes)
    # ncclUnhandledCudaError is the OOM's echo there, not a second problem
    assert "nccl.invalid_usage" not in codes
    echo = "NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled cuda error (run with NCCL_DEBUG=INFO for details)"
    assert [f.code for f in explain_text(echo).findings] == ["nccl.invalid_usage"]


def test_healthy_torchrun_launch_is_quiet() -> None:
    assert explain_text((FIXTURES / "benign_torch_launch.log").read_text()).findings == []
