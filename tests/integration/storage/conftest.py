"""One migrated database per backend: SQLite in a temp dir, PostgreSQL in a throwaway database.

Under CI=true an unreachable PostgreSQL fails the run; elsewhere its tests are skipped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.conftest import fresh_postgres_database
from tests.support.database import (
    drop_postgres_database,
    engine_of,
    postgres_database_url,
    sqlite_url,
)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def database_url(request: pytest.FixtureRequest, tmp_path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield sqlite_url(tmp_path / "crossfill.db")
        return
    name = await fresh_postgres_database()
    try:
        yield postgres_database_url(name)
    finally:
        await drop_postgres_database(name)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    async with engine_of(database_url, migrated=True) as engine:
        yield engine


@pytest.fixture
def backend(database_url: str) -> Iterator[str]:
    yield "sqlite" if database_url.startswith("sqlite") else "postgresql"


@pytest.fixture
async def postgres_engine() -> AsyncIterator[AsyncEngine]:
    """A migrated throwaway PostgreSQL database, for tests of PostgreSQL-only behaviour."""
    name = await fresh_postgres_database()
    try:
        async with engine_of(postgres_database_url(name), migrated=True) as engine:
            yield engine
    finally:
        await drop_postgres_database(name)


@pytest.fixture
async def sqlite_engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """A migrated SQLite database, for tests of SQLite-only behaviour."""
    async with engine_of(sqlite_url(tmp_path / "crossfill.db"), migrated=True) as engine:
        yield engine
