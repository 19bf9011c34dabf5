"""Known problem signatures in log lines, event messages and pasted text.

``scan_line`` is what analyzers call on one event / condition / container-status message or log
line; ``scan_lines`` and ``scan_text`` number the lines from 1. Each Signal carries a finding code
from ``playbooks.codes`` and named ``fields`` captured from the text; the catalogue module lists the
rules and their field names.
"""
from __future__ import annotations

from playbooks.signatures.catalogue import ALL_RULES, MAX_LINE_CHARS, iter_lines, scan_line, scan_lines, scan_text
from playbooks.signatures.model import Signal

__all__ = ["ALL_RULES", "MAX_LINE_CHARS", "Signal", "iter_lines", "scan_line", "scan_lines", "scan_text"]
