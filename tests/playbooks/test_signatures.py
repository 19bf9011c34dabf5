from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest

from playbooks.codes import CODE_SET, CODES
from playbooks.model import CONFIDENCES, SEVERITIES
from playbooks.signatures import ALL_RULES, MAX_LINE_CHARS, Signal, scan_line, scan_lines, scan_text
from playbooks.signatures import catalogue
from tests.playbooks.lines import LINES

FIXTURES = Path(__file__).parent.parent / "fixtures" / "text"
BENIGN = sorted(FIXTURES.glob("benign_*"))
JSON_NAME_FIELDS = {"pod", "nodeclaim", "nodepool", "node", "writer"}


def codes_of(line: str) -> list[str]:
    return [s.code for s in scan_line(line, source="test")]


@pytest.mark.parametrize(("code", "line", "fields"), LINES, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(LINES)])
def test_line_yields_code_and_fields(code: str, line: str, fields: dict[str, str]) -> None:
    signals = [s for s in scan_line(line, source="event pod/default/x", lineno=7) if s.code == code]
    assert signals, f"{code} not found in {line!r}: {[s.code for s in scan_line(line, source='x')]}"
    assert any(all(s.fields.get(k) == v for k, v in fields.items()) for s in signals), [dict(s.fields) for s in signals]
    for signal in signals:
        assert signal.source == "event pod/default/x"
        assert signal.lineno == 7
        assert signal.line == line.strip()[:600] or signal.line.endswith("…")


def test_every_code_is_reachable_from_text() -> None:
    assert {code for code, _, _ in LINES} == set(CODES)


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.name for r in ALL_RULES])
def test_rule_example_matches_and_fields_are_documented(rule) -> None:
    signals = scan_line(rule.example, source="example")
    assert signals, f"{rule.name} example yields nothing"
    assert all(s.code in CODE_SET for s in signals)
    documented = set(re.findall(r"[a-z_]+", rule.fields_doc)) | JSON_NAME_FIELDS
    own = [s for s in signals if s.code == rule.code] or signals
    assert any(set(s.fields) <= documented | {"avail", "total", "nodes", "reason"} for s in own), (
        rule.name,
        [dict(s.fields) for s in own],
    )


def test_every_rule_is_documented() -> None:
    # In the catalogue's table, or in the docstring of the family module that defines the rule.
    docs = [catalogue.__doc__ or ""] + [sys.modules[m].__doc__ or "" for m in list(sys.modules)
                                         if m.startswith("playbooks.signatures.")]
    missing = [rule.name for rule in ALL_RULES if not any(rule.name in doc for doc in docs)]
    assert not missing


def test_signals_use_known_vocabulary() -> None:
    for _, line, _ in LINES:
        for signal in scan_line(line, source="x"):
            assert signal.code in CODE_SET
            assert signal.severity in SEVERITIES
            assert signal.confidence in CONFIDENCES
            assert signal.title
            assert not re.search(r"\{[a-z_]+\}|\[|\?", signal.title), signal.title  # every placeholder filled


def test_one_signal_per_scheduler_reason() -> None:
    line = (
        "0/9 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint {gpu-workload: true}, "
        "1 node(s) had untolerated taint {karpenter.sh/disrupted: }, 3 node(s) didn't match Pod's node affinity/selector, "
        "2 node(s) didn't match pod topology spread constraints. preemption: 0/9 nodes are available: 9 Preemption is not helpful for scheduling."
    )
    assert sorted(codes_of(line)) == sorted(
        [
            "scheduling.insufficient_gpu",
            "scheduling.untolerated_taint",
            "scheduling.node_lifecycle_taint",
            "scheduling.node_selector_mismatch",
            "scheduling.topology_spread",
        ]
    )


