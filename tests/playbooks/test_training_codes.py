"""nccl.invalid_usage, training.code_error, training.shm_exhausted, training.crash_loop: from text and from
live container state. Fixtures cite where each line comes from (NVIDIA/nccl, pytorch/pytorch, kubelet)."""
from __future__ import annotations

from pathlib import Path

import yaml

from playbooks.analyzers import crash_loop
from playbooks.codes import CODES
from playbooks.engine import analyze
from playbooks.explain import explain_text
from playbooks.facts import Facts, PodFacts
from playbooks.model import Target
from playbooks.registry import default_registry
from tests.playbooks.test_explain import check_snippet

FIXTURES = Path(__file__).parent.parent / "fixtures" / "text"


def codes(name: str) -> list[str]:
    return [f.code for f in explain_text((FIXTURES / name).read_text()).findings]


def test_codes_are_in_root_cause_order() -> None:
    at = CODES.index
    assert at("training.code_error") < at("nccl.peer_unresponsive") < at("nccl.timeout") < at("training.crash_loop")
    assert at("nccl.invalid_usage") < at("nccl.peer_unresponsive")
    assert at("training.shm_exhausted") < at("nccl.peer_unresponsive")
    training = [c for c in CODES if c.startswith("training.")]
    assert training[-1] == "training.crash_loop"


def test_device_side_assert_is_a_code_error_never_the_gpu() -> None:
    diagnosis = explain_text((FIXTURES / "training_device_assert.log").read_text())
    found = [f.code for f in diagnosis.findings]
    assert found[0] == "training.code_error"
    assert not [c for c in found if c.startswith(("gpu.", "node."))], found  # Xid 43 too: the job's fault
    first = diagnosis.findings[0]
    assert (first.severity, first.confidence) == ("error", "high")
    assert "CUDA_LAUNCH_BLOCKING" in first.fix.snippet and "not the GPU" in first.detail
    check_snippet("generic/training.code_error.yaml.j2", first.fix.snippet)


def test_each_code_error_shape() -> None:
    lines = {
        "/pytorch/aten/src/ATen/native/cuda/Loss.cu:245: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [7,0,0] Assertion `t >= 0 && t < n_classes` failed.": "label",
        "IndexError: index out of range in self": "",
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x4096 and 1024x4096)": "",
        "NVRM: Xid (PCI:0000:53:00): 13, pid=4121, name=python, Graphics SM Warp Exception on (GPC 1, TPC 0, SM 1): Out Of Range Address": "",
    }
    for line, word in lines.items():
        found = explain_text(line).findings
        assert [f.code for f in found] == ["training.code_error"], (line, [f.code for f in found])
        assert word in found[0].detail


def test_hardware_xid_stays_a_gpu_finding() -> None:
    found = explain_text("NVRM: Xid (PCI:0000:10:1c): 79, pid=1234, GPU has fallen off the bus.").findings
    assert [f.code for f in found] == ["gpu.xid_error"]


