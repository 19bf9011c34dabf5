from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from playbooks.codes import CODES, precedence
from playbooks.explain import explain_lines, explain_text, fix_context, template_for
from playbooks.fixes import TEMPLATE_DIR, render_fix
from playbooks.model import Diagnosis
from playbooks.signatures import scan_line
from tests.playbooks.lines import LINES

FIXTURES = Path(__file__).parent.parent / "fixtures" / "text"
BENIGN = sorted(FIXTURES.glob("benign_*"))
CRDS = Path(__file__).parents[2] / "playbooks" / "schemas" / "crds"
GENERIC = sorted(p.name for p in (TEMPLATE_DIR / "generic").glob("*.j2"))


def explain_fixture(name: str) -> Diagnosis:
    return explain_text((FIXTURES / name).read_text(), source=name)


def codes(diagnosis: Diagnosis) -> list[str]:
    return [f.code for f in diagnosis.findings]


def test_ofi_4126_block_is_a_vanished_peer() -> None:
    diagnosis = explain_fixture("seed000_ofi_4126.log")
    first = diagnosis.findings[0]
    assert first.code == "nccl.peer_unresponsive"
    assert (first.severity, first.confidence) == ("error", "high")
    assert "4126" in first.title
    assert 1 <= len(first.evidence) <= 5
    assert all(re.search(r" line \d+$", e.source) for e in first.evidence)
    assert len({e.text for e in first.evidence}) == len(first.evidence)
    assert diagnosis.summary.startswith(first.title)
    assert "nccl.peer_unresponsive" in diagnosis.summary


def test_cuda_oom_detail_says_who_holds_the_memory() -> None:
    diagnosis = explain_fixture("seed000_cuda_oom.log")
    assert codes(diagnosis) == ["training.cuda_oom"]
    detail = diagnosis.findings[0].detail
    for figure in ("39.49 GiB", "8.38 GiB", "119.38 MiB", "~31.0 GiB"):
        assert figure in detail
    assert "other processes" in detail
    assert "CUDA_VISIBLE_DEVICES" in detail
    assert "ZeRO-3" in detail and "p4de / p5" in detail


def test_cuda_oom_of_a_model_too_big_for_its_own_process() -> None:
    line = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 77.90 GiB memory in use."
    detail = explain_text(line).findings[0].detail
    assert "This process holds most of the memory" in detail
    assert "other processes" not in detail


def test_describe_events_rank_unhealthy_gpu_before_slow_pull() -> None:
    diagnosis = explain_fixture("seed000_describe_events.txt")
    found = codes(diagnosis)
    assert found[0] == "gpu.unhealthy_device"
    assert "image.slow_pull" in found
    assert found.index("image.slow_pull") > 0
    insufficient = next(f for f in diagnosis.findings if f.code == "scheduling.insufficient_gpu")
    # A Karpenter Nominated event shows capacity was on its way, and a GPU was unhealthy.
    assert (insufficient.severity, insufficient.confidence) == ("warning", "low")
    assert "Nominated" in insufficient.detail and "unhealthy" in insufficient.detail


def test_stage3_flush_warning_is_memory_pressure() -> None:
    diagnosis = explain_fixture("seed000_stage3_flush.log")
    assert codes(diagnosis) == ["training.memory_pressure"]
    assert diagnosis.findings[0].severity == "warning"


def test_pytorchjob_describe_has_lifecycle_taint_not_untolerated_taint() -> None:
    diagnosis = explain_fixture("seed002_pytorchjob_describe.txt")
    found = codes(diagnosis)
    assert "scheduling.node_lifecycle_taint" in found
    assert "scheduling.untolerated_taint" not in found
    lifecycle = next(f for f in diagnosis.findings if f.code == "scheduling.node_lifecycle_taint")
    assert "karpenter.sh/unregistered" in lifecycle.title
    assert all("karpenter.sh/unregistered" in e.text for e in lifecycle.evidence)
    # The required self-affinity on kubernetes.io/hostname in the spec is the likely root cause.
    assert found[0] == "scheduling.pod_affinity_unsatisfiable"
    assert any("Topology Key" in e.text for e in diagnosis.findings[0].evidence)


def test_auto_mode_events_system_taint_is_weak() -> None:
    diagnosis = explain_fixture("seed003_auto_mode_events.txt")
    taint = next(f for f in diagnosis.findings if f.code == "scheduling.untolerated_taint")
    assert (taint.severity, taint.confidence) == ("warning", "low")
    assert "rarely the root cause" in taint.detail
    assert "Do not tolerate CriticalAddonsOnly" in taint.fix.summary


@pytest.mark.parametrize("path", BENIGN, ids=[p.name for p in BENIGN])
def test_benign_text_has_no_findings(path: Path) -> None:
    """Nothing above info; an error-level line that is routine (the kubelet's "Error getting node" before its
    first registration) is said as an info finding with the reason, never as silence (docs/findings.md)."""
    text = path.read_text()
    diagnosis = explain_text(text, source=path.name)
    assert all(_reasoned_info(f) for f in diagnosis.findings), diagnosis.findings
    if not diagnosis.findings:
        assert diagnosis.summary == f"No known problem signatures found in {len(text.splitlines())} lines."


