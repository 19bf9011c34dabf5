"""No silence on a failure, as a property (docs/findings.md, "No silence on a failure").

Over every text fixture judged in tests/fixtures/text/failures.toml and over generated variants of each
(tests/playbooks/failure_variants.py: tee and log prefixes, a healthy rank interleaved, terminal and form
wrapping, values reworded within upstream's formats): an error-bearing text yields a finding above info
that quotes one of its lines, and its first finding is none of the codes the manifest rules out; a benign
text yields nothing above info. The fixture's `# ` header (how it was made) is not part of the text read.
"""
from __future__ import annotations

import fnmatch
import random
import re
import tomllib

import pytest

from playbooks.explain import explain_text
from playbooks.model import Finding
from tests.playbooks.failure_variants import FIXTURES, Variant, body, reword, variants

MANIFEST = tomllib.loads((FIXTURES / "failures.toml").read_text())
_SPACE = re.compile(r"\s+")
# A quote shorter than this must be a whole line: "Error" alone quotes nothing.
MIN_QUOTE = 16


def _cases() -> list[tuple[str, Variant]]:
    """Each fixture's body and every variant of it (about 1,600 texts, seconds)."""
    cases = []
    for name in sorted(MANIFEST):
        text = (FIXTURES / name).read_text(errors="replace")
        base = body(text)
        cases.append((name, Variant("body", base, frozenset(line.strip() for line in base.splitlines() if line.strip()))))
        cases += [(name, v) for v in variants(name, text)]
    return cases


CASES = _cases()


def _norm(text: str) -> str:
    return _SPACE.sub("", text.rstrip("…"))


def quotes(evidence: str, quotable: frozenset[str]) -> bool:
    """Evidence quotes the text: each of its lines is a line of the text (or of the failure it carries), whole
    or a part of at least MIN_QUOTE characters, allowing the reader to trim to 600 characters, to strip the
    generated prefixes and to rejoin wrapped lines (whitespace is not compared)."""
    parts = [_norm(part) for part in evidence.splitlines()]
    if not any(parts):
        return False
    lines = [_norm(line) for line in quotable]
    return all(not e or any(e == q or (len(e) >= MIN_QUOTE and e in q) for q in lines) for e in parts)


def _above_info(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity != "info"]


@pytest.mark.parametrize("name,variant", CASES, ids=[f"{n}::{v.name}" for n, v in CASES])
def test_never_silent(name: str, variant: Variant) -> None:
    entry = MANIFEST[name]
    findings = explain_text(variant.text, source=name).findings
    raised = _above_info(findings)
    if entry["kind"] == "benign":
        assert raised == [], f"benign text gave {[f.code for f in raised]}"
        return
    assert raised, "silent: an error-bearing text gave no finding above info"
    quoting = [f for f in raised if any(quotes(ev.text, variant.quotable) for ev in f.evidence)]
    assert quoting, f"no finding above info quotes the text: {[(f.code, [ev.text for ev in f.evidence]) for f in raised]}"
    first = findings[0].code
    blamed = [pattern for pattern in entry["must_not"] if fnmatch.fnmatchcase(first, pattern)]
    assert not blamed, f"first finding {first} is ruled out by {blamed} (accepted: {entry['accept']})"


def test_the_manifest_judges_every_fixture() -> None:
    # public/threads/ has manifests of its own (tests/score_public.py, test_public_threads.py).
    on_disk = {p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*")
               if p.is_file() and p.suffix in (".log", ".txt", ".jsonl") and "threads" not in p.relative_to(FIXTURES).parts}
    assert on_disk == set(MANIFEST)
    for name, entry in MANIFEST.items():
        assert entry["kind"] in ("error", "benign"), name
        if entry["kind"] == "error":
            assert entry["accept"], name
            assert not any(fnmatch.fnmatchcase(code, p) for code in entry["accept"] for p in entry["must_not"]), name


def test_quotes_needs_a_real_quote() -> None:
    lines = frozenset({"RuntimeError: CUDA error: an illegal memory access was encountered"})
    assert quotes("RuntimeError: CUDA error: an illegal memory access was encountered", lines)
    assert quotes("CUDA error: an illegal memory access was encountered", lines)
    assert quotes("RuntimeError: CUDA error: an illegal mem…", lines)
    assert not quotes("Error", lines)
    assert not quotes("CUDA error: invalid device ordinal", lines)


def test_every_fixture_gets_every_kind_of_variant() -> None:
    kinds = {re.sub(r"_\d+$", "", v.name) for _, v in CASES}
    per_fixture: dict[str, set[str]] = {}
    for name, v in CASES:
        per_fixture.setdefault(name, set()).add(re.sub(r"_\d+$", "", v.name))
    assert {"rank_prefix", "glog", "interleaved", "terminal_wrap", "form_wrap", "reworded", "body"} <= kinds
    # A command's report (describe, nvidia-smi -q) is interleaved only with a rank-tagged stream.
    assert all(seen == kinds or seen == kinds - {"interleaved"} for seen in per_fixture.values())
    assert sum(1 for seen in per_fixture.values() if seen == kinds) > len(per_fixture) // 2


def test_variants_are_deterministic_and_reword_only_values() -> None:
    name = "gpu/torchrun_invalid_ordinal.log"
    text = (FIXTURES / name).read_text()
    first, again = list(variants(name, text)), list(variants(name, text))
    assert first == again
    line = "E1125 23:58:24.039000 482 api.py:986] failed (exitcode: 1) local_rank: 1 (pid: 620) of binary: /usr/bin/python3"
    reworded = reword(line, random.Random(1))
    assert reworded != line
    assert re.sub(r"\d+", "N", reworded) == re.sub(r"\d+", "N", line)
