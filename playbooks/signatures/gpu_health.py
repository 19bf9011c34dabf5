"""GPU health as the device plugin and the EKS node monitoring agent report it."""
from __future__ import annotations

from playbooks.signatures.model import Rule

RULES: tuple[Rule, ...] = ()