def _reasoned_info(finding) -> bool:
    return finding.severity == "info" and "normal" in finding.title.lower() + finding.detail.lower()


def test_all_benign_fixtures_together_have_no_findings() -> None:
    text = "\n".join(p.read_text() for p in BENIGN)
    assert all(_reasoned_info(f) for f in explain_text(text).findings)


def test_empty_text() -> None:
    assert explain_text("").summary == "No known problem signatures found in 0 lines."


def test_disruption_explains_the_vanished_peer() -> None:
    text = "\n".join(
        [
            "  Normal   DisruptionTerminating  3m  karpenter  Disrupting Node: Underutilized",
            "W0101 12:08:30.000000 7 torch/distributed/elastic/agent/server/api.py:719] Received Signals.SIGTERM death signal, shutting down workers",
            (FIXTURES / "seed000_ofi_4126.log").read_text(),
        ]
    )
    diagnosis = explain_text(text)
    peer = next(f for f in diagnosis.findings if f.code == "nccl.peer_unresponsive")
    assert "disrupting a node (Underutilized)" in peer.detail
    assert "died in that disruption" in peer.detail
    disruption = next(f for f in diagnosis.findings if f.code == "karpenter.disruption")
    assert (disruption.severity, disruption.confidence) == ("error", "high")
    assert "do-not-disrupt" in disruption.fix.snippet
    terminated = next(f for f in diagnosis.findings if f.code == "training.terminated")
    assert "likely sender" in terminated.detail


def test_lone_watchdog_timeout_is_low_confidence_and_says_what_to_collect() -> None:
    line = "[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 milliseconds before timing out."
    (finding,) = explain_text(line).findings
    assert (finding.code, finding.confidence) == ("nccl.timeout", "low")
    assert "collect next" in finding.detail
    assert "600 s" in finding.detail


def test_resolver_error_inside_distributed_setup_is_upgraded() -> None:
    lone = explain_text("socket.gaierror: [Errno -2] Name or service not known").findings[0]
    assert (lone.code, lone.confidence) == ("training.rendezvous_failed", "low")
    assert "collect next" in lone.detail
    text = "  File \"/usr/local/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py\", line 1520, in init_process_group\nsocket.gaierror: [Errno -2] Name or service not known"
    upgraded = explain_text(text).findings[0]
    assert (upgraded.severity, upgraded.confidence) == ("error", "medium")


def test_label_prefix_hint_for_auto_mode() -> None:
    line = 'Failed to schedule pod, incompatible with nodepool "gpu", incompatible requirements, label "karpenter.k8s.aws/instance-gpu-name" does not have known values'
    finding = explain_text(line).findings[0]
    assert finding.code == "scheduling.node_selector_mismatch"
    assert "eks.amazonaws.com/instance-gpu-name" in finding.detail
    auto = explain_text(line.replace("karpenter.k8s.aws/", "eks.amazonaws.com/")).findings[0]
    assert "karpenter.k8s.aws/instance-gpu-name" in auto.detail


def test_ambiguous_no_instance_type_detail_names_both_causes() -> None:
    line = next(line for code, line, _ in LINES if code == "karpenter.no_instance_type")
    (finding,) = explain_text(line).findings
    assert finding.confidence == "medium"
    assert "resources" in finding.detail and "offering" in finding.detail
    assert "kubectl get nodepool gpu" in finding.fix.snippet


def test_findings_are_ordered_by_severity_confidence_then_precedence() -> None:
    text = "\n".join(line for _, line, _ in LINES)
    diagnosis = explain_text(text)
    keys = [(f.severity_rank, f.confidence_rank, precedence(f.code)) for f in diagnosis.findings]
    assert keys == sorted(keys)
    assert len(codes(diagnosis)) == len(set(codes(diagnosis)))
    json.dumps(diagnosis.to_dict())  # the --json contract serialises
    assert diagnosis.target.kind == "text"


def test_evidence_is_bounded_and_counted() -> None:
    line = "  Warning  FailedScheduling  1m  default-scheduler  0/3 nodes are available: 3 node(s) had untolerated taint {{gpu-workload: true}}. attempt {n}"
    diagnosis = explain_lines((line.format(n=n) for n in range(10_000)), source="log")
    (finding,) = diagnosis.findings
    assert len(finding.evidence) == 5
    assert [e.source for e in finding.evidence] == [f"log line {n}" for n in range(1, 6)]


def test_evidence_lines_are_distinct() -> None:
    line = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    (finding,) = explain_text("\n".join([line] * 50)).findings
    assert len(finding.evidence) == 1
    assert finding.evidence[0].source == "pasted text line 1"


