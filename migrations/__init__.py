"""Alembic environment and versions of the incident store (see bot/store/migrate.py)."""
