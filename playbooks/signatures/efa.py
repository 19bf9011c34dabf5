"""EFA and libfabric provider errors."""
from __future__ import annotations

from playbooks.signatures.model import Rule

RULES: tuple[Rule, ...] = ()
