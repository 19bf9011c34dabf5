"""nvidia-smi and nvidia-smi -q output: only what says a GPU is unwell."""
from __future__ import annotations

from playbooks.signatures.model import Rule

RULES: tuple[Rule, ...] = ()
