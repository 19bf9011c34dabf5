"""The incident store (SQLAlchemy 2; schema through Alembic migrations only)."""
from bot.store.db import make_engine
from bot.store.incidents import IncidentStore, StoreUnavailable, fingerprint
from bot.store.migrate import SchemaBehind, check_current

__all__ = ["IncidentStore", "SchemaBehind", "StoreUnavailable", "check_current", "fingerprint", "make_engine"]
