"""The migrations build exactly the schema the table definitions describe, on both backends."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.store.tables import Base


async def test_migrated_schema_matches_the_models(engine: AsyncEngine) -> None:
    def differences(connection: Any) -> list[Any]:
        context = MigrationContext.configure(connection)
        return list(compare_metadata(context, Base.metadata))

    async with engine.connect() as connection:
        diff = await connection.run_sync(differences)
    assert diff == []


async def test_migrated_partial_indexes_are_the_models(engine: AsyncEngine) -> None:
    """`compare_metadata` ignores an index's WHERE clause: the indexes that hold only some
    rows (a quote's insert skips them) are checked here, by the definition each backend keeps."""
    modelled = {
        index.name
        for table in Base.metadata.tables.values()
        for index in table.indexes
        if index.dialect_options[engine.dialect.name]["where"] is not None
    }
    definitions = (
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        if engine.dialect.name == "sqlite"
        else "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()"
    )
    async with engine.connect() as connection:
        rows = (await connection.execute(text(definitions))).all()
    migrated = {name for name, definition in rows if " WHERE " in definition.upper()}
    assert "ix_requests_api_key_id" in modelled
    assert migrated == modelled
