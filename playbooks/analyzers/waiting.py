"""Pods that wait on purpose (gated, suspended) or for a node already on its way."""
from __future__ import annotations

from playbooks.facts import Facts


def analyze(facts: Facts):
    return iter(())