def test_dataloader_and_nccl_shm_are_shm_exhausted_with_an_emptydir_fix() -> None:
    diagnosis = explain_text((FIXTURES / "training_shm_dataloader.log").read_text())
    assert [f.code for f in diagnosis.findings] == ["training.shm_exhausted"]
    fix = diagnosis.findings[0].fix
    doc = yaml.safe_load(fix.snippet)
    assert doc["spec"]["volumes"][0]["emptyDir"]["medium"] == "Memory"
    assert doc["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] == "/dev/shm"
    check_snippet("generic/training.shm_exhausted.yaml.j2", fix.snippet)


def test_duplicate_gpu_is_invalid_usage_naming_nproc_per_node() -> None:
    diagnosis = explain_text((FIXTURES / "nccl_duplicate_gpu.log").read_text())
    first = diagnosis.findings[0]
    assert first.code == "nccl.invalid_usage" and first.severity == "error"
    assert "ranks 5 and 1" in first.title
    assert "nproc_per_node" in first.detail and "nvidia.com/gpu" in first.detail
    assert "nproc_per_node" in first.fix.summary


def test_describe_of_a_crash_loop_without_cause_is_crash_loop() -> None:
    assert codes("crash_loop_describe.txt") == ["training.crash_loop"]


def test_crash_loop_is_dropped_when_the_text_says_why() -> None:
    text = (FIXTURES / "crash_loop_describe.txt").read_text() + (FIXTURES / "training_device_assert.log").read_text()
    found = [f.code for f in explain_text(text).findings]
    assert "training.code_error" in found and "training.crash_loop" not in found


def test_negatives_stay_quiet() -> None:
    for line in (
        "llama-3-8b-worker-0:105:180 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[2] via SHM/direct/direct",
        "python: malloc.c:2379: sysmalloc: Assertion `(old_top == initial_top (av) && old_size == 0)' failed.",
        "Restart Count:  3",
        "NCCL INFO NCCL_SHM_DISABLE set by environment to 0.",
        "assert labels.max() < num_classes, 'label out of range'",
    ):
        assert explain_text(line).findings == [], line
    assert codes("benign_training_families.log") == []


# -- live: container state --------------------------------------------------------------------------

def _pod(*, exit_code: int = 1, log: str = "", waiting: str = "CrashLoopBackOff") -> PodFacts:
    pod = {
        "metadata": {"name": "train-0", "namespace": "ml"},
        "spec": {"nodeName": "n1", "containers": [{"name": "trainer"}]},
        "status": {"phase": "Running", "containerStatuses": [{
            "name": "trainer", "restartCount": 4,
            "state": {"waiting": {"reason": waiting}},
            "lastState": {"terminated": {"exitCode": exit_code, "reason": "Error", "finishedAt": "2026-01-01T11:06:02Z"}},
        }]},
    }
    return PodFacts(pod=pod, logs={("trainer", True): log} if log else {})


def _diagnose(pod: PodFacts):
    facts = Facts(target=Target(kind="pod", name="train-0", namespace="ml"), cluster="test", pods=[pod])
    return analyze(facts, registry=default_registry())


def test_live_crash_loop_quotes_exit_code_and_last_error_lines() -> None:
    # An error of a class no upstream table names: the crash loop's own finding quotes it with the exit code.
    log = "step 0\nTraceback (most recent call last):\n  File \"t.py\", line 3\nTokenizerConfigError: 'input_ids'\n"
    diagnosis = _diagnose(_pod(log=log))
    first = diagnosis.findings[0]
    assert first.code == "training.crash_loop" and first.severity == "error"
    assert "exit code 1" in first.title and "4 restarts" in first.title
    assert any("TokenizerConfigError: 'input_ids'" in e.text for e in first.evidence)
    assert any('"exitCode": 1' in e.text for e in first.evidence)
    assert "--previous" in first.fix.snippet and "trainer" in first.fix.snippet


def test_live_crash_loop_of_a_classed_exception_leads_with_the_exception() -> None:
    # KeyError is a code error in Python's own hierarchy (failures/tables.py): the cause, then no crash loop.
    log = "step 0\nTraceback (most recent call last):\n  File \"t.py\", line 3\nKeyError: 'input_ids'\n"
    found = _diagnose(_pod(log=log)).findings
    assert found[0].code == "training.code_error" and "KeyError: 'input_ids'" in found[0].title
    assert "training.crash_loop" not in [f.code for f in found]


def test_live_crash_loop_with_a_known_cause_in_the_previous_log() -> None:
    log = "[rank0]: torch.AcceleratorError: CUDA error: device-side assert triggered\n"
    found = [f.code for f in _diagnose(_pod(log=log)).findings]
    assert found[0] == "training.code_error" and "training.crash_loop" not in found


def test_live_crash_loop_without_a_log_still_gets_a_finding() -> None:
    diagnosis = _diagnose(_pod())
    assert [f.code for f in diagnosis.findings] == ["training.crash_loop"]
    assert "could not be quoted" in diagnosis.findings[0].detail


def test_live_oom_killed_loop_is_left_to_terminated() -> None:
    found = [f.code for f in _diagnose(_pod(exit_code=137)).findings]
    assert "training.crash_loop" not in found and "training.terminated" in found


def test_running_container_gets_no_crash_loop() -> None:
    assert list(crash_loop.analyze(Facts(target=Target(kind="pod", name="train-0"), cluster="t",
                                         pods=[_pod(waiting="ContainerCreating")]))) == []


def test_last_error_lines_prefer_errors() -> None:
    assert crash_loop.last_error_lines("a\nb\nValueError: x\nc\n") == ["ValueError: x"]
    assert crash_loop.last_error_lines("a\nb\nc\nd\n") == ["b", "c", "d"]
