"""The prefilter finds exactly the lines a full scan would act on, with Hyperscan and without it."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from playbooks import explain as explain_module
from playbooks.explain import explain_text
from playbooks.signatures import iter_lines
from playbooks.signatures import prefilter as prefilter_module
from playbooks.signatures.prefilter import Prefilter, anchors

FIXTURES = Path(__file__).parent.parent / "fixtures" / "text"


def _full_scan(text: str, words: tuple[str, ...]) -> list[tuple[int, str, list[str]]]:
    return [(n, line, sorted(w for w in words if w in line)) for n, line in enumerate(iter_lines(text), start=1)
            if any(w in line for w in words)]


def _found(pre: Prefilter, text: str) -> list[tuple[int, str, list[str]]]:
    return [(n, line, sorted(words)) for n, line, words in pre.lines(text)]


@pytest.fixture(params=["hyperscan", "python"])
def engine(request, monkeypatch):
    if request.param == "hyperscan":
        assert prefilter_module._compile(("x",)) is not None, "hyperscan is a dependency: pip install -e ."
        monkeypatch.setattr(prefilter_module, "ENGINE_FROM_CHARS", 0)
    else:
        monkeypatch.setattr(prefilter_module, "_compile", lambda words: None)
        monkeypatch.setattr(prefilter_module, "ENGINE_FROM_CHARS", 0)
    explain_module._prefilter.cache_clear()
    yield request.param
    explain_module._prefilter.cache_clear()


def test_lines_are_those_holding_a_word(engine) -> None:
    words = ("NCCL WARN", "Xid", "é-word", "end")
    text = "\n".join(["ok", "NCCL WARN x", "", "ünïcode Xid 79 here", "é-word first", "nothing", "the end"]) + "\n\ntail"
    pre = Prefilter(words)
    assert _found(pre, text) == _full_scan(text, words) == [
        (2, "NCCL WARN x", ["NCCL WARN"]), (4, "ünïcode Xid 79 here", ["Xid"]), (5, "é-word first", ["é-word"]),
        (7, "the end", ["end"])]
    both = "end of NCCL WARN and Xid, Xid again"
    assert _found(pre, both) == [(1, both, ["NCCL WARN", "Xid", "end"])]
    assert pre.line_count(text) == 9


def test_crlf_and_classic_mac_line_ends(engine) -> None:
    pre = Prefilter(("Xid",))
    assert [n for n, _, _ in pre.lines("a\r\nXid 1\r\nb\r\n")] == [2]
    assert _found(pre, "a\rXid 1\rb") == [(2, "Xid 1", ["Xid"])]


def test_last_line_without_newline_and_a_word_at_the_very_end(engine) -> None:
    pre = Prefilter(("Xid",))
    assert _found(pre, "a\nb Xid") == [(2, "b Xid", ["Xid"])]
    assert _found(pre, "Xid") == [(1, "Xid", ["Xid"])]
    assert _found(pre, "") == []


class _EveryLine:
    """No prefilter: every line goes to the scanner."""

    def lines(self, text):
        return ((n, line, None) for n, line in enumerate(iter_lines(text), start=1))

    def line_count(self, text):
        return sum(1 for _ in iter_lines(text))


def _without_prefilter(text: str, source: str = "pasted text"):
    real = explain_module._prefilter
    explain_module._prefilter = lambda: _EveryLine()
    try:
        return explain_text(text, source=source)
    finally:
        explain_module._prefilter = real


@pytest.mark.parametrize("fixture", sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*") if p.is_file()))
def test_explain_matches_a_scan_of_every_line(engine, fixture) -> None:
    text = (FIXTURES / fixture).read_text()
    assert explain_text(text, source=fixture).to_dict() == _without_prefilter(text, source=fixture).to_dict()


def test_explain_matches_on_a_large_shuffled_log(engine) -> None:
    lines = [line for p in sorted(FIXTURES.rglob("*")) if p.is_file() for line in p.read_text().splitlines()]
    rng = random.Random(3)
    text = "\n".join(rng.choice(lines) if rng.random() < 0.2 else f"step {i} loss 1.{i % 97}" for i in range(20_000))
    fast, full = explain_text(text), _without_prefilter(text)
    assert fast.findings and fast.to_dict() == full.to_dict()


def test_anchors_cover_every_word() -> None:
    words = tuple(sorted({"NCCL WARN", "NET/OFI", "Xid", "Insufficient nvidia.com/gpu", "OOMKilled", "abc", "abcdefgh"}))
    chosen = anchors(words)
    assert {w for _, ws in chosen for w in ws} == set(words)
    assert all(anchor in word for anchor, ws in chosen for word in ws)


def test_bad_words_are_refused() -> None:
    with pytest.raises(ValueError):
        Prefilter(())
    with pytest.raises(ValueError):
        Prefilter(("two\nlines",))


def test_keywords_past_the_line_cut_or_trailing_space_do_not_count(engine) -> None:
    from playbooks.signatures.catalogue import MAX_LINE_CHARS

    long_line = "x" * MAX_LINE_CHARS + " 0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    text = "\n".join([long_line, "Warning FailedScheduling 0/3 nodes are available: ", "NVRM: Xid (PCI:0000:10:1c): 79, GPU has fallen off the bus."])
    assert explain_text(text).to_dict() == _without_prefilter(text).to_dict()
    assert [f.code for f in explain_text(text).findings] == ["gpu.xid_error"]
