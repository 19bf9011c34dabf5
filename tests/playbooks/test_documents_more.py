"""Whole-document readers for torchrun's ChildFailedError block (playbooks/documents/child_failed.py) and a kubelet
that keeps failing to register (playbooks/documents/kubelet_registration.py). Fixtures name their sources
(public issue reports) in their headers; variants below change one thing of a fixture to test one rule."""
from __future__ import annotations

from pathlib import Path

from playbooks import documents
from playbooks.documents import child_failed, kubelet_registration
from playbooks.explain import explain_text

FIXTURES = Path(__file__).parent.parent / "fixtures" / "text"


def text(name: str) -> str:
    return (FIXTURES / name).read_text()


def line_at(name_or_text: str, lineno: int) -> str:
    body = text(name_or_text) if name_or_text.endswith(".log") else name_or_text
    return body.splitlines()[lineno - 1].strip()


def test_sigkill_root_cause_names_rank_host_and_signal() -> None:
    (signal,) = child_failed.read(text("torch_childfailed_sigkill.log"), "log")
    assert signal.code == "training.terminated"
    assert (signal.severity, signal.confidence) == ("error", "medium")  # SIGKILL: OOM killer or eviction
    assert signal.title.startswith("rank 7 on f5735d9ffd4f was killed by SIGKILL (exitcode -9) first")
    assert {k: signal.fields[k] for k in ("rank", "host", "exit_code", "pid", "signal", "time")} == {
        "rank": "7", "host": "f5735d9ffd4f", "exit_code": "-9", "pid": "3309", "signal": "SIGKILL", "time": "2024-09-09T09:36:56Z"}
    assert line_at("torch_childfailed_sigkill.log", signal.lineno) == "exitcode  : -9 (pid: 3309)" == signal.line


def test_reader_is_registered_and_explain_keeps_one_terminated_finding() -> None:
    assert any(s.fields.get("rank") == "7" for s in documents.signals(text("torch_childfailed_sigkill.log"), source="x"))
    diagnosis = explain_text(text("torch_childfailed_sigkill.log"))
    assert [f.code for f in diagnosis.findings] == ["training.terminated"]


def test_exit_code_one_without_an_error_file_is_a_low_confidence_failure_of_that_rank() -> None:
    # huggingface/accelerate#1519: two blocks, every rank "exitcode : 1", "To enable traceback see": the
    # script's own error, not shown here. Never silent: a low-confidence failure per block, marked as the
    # root cause so that explain can put the error the text does show in that rank's name.
    found = child_failed.read(text("torch_childfailed_two_failures.log"), "log")
    assert [(s.code, s.confidence, s.fields["rank"], s.fields["kind"], s.fields["root_cause"]) for s in found] == [
        ("training.failed", "low", "0", "exit", "yes"), ("training.failed", "low", "4", "exit", "yes")]
    assert "holds no error of it" in found[0].title


def test_other_failures_are_counted_and_sigterm_read_from_outside() -> None:
    body = text("torch_childfailed_two_failures.log").replace("exitcode  : 1 (pid: 19414)", "exitcode  : -15 (pid: 19414)")
    signal, second = child_failed.read(body, "log")
    assert (second.code, second.fields["rank"]) == ("training.failed", "4")  # the second block: exit code 1
    assert signal.fields["other_failures"] == "1" and signal.fields["rank"] == "0" and signal.fields["local_rank"] == "0"
    assert "rank 0 on gpu187.cluster.local was killed by SIGTERM" in signal.title and "1 other rank(s) failed after it" in signal.title
    assert signal.confidence == "high"


def test_a_crash_signal_is_said_as_a_crash_with_its_meaning_from_the_signal_table() -> None:
    body = text("torch_childfailed_sigkill.log").replace("exitcode  : -9 (pid: 3309)", "exitcode  : -6 (pid: 3309)")
    (signal,) = child_failed.read(body, "log")
    assert (signal.code, signal.confidence, signal.fields["signal"]) == ("training.failed", "low", "SIGABRT")
    assert "crashed first with SIGABRT" in signal.title
    bus = text("torch_childfailed_sigkill.log").replace("exitcode  : -9 (pid: 3309)", "exitcode  : -7 (pid: 3309)")
    (signal,) = child_failed.read(bus, "log")
    assert (signal.code, signal.fields["signal"]) == ("training.shm_exhausted", "SIGBUS")


