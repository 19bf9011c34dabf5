"""Every pattern that reads untrusted text runs on RE2, and hostile 64 KB lines go through them all.

Times are not asserted (tests/benchmarks/bench_linear.py prints them): what is asserted is the engine,
which is what makes the time linear, and that the rewrites of the patterns RE2 could not take as they
were (lookaround, counted repetitions past 1000) match what the old ``re`` patterns matched.
"""
from __future__ import annotations

import ast
import inspect
import random
import re
import sys

import pytest

from playbooks import linear
from playbooks.explain import explain_text
from playbooks.signatures import catalogue, log_time, scheduling
from playbooks import scope
from tests.playbooks import pathological

FOUND = pathological.patterns()


def test_the_walk_finds_the_patterns():
    assert len(FOUND) > 150
    assert {r.name for f in FOUND for r in f.rules} >= {"job.suspended", "deepspeed.cache_flushes", "karpenter.no_type"}


@pytest.mark.parametrize("found", FOUND, ids=lambda f: f.where)
def test_every_pattern_is_re2(found):
    assert isinstance(found.pattern, linear.Pattern), f"{found.where} is {type(found.pattern)}: compile it with playbooks.linear"


def test_no_module_calls_re_on_untrusted_text():
    """Patterns compiled inside functions escape the walk above: read the source instead."""
    offenders = []
    for module in pathological.modules():
        tree = ast.parse(inspect.getsource(module))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re" \
                    and node.attr in ("compile", "search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"):
                offenders.append(f"{module.__name__}:{node.lineno} re.{node.attr}")
    assert offenders == []


def test_patterns_compiled_anywhere_are_re2():
    compiled = linear.compiled()
    assert len(compiled) >= len(FOUND)
    assert all(isinstance(p, linear.Pattern) and p.programsize > 0 for p in compiled)


@pytest.mark.parametrize("found", FOUND, ids=lambda f: f.where)
def test_pathological_lines_through_each_pattern(found):
    for label, line in pathological.lines_for(found):
        assert len(line) == pathological.LINE, label
        hit = found.pattern.search(line)
        if hit is not None:
            assert 0 <= hit.start() <= hit.end() <= len(line), label
            assert set(hit.groupdict()) == set(found.pattern.groupindex), label


@pytest.mark.parametrize("rule", catalogue.ALL_RULES, ids=lambda r: r.name)
def test_pathological_lines_through_the_catalogue(rule):
    for label, line in pathological.catalogue_lines(rule):
        signals = catalogue.scan_line(line, source="fuzz")
        for signal in signals:
            assert len(signal.line) <= 600, label
            assert all(isinstance(v, str) for v in signal.fields.values()), label


def test_explain_reads_a_paste_of_pathological_lines():
    lines = [line for rule in catalogue.ALL_RULES[::7] for _, line in list(pathological.catalogue_lines(rule))[:2]]
    diagnosis = explain_text("\n".join(lines), source="fuzz")
    assert diagnosis.findings is not None
    assert all(len(e.text) <= 600 for f in diagnosis.findings for e in f.evidence)


# The rewrites, against the patterns as they were under re, on random text made of the characters
# each one cares about.


def _texts(alphabet: list[str], count: int, seed: int, *, longest: int = 14) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest))) for _ in range(count)]


_OLD_HEADER = re.compile(r"(?P<avail>\d+)/(?P<total>\d+) nodes are available: ")
_OLD_REASON = re.compile(
    r"(?P<nodes>\d+) (?P<reason>node\(s\) had taint \{[^{}]*\}, that the pod didn't tolerate"
    r"|(?:[^,.{]|\{[^{}]*\}|\.(?! |$))+)"
)


def _old_reasons(text: str) -> list[dict[str, str]]:
    found = []
    for header in _OLD_HEADER.finditer(text):
        pos = header.end()
        while (item := _OLD_REASON.match(text, pos)) is not None:
            found.append({**header.groupdict(), "nodes": item.group("nodes"), "reason": item.group("reason").strip()})
            pos = item.end()
            if not text.startswith(", ", pos):
                break
            pos += 2
    return found


def test_scheduler_reasons_read_as_before():
    pieces = ["1 ", "2 ", "a", "b ", " ", ".", ".", ",", ", ", "{", "}", "{k: v}", "node(s) had taint {k: v}, that the pod didn't tolerate", "x. "]
    head = "0/5 nodes are available: "
    texts = [head + t for t in _texts(pieces, 6000, seed=17)]
    texts += [head + "1 Insufficient nvidia.com/gpu, 4 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.",
              head + "1 a..., 2 b.. c, 3 d.{e, 4 f.{g}.h, 5 ..,"]
    for text in texts:
        assert list(scheduling.reasons(text)) == _old_reasons(text), text


_OLD_REF = re.compile(r"(?<![\w.:/-])([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)/([a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?)(?![\w/-])")


def test_namespace_references_are_found_as_before():
    pieces = ["ns", "a", "0", "-", ".", "/", ":", " ", ", ", "_", "x/y", "nvidia.com/gpu", "aws:///", "a.b"]
    for text in _texts(pieces, 6000, seed=23):
        def mark(m) -> str:
            return f"<{m.group(1)}|{m.group(2)}>"
        assert scope._replace_refs(text, mark) == _OLD_REF.sub(mark, text), text


_OLD_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?(?=\s|$)")


