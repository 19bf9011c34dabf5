"""Line rules (filled in by this family's module docstring and RULES)."""
from __future__ import annotations

from playbooks.signatures.model import Rule

RULES: tuple[Rule, ...] = ()
