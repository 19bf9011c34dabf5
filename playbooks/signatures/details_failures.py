"""Detail paragraphs registered into ``details.WRITERS`` / ``NEXT_STEPS`` (see details_training.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from playbooks.signatures.details import View

WRITERS: dict[str, Callable[[View], str]] = {}
NEXT_STEPS: dict[str, str] = {}