@pytest.mark.parametrize(
    "key",
    ["karpenter.sh/unregistered", "karpenter.sh/disrupted", "node.kubernetes.io/not-ready", "karpenter.sh/not-ready", "node.kubernetes.io/unreachable"],
)
def test_lifecycle_taints_are_not_untolerated_taints(key: str) -> None:
    for line in (
        f"0/3 nodes are available: 3 node(s) had untolerated taint {{{key}: }}.",
        f"0/3 nodes are available: 3 node(s) had taint {{{key}: }}, that the pod didn't tolerate.",
    ):
        signals = scan_line(line, source="x")
        assert [s.code for s in signals] == ["scheduling.node_lifecycle_taint"]
        assert signals[0].severity in ("warning", "info")
        assert signals[0].fields["key"] == key


def test_critical_addons_only_is_a_weak_untolerated_taint() -> None:
    line = "0/2 nodes are available: 1 node(s) had untolerated taint {CriticalAddonsOnly: }, 1 node(s) had untolerated taint {karpenter.sh/disrupted: }."
    by_code = {s.code: s for s in scan_line(line, source="x")}
    assert by_code["scheduling.untolerated_taint"].severity == "warning"
    assert by_code["scheduling.untolerated_taint"].confidence == "low"
    assert by_code["scheduling.node_lifecycle_taint"].fields["key"] == "karpenter.sh/disrupted"


def test_untolerated_taints_since_kubernetes_1_34_have_no_key() -> None:
    (signal,) = [s for s in scan_line("0/5 nodes are available: 1 node(s) had untolerated taint(s), 4 node(s) didn't match Pod's node affinity/selector.", source="x") if s.code == "scheduling.untolerated_taint"]
    assert "key" not in signal.fields
    assert signal.confidence == "low"


@pytest.mark.parametrize(
    "line",
    [
        '2022-11-01T10:00:00.000Z\tERROR\tcontroller.provisioning\tCould not schedule pod, incompatible with provisioner "gpu", all available instance types exceed limits for provisioner: "gpu"',
        'Failed to schedule pod, incompatible with nodepool "gpu", daemonset overhead={"cpu":"200m"}, all available instance types exceed limits for nodepool "gpu"',
        "Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=gpu)",
        '{"level":"ERROR","message":"could not schedule pod","error":"all available instance types exceed limits for nodepool","NodePool":{"name":"gpu"}}',
    ],
)
def test_nodepool_capture_is_the_same_across_karpenter_versions(line: str) -> None:
    (signal,) = scan_line(line, source="x")
    assert signal.code == "karpenter.nodepool_limit_reached"
    assert signal.fields["nodepool"] == "gpu"


def test_joined_errors_of_several_nodepools_are_separate_signals() -> None:
    line = (
        'Warning  FailedScheduling  2m  karpenter  Failed to schedule pod, incompatible with nodepool "system", daemonset overhead={"cpu":"821m"}, '
        'incompatible requirements, label "nvidia.com/device-plugin.config" does not have known values; incompatible with nodepool "runner-arm", '
        'daemonset overhead={}, did not tolerate workload-type=ci-runner:NoSchedule; all available instance types exceed limits for nodepool "graviton"; '
        'incompatible with nodepool "default", daemonset overhead={}, incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu] not in karpenter.sh/nodepool In [default]'
    )
    got = {(s.code, s.fields.get("nodepool"), s.severity) for s in scan_line(line, source="x")}
    assert got == {
        ("scheduling.node_selector_mismatch", "system", "error"),
        ("scheduling.untolerated_taint", "runner-arm", "error"),
        ("karpenter.nodepool_limit_reached", "graviton", "error"),
        ("scheduling.node_selector_mismatch", "default", "info"),  # the pod just targets another NodePool
    }


def test_ambiguous_no_instance_type_is_medium_confidence() -> None:
    (signal,) = scan_line('"error":"no instance type which had enough resources and the required offering met the scheduling requirements', source="x")
    assert (signal.code, signal.confidence) == ("karpenter.no_instance_type", "medium")


