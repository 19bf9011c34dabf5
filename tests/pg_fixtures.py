"""Pytest plugin: ``pg_url``, an empty PostgreSQL database of its own (for tests that need the
network between bot and server, e.g. a proxy that drops connections)."""
import pytest

from tests import pg


@pytest.fixture
def pg_url():
    with pg.fresh_database() as url:
        yield url
