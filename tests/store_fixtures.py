"""Pytest plugin (registered in tests/conftest.py): ``db_url``, a database per test on each backend.

A test taking ``db_url`` runs twice: ``[sqlite]`` with ``sqlite:///<tmp_path>/gpubot.db`` and
``[postgresql]`` with a fresh database ``test_<random>`` on the server in ``GPUBOT_TEST_POSTGRES_URL``,
dropped after the test. Without that variable the PostgreSQL variant fails under CI (the store tests
must not be skipped there) and is skipped otherwise, with a hint to run ``make test``.
"""
from __future__ import annotations

import pytest

from tests import pg

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def db_url(request, tmp_path):
    """A SQLAlchemy URL of an empty database of its own, on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/gpubot.db"
        return

    with pg.fresh_database() as url:
        yield url