def test_karpenter_json_log_is_unwrapped() -> None:
    line = '{"level":"ERROR","time":"2026-01-01T12:00:00Z","logger":"controller","message":"could not schedule pod","Pod":{"name":"p","namespace":"ns"},"error":"incompatible with nodepool \\"gpu\\", did not tolerate taint (taint=nvidia.com/gpu:NoSchedule)"}'
    (signal,) = scan_line(line, source="log karpenter")
    assert signal.code == "scheduling.untolerated_taint"
    assert dict(signal.fields) == {"pod": "ns/p", "nodepool": "gpu", "taint": "nvidia.com/gpu:NoSchedule", "key": "nvidia.com/gpu",
                                   "effect": "NoSchedule", "writer": "controller"}
    assert signal.line == line  # evidence is the verbatim line, not the unwrapped message


def test_older_karpenter_json_uses_msg_and_err() -> None:
    line = '{"level":"ERROR","ts":"2023-01-01T00:00:00Z","msg":"Could not schedule pod","err":"incompatible with provisioner \\"default\\", no instance type satisfied resources {\\"nvidia.com/gpu\\":\\"16\\"} and requirements karpenter.k8s.aws/instance-family In [p4d]"}'
    (signal,) = scan_line(line, source="x")
    assert signal.code == "karpenter.no_instance_type"
    assert signal.fields["gpus"] == "16"
    assert signal.fields["nodepool"] == "default"


def test_quota_error_reported_as_insufficient_capacity_is_a_quota_problem() -> None:
    line = "creating instance, insufficient capacity, with fleet error(s), VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU limit of 32 allows"
    assert codes_of(line) == ["karpenter.quota_exceeded"]


@pytest.mark.parametrize(
    ("exit_line", "expected"),
    [
        ("Pod: default.pytorch-dist-job-worker-0 exited with code 0", []),
        # The program's own exit: an error whose cause is in its output, the low-confidence floor, never a kill.
        ("      Exit Code:    1", ["training.failed"]),
        ("failed (exitcode: 1) local_rank: 0 (pid: 192) of binary: /usr/local/bin/python", ["training.failed"]),
        ("failed (exitcode: -6) local_rank: 0 (pid: 192) of binary: /usr/local/bin/python", []),  # SIGABRT: the crash's lines say why
        ("      Exit Code:    137", ["training.terminated"]),
        ("      Exit Code:    143", ["training.terminated"]),
    ],
)
def test_only_external_kills_count_as_terminated(exit_line: str, expected: list[str]) -> None:
    assert codes_of(exit_line) == expected


def test_torchrun_closing_its_own_workers_is_not_a_kill() -> None:
    assert codes_of("W0616 00:37:22.831000 4015698 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 4015788 closing signal SIGTERM") == []


@pytest.mark.parametrize(
    ("pulled", "slow"),
    [("in 20.104s (20.104s including waiting)", False), ("in 58.965s (58.965s including waiting)", False), ("in 1m59s", False), ("in 2m1s", True), ("in 45s (5m30s including waiting)", True), ("in 3m51.333s (3m51.333s including waiting)", True)],
)
def test_image_pull_is_slow_only_over_thresholds(pulled: str, slow: bool) -> None:
    line = f'Normal  Pulled  1m  kubelet  Successfully pulled image "nvidia/cuda:13.0.2-runtime-ubuntu22.04" {pulled}. Image size: 1766399024 bytes.'
    assert codes_of(line) == (["image.slow_pull"] if slow else [])


@pytest.mark.parametrize(
    "line",
    [
        'Warning  FailedMount  3m2s  kubelet  MountVolume.SetUp failed for volume "kube-api-access-pj2nv" : object "default"/"kube-root-ca.crt" not registered',
        "Master Address: llama-3-8b-node-0-0.llama-3-8b",
        "[rank3]:   File \"/usr/local/lib/python3.12/site-packages/torch/distributed/c10d_logger.py\", line 81, in wrapper",
        "ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='pypi.org', port=443): Max retries exceeded (Caused by NewConnectionError: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution)",
    ],
)
def test_lines_that_are_not_problems(line: str) -> None:
    assert codes_of(line) == []


@pytest.mark.parametrize("path", BENIGN, ids=[p.name for p in BENIGN])
def test_benign_output_has_nothing_above_info(path: Path) -> None:
    above_info = [s for s in scan_text(path.read_text(), source=path.name) if s.severity != "info"]
    assert above_info == []


