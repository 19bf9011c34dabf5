"""One registry of analyzers, passed in (a fresh one per test), never a module-level singleton."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from playbooks.facts import Facts
from playbooks.model import Finding

Analyzer = Callable[[Facts], Iterable[Finding]]


@dataclass
class Registry:
    analyzers: dict[str, Analyzer] = field(default_factory=dict)

    def register(self, name: str, analyzer: Analyzer) -> Analyzer:
        if name in self.analyzers:
            raise ValueError(f"analyzer {name!r} is already registered")
        self.analyzers[name] = analyzer
        return analyzer

    def analyzer(self, name: str) -> Callable[[Analyzer], Analyzer]:
        def decorate(fn: Analyzer) -> Analyzer:
            return self.register(name, fn)

        return decorate


def default_registry() -> Registry:
    """A registry holding every built-in analyzer."""
    from playbooks.analyzers import register_all

    registry = Registry()
    register_all(registry)
    return registry
