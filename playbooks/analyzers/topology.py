"""Topology constraints a pending pod cannot meet: spread, anti-affinity, volume zones, host ports."""
from __future__ import annotations

from playbooks.facts import Facts


def analyze(facts: Facts):
    return iter(())