def test_evidence_line_is_trimmed_with_an_ellipsis() -> None:
    line = "0/5 nodes are available: 5 Insufficient nvidia.com/gpu. " + "x" * 2000
    (signal,) = scan_line(line, source="x")
    assert len(signal.line) == 600
    assert signal.line.endswith("…")


def test_long_lines_are_cut_before_matching() -> None:
    line = "y" * (MAX_LINE_CHARS + 10) + " CUDA out of memory. Tried to allocate 2.00 GiB"
    assert scan_line(line, source="x") == []


def test_scan_lines_numbers_from_one_and_scan_text_handles_crlf() -> None:
    text = "hello\r\n0/1 nodes are available: 1 Insufficient nvidia.com/gpu.\r\nbye"
    (signal,) = scan_text(text, source="paste")
    assert signal.lineno == 2
    assert [s.lineno for s in scan_lines(["", "x", "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."], source="p")] == [3]
    assert [s.lineno for s in scan_text("x\r0/1 nodes are available: 1 Insufficient nvidia.com/gpu.", source="p")] == [2]


def test_signal_is_frozen_and_hashable() -> None:
    (signal,) = scan_line("0/1 nodes are available: 1 Insufficient nvidia.com/gpu.", source="x")
    assert isinstance(signal, Signal)
    with pytest.raises(AttributeError):
        signal.code = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        signal.fields["resource"] = "x"  # type: ignore[index]
    assert hash(signal) == hash(signal)


PATHOLOGICAL = [
    "0/5 nodes are available: " + "1 " * 20000 + "x",
    "0/5 nodes are available: 1 " + "." * 30000,
    "0/5 nodes are available: 1 node(s) had taint {" + "{" * 30000,
    "incompatible with nodepool " + '"' * 30000,
    "Failed to schedule pod, " + "; " * 20000 + "no instance type has enough resources, requirements=" + "a" * 30000,
    "did not tolerate taint (taint=" + "a" * 60000,
    "Successfully pulled image \"" + "a" * 60000,
    "NET/OFI Error: 4126 (" + "(" * 30000,
    "CUDA out of memory. Tried to allocate " + "1" * 60000,
    "NVRM: Xid (PCI:" + "0" * 60000,
    "Exit Code" + " " * 60000 + "143",
    "insufficient capacity NodeClaim " + "a-" * 30000,
    "no instance type has enough resources " + "requirements=" * 5000,
    "0/5 nodes are available: 1 node(s) had untolerated taint {" + "a" * 30000 + "}, " * 1000,
    "0/5 nodes are available: 1 x, " * 2500,
    "DisruptionBlocked  a  b  " + "x" * 60000,
    "The client socket has failed to connect to [" + "a" * 60000,
    'does not have known values label "' * 2000,
    "NVRM: Xid (PCI:0000:10:1c): 79, pid=" + "'" * 60000,
    '{"message": "' + "insufficient capacity " * 2500 + '"}',
    " ".join(catalogue.KEYWORDS) * 20,
]


@pytest.mark.parametrize("line", PATHOLOGICAL, ids=range(len(PATHOLOGICAL)))
def test_no_catastrophic_backtracking(line: str) -> None:
    scan_line("warm-up", source="x")  # compiling the catalogue's patterns is not what is timed
    started = time.perf_counter()
    scan_line(line, source="x")
    # The slowest of these takes about 0.1 s (a 64 KiB line, linear); backtracking on one would take
    # minutes, so a bound this loose separates the two without tripping on a busy machine.
    assert time.perf_counter() - started < 2


def test_every_code_the_engine_emits_is_in_the_public_contract():
    """Every code in playbooks.codes is documented in docs/findings.md, the contract."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "findings.md").read_text()
    documented = set(re.findall(r"^\| `([a-z]+\.[a-z_]+)` \|", doc, flags=re.M))
    assert CODE_SET <= documented, sorted(CODE_SET - documented)
