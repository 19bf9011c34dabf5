"""External tools the suite runs (helm, promtool, prometheus), found the same way for every test.

`make test` installs each first (scripts/fetch-helm.sh, scripts/fetch-promtool.sh). Missing, a test
fails under CI, where a skipped test would check nothing, and is skipped for a developer's plain pytest,
like the PostgreSQL tests (tests/pg.py).
"""
from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.pg import in_ci


def required_tool(name: str, *, install: str, first: Iterable[Path | str | None] = ()) -> str:
    """The path of ``name``: the first of ``first`` that is a file, else the one on PATH."""
    for candidate in first:
        if candidate and Path(candidate).is_file():
            return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    message = f"{name} is not installed: {install} (make test does)"
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)
