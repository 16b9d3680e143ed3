"""One migrated database per backend: SQLite in a temp dir, PostgreSQL in a throwaway database.

Under CI=true an unreachable PostgreSQL fails the run; elsewhere its tests are skipped.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.store.db import create_engine
from crossfill.store.migrate import upgrade_async
from tests.conftest import running_in_ci

POSTGRES_ADMIN_DSN = os.environ.get(
    "CROSSFILL_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
)


async def _create_postgres_database() -> str:
    name = f"crossfill_test_{uuid.uuid4().hex[:12]}"
    try:
        admin = await asyncpg.connect(POSTGRES_ADMIN_DSN, timeout=5)
    except (OSError, asyncpg.PostgresError) as exc:
        message = f"PostgreSQL at {POSTGRES_ADMIN_DSN} unreachable: {exc}"
        if running_in_ci():
            pytest.fail(message)
        pytest.skip(message)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return name


async def _drop_postgres_database(name: str) -> None:
    admin = await asyncpg.connect(POSTGRES_ADMIN_DSN, timeout=5)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


def _postgres_url(name: str) -> str:
    base = POSTGRES_ADMIN_DSN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    return f"{base}/{name}"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def database_url(request: pytest.FixtureRequest, tmp_path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'crossfill.db'}"
        return
    name = await _create_postgres_database()
    try:
        yield _postgres_url(name)
    finally:
        await _drop_postgres_database(name)


@contextlib.asynccontextmanager
async def _migrated(url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade_async(url)
    engine = create_engine(url)
    try:
        yield engine
    finally:
        await engine.dispose()


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    async with _migrated(database_url) as engine:
        yield engine


@pytest.fixture
def backend(database_url: str) -> Iterator[str]:
    yield "sqlite" if database_url.startswith("sqlite") else "postgresql"


@pytest.fixture
async def postgres_engine() -> AsyncIterator[AsyncEngine]:
    """A migrated throwaway PostgreSQL database, for tests of PostgreSQL-only behaviour."""
    name = await _create_postgres_database()
    try:
        async with _migrated(_postgres_url(name)) as engine:
            yield engine
    finally:
        await _drop_postgres_database(name)


@pytest.fixture
async def sqlite_engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """A migrated SQLite database, for tests of SQLite-only behaviour."""
    async with _migrated(f"sqlite+aiosqlite:///{tmp_path / 'crossfill.db'}") as engine:
        yield engine
