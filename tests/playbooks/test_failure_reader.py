"""The failure reader (playbooks/failures/): prefixes, one line's shape, the lines around it, wrapped
messages, and who failed first. Real outputs are the fixtures captured on a GPU (tests/fixtures/text/gpu/,
scripts/gpu_failures/); the property over every fixture and its variants is test_never_silent.py."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from playbooks.explain import explain_text
from playbooks.failures import lines, prefixes, wrapped
from playbooks.signatures import scan_line

GPU = Path(__file__).parent.parent / "fixtures" / "text" / "gpu"


def codes(text: str) -> list[str]:
    return [f.code for f in explain_text(text).findings]


@pytest.mark.parametrize(("line", "body", "rank", "host", "level"), [
    ("[rank3]: torch.OutOfMemoryError: CUDA out of memory", "torch.OutOfMemoryError: CUDA out of memory", "3", "", ""),
    ("[default1]:KeyError: 'x'", "KeyError: 'x'", "1", "", ""),
    ("E1125 23:58:24.039000 482 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 1)",
     "failed (exitcode: 1)", "", "", "E"),
    ("[W1125 23:58:32.992060601 ProcessGroupNCCL.cpp:1575] Warning: x", "Warning: x", "", "", "W"),
    ("[2026-11-25 23:58:32] vm:964:964 [0] bootstrap.cc:114 NCCL WARN Bootstrap : no socket interface found",
     "bootstrap.cc:114 NCCL WARN Bootstrap : no socket interface found", "", "vm", ""),
    ("2026-11-25T23:58:24.123456789Z [rank1]: RuntimeError: x", "RuntimeError: x", "1", "", ""),
    ("2026-11-25 23:58:24,006 - ERROR - ValueError: bad", "ValueError: bad", "", "", ""),
    ("[pod/llama-3-8b-worker-0/pytorch] KeyError: 3", "KeyError: 3", "", "", ""),
    ("2026-11-25T23:58:24Z Exception in thread", "Exception in thread", "", "", ""),  # "E" of a word is no level
])
def test_prefixes_are_taken_off_and_what_they_say_is_kept(line, body, rank, host, level) -> None:
    assert prefixes.split(line) == prefixes.Line(body=body, rank=rank, host=host, level=level)


def test_a_document_keeps_its_indentation_under_a_prefix() -> None:
    assert prefixes.remove("[rank0]:   exitcode  : -9 (pid: 3309)").rest == "  exitcode  : -9 (pid: 3309)"
    assert prefixes.remove("2026-11-26T19:05:16.183Z   rank      : 4").rest == "  rank      : 4"


@pytest.mark.parametrize(("line", "code", "error"), [
    # CUDA errors by message (cudaGetErrorString) and by name, in PyTorch's, CuPy's and NCCL's wording
    ("torch.AcceleratorError: CUDA error: an illegal memory access was encountered", "training.code_error", "cudaErrorIllegalAddress"),
    ("cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_MISALIGNED_ADDRESS: misaligned address",
     "training.code_error", "CUDA_ERROR_MISALIGNED_ADDRESS"),
    ("torch.AcceleratorError: CUDA error: invalid device ordinal", "training.gpu_not_visible", "cudaErrorInvalidDevice"),
    ("RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version", "training.gpu_not_visible",
     "cudaErrorInsufficientDriver"),
    ("host:1:2 [0] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'", "gpu.unhealthy_device", "cudaErrorECCUncorrectable"),
    # PyTorch's own words for a process without a GPU, and numbers that became NaN
    ("RuntimeError: No CUDA GPUs are available", "training.gpu_not_visible", None),
    ("RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.", "training.numerical", None),
    ("{'loss': nan, 'grad_norm': nan, 'learning_rate': 2e-05, 'epoch': 0.3}", "training.numerical", None),
    # NCCL's own WARN formats and results
    ("host:1:2 [0] NCCL WARN Failed to initialize any NET plugin", "nccl.network_config", None),
    ("ncclInternalError: Internal check failed.", "training.failed", "ncclInternalError"),
    # errno, signals and process ends
    ("OSError: [Errno 28] No space left on device: '/ckpt/step_100.pt'", "storage.disk_full", None),
    ("RuntimeError: DataLoader worker (pid 2211) is killed by signal: Killed. ", "training.terminated", "SIGKILL"),
    ("Segmentation fault (core dumped)", "training.failed", "SIGSEGV"),
    ("Memory cgroup out of memory: Killed process 4242 (python3) total-vm:1kB", "training.terminated", None),
    # any exception by its class from Python's and PyTorch's hierarchies; unknown ones still count
    ("ModuleNotFoundError: No module named 'flash_attn'", "training.failed", "ModuleNotFoundError"),
    ("ValueError: could not convert string to float: '3e-4x'", "training.code_error", "ValueError"),
    ("[rank2]: ChatTemplateError: no chat template", "training.failed", None),
    ("RuntimeError: [enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598", "storage.disk_full", None),
])
def test_a_failure_line_is_read_by_its_shape_and_classed_by_upstream(line: str, code: str, error: str | None) -> None:
    signals = scan_line(line, source="test")
    assert [s.code for s in signals] == [code], [(s.code, s.title) for s in signals]
    if error:
        assert signals[0].fields.get("error") == error or signals[0].fields.get("signal") == error


@pytest.mark.parametrize("line", [
    "    except torch.OutOfMemoryError:",  # code, not an exception line
    "UserWarning: TypedStorage is deprecated",  # a warning is no failure
    "[W socket.cpp:697] [c10d] The server socket has failed to bind to [::]:29500 (errno: 97 - Address family not supported by protocol).",
    "host:1:2 [0] NCCL INFO Cuda failure 'out of memory'",  # NCCL tracing a failure it cleared
    "Caught ValueError in DataLoader worker process 0.",  # a carrier: the original traceback follows
    "RuntimeError: Caught ValueError in DataLoader worker process 0.",
])
def test_what_is_not_a_failure_yields_nothing(line: str) -> None:
    assert scan_line(line, source="test") == []


def test_a_benign_exception_is_an_info_finding_that_says_why() -> None:
    (finding,) = explain_text("torch.distributed.elastic.rendezvous.api.RendezvousGracefulExitError: node left").findings
    assert finding.severity == "info" and "benign" in finding.title


def test_the_exception_that_ends_a_traceback_counts_whatever_its_name_in_its_own_rank_stream() -> None:
    text = "\n".join([
        "[rank1]: Traceback (most recent call last):",
        "[rank0]: step 12 loss 1.23",
        '[rank1]:   File "train.py", line 3, in <module>',
        "[rank1]:     tok = load()",
        "[rank1]:           ^^^^^^",
        "[rank0]: step 13 loss 1.22",
        "[rank1]: TokenizerConfigProblem: no chat template",
    ])
    (finding,) = explain_text(text).findings
    assert finding.code == "training.failed" and "TokenizerConfigProblem: no chat template" in finding.title
    assert finding.evidence[0].text == "[rank1]: TokenizerConfigProblem: no chat template"


def test_nccls_last_error_on_the_next_line_names_the_cause() -> None:
    text = ("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, "
            "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.28.9\n"
            "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
            "Last error:\n"
            "Failed to initialize any NET plugin\n")
    found = explain_text(text).findings
    assert [f.code for f in found] == ["nccl.network_config"]  # the ncclInvalidUsage wrapper is folded under it
    assert found[0].evidence[0].text == "Failed to initialize any NET plugin"


def test_a_cuda_error_inside_nccl_is_read_as_that_cuda_error_not_a_rank_count_mistake() -> None:
    text = ("host-7:88:120 [3] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'\n"
            "[rank3]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3699, unhandled cuda error "
            "(run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
            "[rank3]: ncclUnhandledCudaError: Call to CUDA function failed.\n")
    assert codes(text)[0] == "gpu.unhealthy_device"
    assert "nccl.invalid_usage" not in codes(text)


def test_hardware_is_never_blamed_without_hardware_evidence() -> None:
    for name in ("cuda_illegal_address.log", "cupy_illegal_address.log", "cupy_misaligned.log", "clip_grad_nonfinite.log"):
        found = codes((GPU / name).read_text())
        assert found and not any(code.startswith("gpu.") for code in found), (name, found)


def test_torchruns_root_cause_is_blamed_and_the_sigterm_it_sent_after_it_is_not() -> None:
    found = explain_text((GPU / "torchrun_invalid_ordinal.log").read_text()).findings
    assert [f.code for f in found] == ["training.gpu_not_visible"]
    assert found[0].title.startswith("Rank 1 on localhost failed first (exitcode 1)")
    killed = explain_text((GPU / "torchrun_sigkill.log").read_text()).findings
    assert killed[0].code == "training.terminated" and "rank 1" in killed[0].title and "SIGKILL" in killed[0].title
    assert not any("SIGTERM" in f.title for f in killed)


def test_a_sigterm_from_outside_stays_the_answer() -> None:
    found = explain_text((GPU / "torchrun_agent_sigterm.log").read_text()).findings
    assert found[0].code == "training.terminated" and "SIGTERM" in found[0].title


def test_a_bare_exit_code_is_never_silent_and_gives_way_to_the_error_it_had() -> None:
    assert codes("E1125 23:58:24.039000 482 api.py:986] failed (exitcode: 1) local_rank: 1 (pid: 620) of binary: python3") \
        == ["training.failed"]
    both = "ValueError: bad lr\nE1125 23:58:24.039000 482 api.py:986] failed (exitcode: 1) local_rank: 1 (pid: 620) of binary: x"
    assert codes(both) == ["training.code_error"]


EC2 = ("creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do "
       "not have sufficient p5.48xlarge capacity in the Availability Zone you requested (us-east-1a). Our system will be "
       "working on provisioning additional capacity.")


@pytest.mark.parametrize("width", [80, 120])
def test_a_message_wrapped_by_a_terminal_or_a_form_still_matches(width: int) -> None:
    terminal = "\n".join(EC2[i:i + width] for i in range(0, len(EC2), width))
    words, form, line = EC2.split(" "), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            form.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    form.append(line)
    for text in (terminal, "\n".join(form)):
        assert "karpenter.insufficient_capacity" in codes("some context\n" + text + "\nnext record"), text


def test_log_lines_are_not_joined_as_if_wrapped() -> None:
    log = "\n".join(f"host-1:194:712 [0] NCCL INFO Channel {i:02d}/0 : 3[0] -> 0[0] [receive] via NET/Libfabric/0/GDRDMA"
                    for i in range(6))
    assert list(wrapped.logical_lines(log)) == []


def test_hostile_lines_are_read_in_linear_time() -> None:
    line = "ValueError: " + "(" * 60_000 + "CUDA error: " * 2_000 + "[Errno 28] " * 1_000
    started = time.perf_counter()
    scan_line(line, source="test")
    lines.classify("x" * 200_000)
    assert time.perf_counter() - started < 2.0
