"""Pytest plugin: ``pg_url``, an empty PostgreSQL database of its own (for tests that need the
network between bot and server, e.g. a proxy that drops connections)."""
import pytest

from tests import pg


@pytest.fixture
def pg_url():
    """An empty PostgreSQL database of its own (for tests about the network between bot and server)."""
    admin_url = pg.postgres_url()
    if admin_url is None:
        message = f"{pg.ENV_VAR} is not set: {pg.HINT}"
        if pg.in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    name = pg.create_database(admin_url)
    try:
        yield pg.with_database(admin_url, name)
    finally:
        pg.drop_database(admin_url, name)
