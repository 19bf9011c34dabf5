"""NCCL blame: the peer whose container failed first (status.containerStatuses[].lastState.terminated
.finishedAt, RFC 3339 to the second as the kubelet reports it) is named; peers that all failed within a
couple of seconds are reported alike, with low confidence.

The target's log line is aws/aws-ofi-nccl's handshake failure (src/nccl_ofi_cm / cm_req_handle_error_entry
"Unresponsive receiver (reachable by EFA device but handshake failed)", libfabric EFA prov_err 4126), as
tests/playbooks/lines.py quotes it from a real run."""
from __future__ import annotations

from playbooks.analyzers import nccl
from playbooks.facts import Facts, PodFacts
from playbooks.model import Target
from tests.playbooks.lines import LINES

OFI_4126 = next(line for code, line, _ in LINES if code == "nccl.peer_unresponsive" and "4126" in line)
JOB = {"training.kubeflow.org/job-name": "llama"}


def _pod(name: str, *, finished: str | None = None, exit_code: int = 1, reason: str = "Error", log: str = "") -> PodFacts:
    statuses = []
    if finished:
        statuses = [{"name": "pytorch", "restartCount": 0, "state": {"terminated": {
            "exitCode": exit_code, "reason": reason, "finishedAt": finished}}}]
    pod = {"metadata": {"name": name, "namespace": "ml", "labels": JOB},
           "spec": {"nodeName": f"node-{name}", "containers": [{"name": "pytorch"}]},
           "status": {"phase": "Failed" if finished else "Running", "containerStatuses": statuses}}
    return PodFacts(pod=pod, logs={("pytorch", False): log} if log else {})


def _finding(*peers: PodFacts):
    target = _pod("llama-worker-0", finished="2026-01-01T12:08:40Z", log=OFI_4126)
    facts = Facts(target=Target(kind="pod", name="llama-worker-0", namespace="ml"), cluster="test",
                  pods=[target, *peers])
    found = list(nccl.analyze(facts))
    assert [f.code for f in found] == ["nccl.peer_unresponsive"]
    return found[0]


def test_the_peer_that_failed_first_is_named_whatever_the_pod_order() -> None:
    later = _pod("llama-worker-1", finished="2026-01-01T12:08:35Z")
    first = _pod("llama-worker-3", finished="2026-01-01T12:08:02Z", exit_code=137, reason="OOMKilled")
    finding = _finding(later, first)
    assert "after llama-worker-3 died first" in finding.title
    assert finding.confidence == "high"
    assert "died first" in finding.detail and "12:08:02" in finding.detail
    assert finding.detail.index("llama-worker-3") < finding.detail.index("llama-worker-1")
    assert "llama-worker-3" in finding.fix.snippet


def test_ranks_that_failed_alike_are_not_blamed_on_one() -> None:
    finding = _finding(_pod("llama-worker-1", finished="2026-01-01T12:08:02Z"),
                       _pod("llama-worker-2", finished="2026-01-01T12:08:03Z"),
                       _pod("llama-worker-3", finished="2026-01-01T12:08:02Z"))
    assert finding.confidence == "low"
    assert "3 ranks failed within 1 s" in finding.title and "died" not in finding.title
    assert "cannot tell which one failed first" in finding.detail


def test_three_seconds_apart_is_an_order() -> None:
    finding = _finding(_pod("llama-worker-1", finished="2026-01-01T12:08:05Z"),
                       _pod("llama-worker-2", finished="2026-01-01T12:08:02Z"))
    assert finding.confidence == "high" and "llama-worker-2 died first" in finding.title


def test_one_dead_peer_is_named_without_first() -> None:
    finding = _finding(_pod("llama-worker-1", finished="2026-01-01T12:08:05Z"), _pod("llama-worker-2"))
    assert finding.title.endswith("after llama-worker-1 died") and finding.confidence == "high"


def test_no_dead_peer_stays_medium() -> None:
    finding = _finding(_pod("llama-worker-1"))
    assert finding.confidence == "medium" and "kubectl logs --previous" in finding.detail
