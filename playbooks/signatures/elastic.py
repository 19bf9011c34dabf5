"""torchrun / torch.distributed.elastic failures: signals, ChildFailedError, rendezvous and store timeouts."""
from __future__ import annotations

from playbooks.signatures.model import Rule

RULES: tuple[Rule, ...] = ()
