"""Every pattern that reads text gpubot does not write, and 64 KB lines built to make a backtracking
engine take quadratic time on it (shared by test_linear_patterns.py and benchmarks/bench_linear.py)."""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from collections.abc import Iterator
from types import ModuleType

from playbooks import linear
from playbooks.signatures.model import Rule

LINE = 64 * 1024
PACKAGES = ("playbooks.signatures", "playbooks.documents", "playbooks.analyzers", "playbooks.karpenter")
MODULES = ("playbooks.scope", "playbooks.remediations.protection", "bot.alerts.labels", "bot.alerts.alertmanager", "bot.intent",
           "handlers.mentions")
# Text that many patterns repeat, or stop at: runs of it make a backtracking engine retry from every
# position.
_RUNS = (" ", "a", "A", "1", "\t", ",", ".", ":", "=", "-", "/", "{", "[", "(", '"', "\\", "a ", "1 ", ", ", ". ", "a.", "a{",
         "a:", "a=", "1.", "a,", "1/", "a/", "{a", "a-", '"a', "\\\"")
_WORD = re.compile(r"[A-Za-z][A-Za-z_-]{2,}")


@dataclasses.dataclass(frozen=True)
class Found:
    where: str  # module.NAME, or module.NAME.pattern for a Rule's pattern
    pattern: object
    rules: tuple[Rule, ...] = ()


def modules() -> list[ModuleType]:
    found = []
    for name in PACKAGES:
        package = importlib.import_module(name)
        found.append(package)
        found += [importlib.import_module(info.name) for info in pkgutil.walk_packages(package.__path__, name + ".")]
    return found + [importlib.import_module(name) for name in MODULES]


def patterns() -> list[Found]:
    """Every compiled pattern reachable from the modules' globals (Rules, tuples and dicts included)."""
    seen: dict[int, Found] = {}
    rules_of: dict[int, list[Rule]] = {}

    def walk(value: object, where: str, rule: Rule | None, depth: int) -> None:
        if isinstance(value, (re.Pattern, linear.Pattern)):
            seen.setdefault(id(value), Found(where, value))
            if rule is not None:
                rules_of.setdefault(id(value), []).append(rule)
        elif depth > 4:
            return
        elif isinstance(value, Rule):
            walk(value.pattern, f"rule {value.name}", value, depth + 1)
            for i, extractor in enumerate(value.extract):
                walk(extractor, f"rule {value.name} extract[{i}]", value, depth + 1)
        elif isinstance(value, (tuple, list, frozenset, set)):
            for i, item in enumerate(value):
                walk(item, f"{where}[{i}]", rule, depth + 1)
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{where}[{key!r}]", rule, depth + 1)

    for module in modules():
        for name, value in vars(module).items():
            walk(value, f"{module.__name__}.{name}", None, 0)
    return [dataclasses.replace(f, rules=tuple(dict.fromkeys(rules_of.get(key, ())))) for key, f in seen.items()]


def _fill(piece: str, prefix: str = "") -> str:
    body = (prefix + piece * (LINE // max(len(piece), 1) + 1))
    return body[:LINE]


def lines_for(found: Found) -> Iterator[tuple[str, str]]:
    """``(label, line)``: 64 KB lines for one pattern."""
    source = found.pattern.pattern
    for run in _RUNS:
        yield f"run {run!r}", _fill(run)
    for char in sorted({c for c in source if c.isprintable() and not c.isalnum()} - set(_RUNS)):
        yield f"run {char!r}", _fill(char)
    words = list(dict.fromkeys(_WORD.findall(source)))[:12]
    for rule in found.rules:
        words += [k for k in rule.keywords if k not in words]
    for word in words[:16]:
        yield f"repeated {word!r}", _fill(word + " ")
        yield f"{word!r} then letters", _fill("a", prefix=word + " ")
        yield f"{word!r} then digits", _fill("1", prefix=word + " ")
    for rule in found.rules:
        if rule.example:
            yield f"{rule.name} example repeated", _fill(rule.example + " ")
            yield f"{rule.name} example then spaces", _fill(" ", prefix=rule.example)


def catalogue_lines(rule: Rule) -> Iterator[tuple[str, str]]:
    """64 KB lines that get past a rule's keywords, so the catalogue runs its patterns on them."""
    for keyword in rule.keywords[:4]:
        yield f"{keyword!r} repeated", _fill(keyword + " ")
        yield f"{keyword!r} then spaces", _fill(" ", prefix=keyword)
        yield f"{keyword!r} then letters", _fill("a", prefix=keyword + " ")
        yield f"{keyword!r} then digits and a space", _fill("1 ", prefix=keyword + " ")
    if rule.example:
        yield "example repeated", _fill(rule.example + " ")
