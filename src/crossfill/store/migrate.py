"""Apply the Alembic migrations shipped in this package to a database URL."""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.exc import SQLAlchemyError

from crossfill.errors import StoreError

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", database_url)
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    """Bring the schema up to `revision` (blocking; run it off the event loop)."""
    try:
        command.upgrade(alembic_config(database_url), revision)
    except (SQLAlchemyError, OSError) as exc:
        raise StoreError(f"migration failed: {exc}") from exc


async def upgrade_async(database_url: str, revision: str = "head") -> None:
    await asyncio.to_thread(upgrade, database_url, revision)
