"""The migrations build exactly the schema the table definitions describe, on both backends."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.store.tables import Base


async def test_migrated_schema_matches_the_models(engine: AsyncEngine) -> None:
    def differences(connection: Any) -> list[Any]:
        context = MigrationContext.configure(connection)
        return list(compare_metadata(context, Base.metadata))

    async with engine.connect() as connection:
        diff = await connection.run_sync(differences)
    assert diff == []
