"""Persistence: SQLAlchemy 2 async tables, repositories (the caller owns the transaction),
Alembic migrations."""
