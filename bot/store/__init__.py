"""The incident and proposal stores (SQLAlchemy 2; schema through Alembic migrations only)."""
from bot.store.alerts import AlertStore, AlertView, Batch, GroupView
from bot.store.db import make_engine
from bot.store.deliveries import DeliveryStore
from bot.store.incidents import IncidentStore, fingerprint
from bot.store.migrate import SchemaBehind, check_current
from bot.store.proposals import ProposalConflict, ProposalStore, ProposalView
from bot.store.tx import StoreUnavailable

__all__ = ["AlertStore", "AlertView", "Batch", "DeliveryStore", "GroupView", "IncidentStore", "ProposalConflict", "ProposalStore", "ProposalView", "SchemaBehind",
           "StoreUnavailable", "check_current", "fingerprint", "make_engine"]
