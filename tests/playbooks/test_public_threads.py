"""Real texts copied from public GitHub threads (tests/fixtures/text/public/threads/), judged before gpubot ran on
them: the manifests are sound, and the score does not fall back (tests/score_public.py prints the figures; the
README keeps them). A text collected after the readers were written is reported in its own batch."""
from __future__ import annotations

import fnmatch

import pytest

from playbooks.codes import CODES
from tests import score_public

MANIFEST = score_public.manifest()
# The figures as measured when these floors were set (README, "Measured"): a change may raise the score and
# lower the others, never the reverse.
FLOOR = {"score": 0.85, "silent": 7, "harmful": 7, "false alarms": 3}


def test_every_text_has_a_judgement_and_every_judgement_a_text():
    on_disk = {p.relative_to(score_public.THREADS).as_posix() for p in score_public.THREADS.rglob("*")
               if p.is_file() and p.suffix in (".log", ".txt", ".jsonl")}
    assert on_disk == set(MANIFEST)


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_each_judgement_names_its_thread_and_real_codes(name):
    entry = MANIFEST[name]
    assert entry["kind"] in ("error", "benign")
    assert entry["source"].startswith("https://"), "the thread the text was copied from"
    assert entry["cause"].strip(), "what the thread established"
    text = (score_public.THREADS / name).read_text(errors="replace")
    assert text.startswith("# ") and score_public.body(text).strip(), "a header saying where it came from, then the text"
    if entry["kind"] == "error":
        assert entry["accept"] and set(entry["accept"]) <= set(CODES), entry["accept"]
        for pattern in entry.get("must_not", ()):
            assert any(fnmatch.fnmatchcase(code, pattern) for code in CODES), pattern
            assert not any(fnmatch.fnmatchcase(code, pattern) for code in entry["accept"]), (pattern, entry["accept"])


def test_the_public_score_does_not_fall_back():
    rows = score_public.results()
    assert len([r for r in rows if r.kind == "error"]) >= 150 and len([r for r in rows if r.kind == "benign"]) >= 40
    errors = [r for r in rows if r.kind == "error"]
    score = sum(r.score for r in rows) / len(rows)
    silent = [r.name for r in errors if r.silent]
    harmful = [(r.name, r.first) for r in errors if r.harmful]
    loud = [(r.name, r.first) for r in rows if r.false_alarm]
    assert score >= FLOOR["score"], score_public.summary(rows)
    assert len(silent) <= FLOOR["silent"], silent
    assert len(harmful) <= FLOOR["harmful"], harmful
    assert len(loud) <= FLOOR["false alarms"], loud