def test_iso_stamps_end_where_they_did():
    tails = ["", "Z", "+05:30", "-0800", ".123", ",5", ".", " ", "\t", "]", "] x", "a", ":", "Z ", "+05", "\u00a0"]
    for text in ["2026-01-02T03:04:05" + "".join(t) for t in _texts(tails, 3000, seed=29, longest=3)]:
        old = _OLD_ISO.match(text)
        new = log_time._ISO.match(text)
        assert (new is None) == (old is None), text
        if old is not None:
            assert new.groups() == old.groups() and log_time._stamp_end(new) == old.end(), text


@pytest.mark.parametrize(("old", "new"), [
    # (?!,) before \s or before (?:\s+...)?$ could never fail: dropped (gpu_health.py, describe_node.py)
    (r"[+-]\d{4}\s+(?P<reason>[A-Z][A-Za-z0-9]{2,80})(?!,)\s", r"[+-]\d{4}\s+(?P<reason>[A-Z][A-Za-z0-9]{2,80})\s"),
    (r"(?:[+-]\d{4}|<unset>|\d{4}Z?)\s+(?P<reason>[A-Z][A-Za-z0-9]{2,80})(?!,)(?:\s+(?P<message>.*))?$",
     r"(?:[+-]\d{4}|<unset>|\d{4}Z?)\s+(?P<reason>[A-Z][A-Za-z0-9]{2,80})(?:\s+(?P<message>.*))?$"),
])
def test_dropped_lookaheads_changed_nothing(old, new):
    pieces = ["+0000", "2026", " ", "Ready", "Ab", ",", "x", "\t", "<unset>", "KubeletReady ok"]
    old_re, new_re = re.compile(old), linear.compile(new)
    for text in _texts(pieces, 4000, seed=31):
        a, b = old_re.search(text), new_re.search(text)
        assert (a is None) == (b is None), text
        if a is not None:
            assert a.span() == b.span() and a.groupdict() == b.groupdict(), text


@pytest.mark.parametrize(("old", "new"), [
    (r"resources[= ](?P<resources>\{[^{}]{0,2000}\})", r"resources[= ](?P<resources>\{[^{}]{0,1000}[^{}]{0,1000}\})"),
    (r"requirements[= ](?P<requirements>[^;{}]{1,1500})", r"requirements[= ](?P<requirements>[^;{}]{1,1000}[^;{}]{0,500})"),
])
def test_split_repetitions_match_the_same_lengths(old, new):
    old_re, new_re = re.compile(old), linear.compile(new)
    for size in (0, 1, 999, 1000, 1001, 1499, 1500, 1501, 1999, 2000, 2001, 2500):
        for text in (f"resources={{{'a' * size}}}", f"requirements {'a' * size};", f"requirements={'a' * size}"):
            a, b = old_re.search(text), new_re.search(text)
            assert (a is None) == (b is None) and (a is None or a.groupdict() == b.groupdict()), (size, text[:20])


# The module's own promises.


def test_whitespace_is_what_python_calls_whitespace():
    pattern = linear.compile(r"\s")
    spaces = [chr(c) for c in range(0x3100) if not 0xD800 <= c <= 0xDFFF and pattern.fullmatch(chr(c))]
    assert spaces == [chr(c) for c in range(0x3100) if chr(c).isspace()]
    assert linear.compile(r"[^\s]+").findall("a\u00a0b c") == re.findall(r"[^\s]+", "a\u00a0b c")
    assert linear.compile(r"\S+").findall("a\u2003b") == ["a", "b"]


def test_re_api_the_code_uses():
    pattern = linear.compile(r"(?P<key>\w+)=(?P<value>\d+)?", re.IGNORECASE)
    found = pattern.search("héllo KEY=12 x=")
    assert found.groupdict() == {"key": "KEY", "value": "12"} and found.span("key") == (6, 9) and found.end("value") == 12
    assert [m.group("key") for m in pattern.finditer("a=1 b= c=3")] == ["a", "b", "c"]
    assert pattern.sub(r"\g<key>:\2…", "é a=1") == "é a:1…"
    assert pattern.sub(lambda m: m.group(1).upper(), "a=1, b=2") == "A, B"
    assert linear.compile(r"end\Z").search("the end") and not linear.compile(r"end\Z").search("end of it")
    assert linear.compile(r"^b$", re.M).findall("a\nb\nc") == ["b"]
    assert linear.compile(r"a.b", re.S).fullmatch("a\nb") and not linear.compile(r"a.b").fullmatch("a\nb")
    assert linear.compile(r"\u00b5s").search("3µs")


@pytest.mark.parametrize("pattern", [r"a(?=b)", r"(?<!a)b", r"(a)\1", r"a{1001}"])
def test_what_re2_cannot_run_fails_at_import_time(pattern):
    with pytest.raises(ValueError, match="RE2 cannot compile"):
        linear.compile(pattern)


def test_verbose_patterns_are_refused():
    with pytest.raises(ValueError, match="no RE2 spelling"):
        linear.compile("a b", re.VERBOSE)


def test_patterns_survive_pickling_for_worker_processes():
    import pickle

    pattern = linear.compile(r"(?P<x>\d+)", re.I)
    again = pickle.loads(pickle.dumps(pattern))
    assert isinstance(again, linear.Pattern) and again.search("ab 12").group("x") == "12" and again.flags == re.I


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