# --- fix templates -------------------------------------------------------------------------------


def test_one_generic_template_per_code() -> None:
    assert sorted(name.split(".", 2)[0] + "." + name.split(".", 2)[1] for name in GENERIC) == sorted(CODES)
    for code in CODES:
        assert template_for(code).startswith(f"generic/{code}.")


def _line_fields() -> list[tuple[str, dict[str, str]]]:
    cases = []
    for code, line, _ in LINES:
        for signal in scan_line(line, source="x"):
            if signal.code == code:
                cases.append((code, dict(signal.fields)))
    return cases


FIELD_CASES = _line_fields()


@pytest.mark.parametrize(("code", "fields"), FIELD_CASES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(FIELD_CASES)])
def test_template_renders_from_the_fields_of_its_line(code: str, fields: dict[str, str]) -> None:
    fix = render_fix(template_for(code), **fix_context(code, fields))
    assert fix.summary and "{{" not in fix.summary and "{%" not in fix.summary
    check_snippet(template_for(code), fix.snippet)


@pytest.mark.parametrize("name", GENERIC)
def test_template_renders_without_fields(name: str) -> None:
    fix = render_fix(f"generic/{name}")
    assert fix.summary
    check_snippet(f"generic/{name}", fix.snippet)


def check_snippet(name: str, snippet: str) -> None:
    language = name.rsplit(".", 2)[-2]
    if language == "yaml":
        document = yaml.safe_load(snippet)
        assert isinstance(document, dict)
        first_comment = next(line for line in snippet.splitlines() if line.strip())
        assert first_comment.startswith("#"), "YAML snippets say what they are in a leading comment"
        assert re.search(r"(fragment|StorageClass|NodePool|EC2NodeClass)", first_comment)
        validate_yaml(name, document)
    elif language == "json":
        json.loads(snippet)
    elif language == "sh":
        assert snippet.strip()


def _crd_schema(filename: str) -> dict[str, Any]:
    crd = yaml.safe_load((CRDS / filename).read_text())
    version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    return _drop_required(version["schema"]["openAPIV3Schema"])


def _drop_required(schema: Any) -> Any:
    """Fragments are merged into existing objects: check names and types, not completeness.

    The API server prunes unknown fields of a structural schema; here they are errors instead.
    """
    if isinstance(schema, dict):
        out = {k: _drop_required(v) for k, v in schema.items() if k != "required"}
        if "properties" in out and "additionalProperties" not in out and not out.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_drop_required(v) for v in schema]
    return schema


def validate_yaml(name: str, document: dict[str, Any]) -> None:
    kind = document.get("kind")
    if kind == "NodePool":
        jsonschema.validate(document, _crd_schema("karpenter.sh_nodepools.yaml"))
    elif kind == "EC2NodeClass":
        jsonschema.validate(document, _crd_schema("karpenter.k8s.aws_ec2nodeclasses.yaml"))
    elif kind is None:
        pod = _as_pod(document)
        import kubernetes_validate

        kubernetes_validate.validate(pod, "1.33", strict=True)
    else:
        import kubernetes_validate

        kubernetes_validate.validate(document, "1.33", strict=True)


def _as_pod(fragment: dict[str, Any]) -> dict[str, Any]:
    """Wrap a pod template / pod spec / container fragment into a Pod that kubernetes-validate checks."""
    container: dict[str, Any] = {"name": "pytorch", "image": "public.ecr.aws/x/y:1"}
    metadata: dict[str, Any] = {"name": "check"}
    spec: dict[str, Any] = {}
    if "env" in fragment:
        container["env"] = fragment["env"]
    elif "spec" in fragment or "metadata" in fragment:
        metadata.update(fragment.get("metadata", {}))
        spec = dict(fragment.get("spec", {}))
        if "containers" in spec:
            container = {**container, **spec.pop("containers")[0]}
    else:
        spec = dict(fragment)
    spec["containers"] = [container]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def test_every_low_confidence_finding_says_what_to_collect() -> None:
    from playbooks.signatures.details import NEXT_STEPS

    assert set(NEXT_STEPS) == set(CODES)
    text = "\n".join(line for _, line, _ in LINES)
    for finding in explain_text(text).findings:
        if finding.confidence == "low":
            assert "collect next" in finding.detail, finding.code


def test_blocked_disruption_followed_by_an_eviction() -> None:
    text = "\n".join(
        [
            'Normal  DisruptionBlocked  5m  karpenter  Cannot disrupt Node: pod "default/llama-3-8b-node-0-0" has "karpenter.sh/do-not-disrupt" annotation',
            "Normal  Evicted  40s  karpenter  Evicted pod",
        ]
    )
    (finding,) = explain_text(text).findings
    assert finding.code == "karpenter.disruption"
    assert "bypasses do-not-disrupt" in finding.detail
    assert explain_text(text.splitlines()[0]).findings == []  # blocked alone is protection working
