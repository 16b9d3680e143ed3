"""Storage behaviour, run on SQLite and PostgreSQL alike."""

from __future__ import annotations

from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.store import chain_controls
from crossfill.store.db import ping, session_factory
from crossfill.store.migrate import alembic_config, upgrade_async


async def test_migrations_create_the_schema_at_head(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        tables = await connection.run_sync(lambda sync: inspect(sync).get_table_names())
        version = (
            await connection.execute(text("SELECT version_num FROM alembic_version"))
        ).scalar()
    assert {"chain_controls", "requests", "deposits", "outbox_events"} <= set(tables)
    assert version == ScriptDirectory.from_config(alembic_config("unused")).get_current_head()


async def test_upgrading_twice_is_a_no_op(engine: AsyncEngine, database_url: str) -> None:
    await upgrade_async(database_url)
    await ping(engine)


async def test_disabling_then_enabling_a_chain_is_recorded(engine: AsyncEngine) -> None:
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        await chain_controls.set_disabled(session, 900001, disabled=True, reason="RPC incident")
    async with sessions() as session:
        assert await chain_controls.disabled_overrides(session) == {900001: True}
        (control,) = await chain_controls.all_controls(session)
        assert control.reason == "RPC incident"

    async with sessions() as session, session.begin():
        await chain_controls.set_disabled(session, 900001, disabled=False)
    async with sessions() as session:
        assert await chain_controls.disabled_overrides(session) == {900001: False}


async def test_repository_leaves_the_transaction_to_the_caller(engine: AsyncEngine) -> None:
    sessions = session_factory(engine)
    async with sessions() as session:
        await chain_controls.set_disabled(session, 900002, disabled=True)
        await session.rollback()
    async with sessions() as session:
        assert await chain_controls.disabled_overrides(session) == {}


async def test_sqlite_runs_in_wal_mode(engine: AsyncEngine, backend: str) -> None:
    async with engine.connect() as connection:
        if backend == "sqlite":
            mode = (await connection.execute(text("PRAGMA journal_mode"))).scalar()
            assert mode == "wal"
        else:
            assert (await connection.execute(text("SELECT 1"))).scalar() == 1
