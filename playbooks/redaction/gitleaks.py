"""Vendor tokens by their shape: gitleaks' maintained rule set, as the table in data/gitleaks.json.

The table is generated from gitleaks' default config (scripts/gen_redaction_rules.py, the tag is in the
table) so the list of vendor formats is upstream's, not ours: a new format is a regeneration, not a
rule written here. A rule is applied as gitleaks applies it (detect/detect.go): only on a line holding
one of its keywords (lower-cased, as gitleaks compares them), the secret is the rule's secretGroup or
else its first non-empty group, a secret at or under the rule's entropy is dropped, a ``generic-*``
secret needs a digit, and the rule's allowlists and the global one (regexes against the secret, the
match or the line; stopwords in the secret) let a value through.

The keyword gate keeps the cost low on large texts: one pass of the keywords over the lower-cased line,
and a rule's regex runs only when one of its words is there. Every regex runs on RE2.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources

from playbooks import linear
from playbooks.redaction.spans import Span

TABLE = "gitleaks.json"


@dataclass(frozen=True)
class Allowlist:
    target: str  # "secret", "match" or "line"
    regexes: tuple[linear.Pattern, ...]
    stopwords: tuple[str, ...]

    def allows(self, *, secret: str, match: str, line: str) -> bool:
        text = {"match": match, "line": line}.get(self.target, secret)
        lowered = secret.lower()
        return (any(r.search(text) for r in self.regexes)
                or any(word in lowered for word in self.stopwords))


@dataclass(frozen=True)
class Rule:
    id: str
    regex: linear.Pattern
    secret_group: int
    entropy: float
    allowlists: tuple[Allowlist, ...]

    def spans(self, line: str, allowed: Allowlist) -> Iterator[Span]:
        for match in self.regex.finditer(line):
            group = self._group(match)
            secret = match.group(group)
            if not secret:
                continue
            if self.entropy and shannon(secret) <= self.entropy:
                continue
            if self.id.startswith("generic") and not any(c.isdigit() for c in secret):
                continue
            lists = (allowed, *self.allowlists)
            if any(a.allows(secret=secret, match=match.group(0), line=line) for a in lists):
                continue
            yield match.span(group)

    def _group(self, match) -> int:
        if self.secret_group:
            return self.secret_group
        return next((g for g in range(1, self.regex.groups + 1) if match.group(g)), 0)


@dataclass(frozen=True)
class Table:
    tag: str
    rules: tuple[Rule, ...]
    by_keyword: dict[str, tuple[int, ...]]
    always: tuple[int, ...]  # rules with no keywords run on every line
    allowlist: Allowlist
    any_keyword: linear.Pattern  # one RE2 pass says whether a line holds any keyword at all


def shannon(text: str) -> float:
    """Shannon entropy in bits per character, as gitleaks' detect.shannonEntropy computes it."""
    counts, size = Counter(text), len(text)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


@cache
def table() -> Table:
    data = json.loads(resources.files("playbooks.redaction").joinpath("data", TABLE).read_text())
    rules, by_keyword, always = [], {}, []
    for index, entry in enumerate(data["rules"]):
        rules.append(Rule(id=entry["id"], regex=linear.compile(entry["regex"]), secret_group=entry["secret_group"],
                          entropy=float(entry["entropy"]), allowlists=tuple(_allowlist(a) for a in entry["allowlists"])))
        for keyword in entry["keywords"]:
            by_keyword.setdefault(keyword, []).append(index)
        if not entry["keywords"]:
            always.append(index)
    glob = data["allowlist"]
    any_keyword = linear.compile("|".join(re.escape(k) for k in sorted(by_keyword, key=len, reverse=True)))
    return Table(tag=data["tag"], rules=tuple(rules), by_keyword={k: tuple(v) for k, v in by_keyword.items()},
                 always=tuple(always), allowlist=_allowlist({"target": "secret", **glob}), any_keyword=any_keyword)


def _allowlist(entry: dict) -> Allowlist:
    return Allowlist(target=entry["target"], regexes=tuple(linear.compile(r) for r in entry["regexes"]),
                     stopwords=tuple(entry["stopwords"]))


def spans(line: str) -> Iterator[Span]:
    rules = table()
    lowered = line.lower()
    chosen = set(rules.always)
    if rules.any_keyword.search(lowered):  # most lines hold none: one pass instead of one test per keyword
        for keyword, indices in rules.by_keyword.items():
            if keyword in lowered:
                chosen.update(indices)
    for index in sorted(chosen):
        yield from rules.rules[index].spans(line, rules.allowlist)
