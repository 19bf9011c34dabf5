"""Which host reported a peer failure or a watchdog timeout first, read from the log's own timestamps
(playbooks/signatures/log_time.py), and a torchrun root cause shown over the exit-code lines it ties with.

The OFI line is the seed's real aws-ofi-nccl output (tests/fixtures/text/seed000_ofi_4126.log); the
other hosts' copies differ only in host name and time, as merged logs of one job do."""
from __future__ import annotations

from pathlib import Path

from playbooks.explain import explain_text

FIXTURES = Path(__file__).parent.parent / "fixtures" / "text"
OFI = next(line for line in (FIXTURES / "seed000_ofi_4126.log").read_text().splitlines()
           if line.startswith("[2026-01-01 12:08:32] llama-3-8b-node-0-0"))


def _from(host: str, when: str) -> str:
    return OFI.replace("[2026-01-01 12:08:32] llama-3-8b-node-0-0", f"[{when}] {host}")


def _detail(text: str, code: str = "nccl.peer_unresponsive") -> str:
    return next(f.detail for f in explain_text(text).findings if f.code == code)


def test_the_host_that_reported_first_is_named_when_the_others_followed_later() -> None:
    text = "\n".join([_from("node-b", "2026-01-01 12:08:45"), _from("node-a", "2026-01-01 12:08:32"),
                      _from("node-c", "2026-01-01 12:08:47")])
    detail = _detail(text)
    assert "node-a reported it first (2026-01-01T12:08:32Z)" in detail


def test_reports_within_two_seconds_blame_no_one() -> None:
    text = "\n".join([_from("node-a", "2026-01-01 12:08:32"), _from("node-b", "2026-01-01 12:08:33")])
    detail = _detail(text)
    assert "3 hosts" not in detail and "2 hosts reported this" in detail and "cannot say which rank failed first" in detail
    assert "reported it first" not in detail


def test_one_host_or_no_timestamps_adds_nothing() -> None:
    assert "reported" not in _detail(OFI)
    untimed = OFI.split("] ", 1)[1]
    assert "reported" not in _detail("\n".join([untimed, untimed.replace("llama-3-8b-node-0-0", "node-b")]))


def test_torchrun_root_cause_title_names_rank_and_host() -> None:
    text = (FIXTURES / "torch_childfailed_sigkill.log").read_text()
    finding = next(f for f in explain_text(text).findings if f.code == "training.terminated")
    assert "rank" in finding.title and "first" in finding.title, finding.title
