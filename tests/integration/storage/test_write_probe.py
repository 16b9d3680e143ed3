"""The readiness write probe: one row rewritten each time (on SQLite about a large quote's
size); a database that refuses writes (opened read-only, or a read-only PostgreSQL session)
is named as such, with only the failure's kind."""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.errors import StoreError
from crossfill.store.db import as_utc, create_engine
from crossfill.store.tables import WriteProbe
from crossfill.store.write_probe import PAYLOAD_BYTES, probe_write


async def _probe_rows(engine: AsyncEngine) -> list[WriteProbe]:
    async with engine.connect() as connection:
        return list((await connection.execute(select(WriteProbe))).all())  # type: ignore[arg-type]


async def test_probe_rewrites_one_row(engine: AsyncEngine, backend: str) -> None:
    await probe_write(engine)
    [first] = await _probe_rows(engine)
    await probe_write(engine)
    [second] = await _probe_rows(engine)
    assert first.id == second.id == 1
    assert len(second.payload) == PAYLOAD_BYTES[backend]
    assert second.payload != first.payload
    assert as_utc(second.written_at) > as_utc(first.written_at)


@pytest.fixture
async def read_only_engine(database_url: str, engine: AsyncEngine) -> AsyncIterator[AsyncEngine]:
    """The migrated database of `engine`, opened so that it refuses every write."""
    if database_url.startswith("sqlite"):
        path = urlsplit(database_url).path.removeprefix("/")
        read_only = create_engine(f"sqlite+aiosqlite:///file:{path}?mode=ro&uri=true")
    else:
        settings = {"default_transaction_read_only": "on"}
        read_only = create_engine(database_url, connect_args={"server_settings": settings})
    try:
        yield read_only
    finally:
        await read_only.dispose()


async def test_a_database_refusing_writes_is_named(read_only_engine: AsyncEngine) -> None:
    with pytest.raises(StoreError) as refused:
        await probe_write(read_only_engine)
    assert str(refused.value).startswith("database refuses writes: ")
    assert "INSERT" not in str(refused.value)  # the statement is not in the public answer