def test_the_root_cause_traceback_that_names_an_oom_gives_that_code() -> None:
    # error_file + traceback as @record writes them; the OOM text is torch's (QwenLM/Qwen3-Coder#174)
    oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 132.00 MiB. GPU 3 has a total capacity of 79.10 GiB "
           "of which 98.00 MiB is free. Process 387746 has 78.89 GiB memory in use.")
    body = text("torch_childfailed_sigkill.log").replace("exitcode  : -9 (pid: 3309)", "exitcode  : 1 (pid: 3309)").replace(
        "  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID 3309",
        "  error_file: /tmp/torchelastic_abc/none_x/attempt_0/7/error.json\n  traceback : Traceback (most recent call last):\n"
        '    File "/workspace/train.py", line 88, in <module>\n      loss.backward()\n    ' + oom)
    (signal,) = child_failed.read(body, "log")
    assert signal.code == "training.cuda_oom"
    assert signal.title.startswith("rank 7 on f5735d9ffd4f failed first (exitcode 1): ")
    assert signal.fields["error_file"].endswith("error.json")


def test_a_block_without_root_cause_entry_is_quiet() -> None:
    assert child_failed.read("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\nRoot Cause\n", "x") == []


def test_forbidden_registration_loop() -> None:
    (signal,) = kubelet_registration.read(text("kubelet_register_forbidden.log"), "kubelet")
    assert signal.code == "node.not_ready" and (signal.severity, signal.confidence) == ("error", "high")
    assert signal.fields["attempts"] == "3" and signal.fields["node"] == "ip-111-22-333-444.ec2.internal"
    assert signal.fields["error"].startswith('nodes "ip-111-22-333-444.ec2.internal" is forbidden')
    assert "(3 attempts)" in signal.title and "rejects the kubelet's identity" in signal.title
    assert "Unable to register node with API server" in line_at("kubelet_register_forbidden.log", signal.lineno)


def test_a_karpenter_node_is_a_registration_failure() -> None:
    body = text("kubelet_register_forbidden.log") + "Labels: karpenter.sh/nodepool=default\n"
    (signal,) = kubelet_registration.read(body, "kubelet")
    assert signal.code == "karpenter.node_registration_failed"


def test_success_after_the_attempts_is_quiet_and_two_attempts_are_not_a_loop() -> None:
    ok = ('Dec 10 12:38:05 ip-111-22-333-444.ec2.internal kubelet[2239]: I1210 12:38:05.010000    2239 kubelet_node_status.go:76] '
          '"Successfully registered node" node="ip-111-22-333-444.ec2.internal"\n')
    assert kubelet_registration.read(text("kubelet_register_forbidden.log") + ok, "k") == []
    two = "\n".join(text("kubelet_register_forbidden.log").splitlines()[:-2])
    assert kubelet_registration.read(two, "k") == []
    assert documents.signals(text("kubelet_register_forbidden.log") + ok, source="k") == []


def test_old_unstructured_kubelet_lines() -> None:
    (signal,) = kubelet_registration.read(text("kubelet_register_old_connection.log"), "k")
    assert signal.code == "node.not_ready" and signal.fields["node"] == "192.168.101.241"
    assert signal.fields["attempts"] == "3" and signal.fields["error"].startswith("Unable to refresh the Webhook configuration")


def test_only_node_not_found_between_attempts_is_weaker() -> None:
    # kubelet.go "Error getting node" as in aws/karpenter-provider-aws#2423
    lines = [l for l in text("kubelet_register_forbidden.log").splitlines() if "Unable to register" not in l]
    lines.append('Dec 10 12:37:58 ip-111-22-333-444.ec2.internal kubelet[2239]: E1210 12:37:58.727018    2239 kubelet.go:2451] '
                 '"Error getting node" err="node \\"ip-111-22-333-444.ec2.internal\\" not found"')
    (signal,) = kubelet_registration.read("\n".join(lines), "k")
    assert signal.confidence == "medium" and signal.fields["error"] == 'node "ip-111-22-333-444.ec2.internal" not found'


def test_benign_kubelet_startup_stays_quiet() -> None:
    assert documents.signals(text("benign_kubelet_startup.log"), source="k") == []
