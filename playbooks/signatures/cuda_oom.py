"""CUDA and library out-of-memory errors in their many spellings."""
from __future__ import annotations

from playbooks.signatures.model import Rule

RULES: tuple[Rule, ...] = ()
