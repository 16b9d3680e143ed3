"""The service's database as tests and benchmarks open it, on SQLite or PostgreSQL alike (by its
SQLAlchemy URL, engines built as the service builds them), and throwaway PostgreSQL databases.

From synchronous code (a test beside a running service): `rows_in` for one select, `read` and
`write` for anything done in one session. From async code: `sessions_of` (or `engine_of`),
whose engine is disposed on the way out.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from crossfill.store.db import create_engine, session_factory
from crossfill.store.migrate import upgrade_async

T = TypeVar("T")

# The server's maintenance database, where throwaway databases are created and dropped.
POSTGRES_ADMIN_DSN = os.environ.get(
    "CROSSFILL_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
)


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of a SQLite file, with the driver the service uses."""
    return f"sqlite+aiosqlite:///{path}"


@asynccontextmanager
async def engine_of(url: str, *, migrated: bool = False) -> AsyncIterator[AsyncEngine]:
    """The service's kind of engine on the database at `url` (brought to the latest schema
    first when `migrated`); disposed afterwards."""
    if migrated:
        await upgrade_async(url)
    engine = create_engine(url)
    try:
        yield engine
    finally:
        await engine.dispose()


@asynccontextmanager
async def sessions_of(
    url: str, *, migrated: bool = False
) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    """Sessions on the database at `url`, as the service makes them (see `engine_of`)."""
    async with engine_of(url, migrated=migrated) as engine:
        yield session_factory(engine)


def read(url: str, reading: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """What `reading` finds in one session on the database at `url` (from synchronous code)."""

    async def run() -> T:
        async with sessions_of(url) as sessions, sessions() as session:
            return await reading(session)

    return asyncio.run(run())


def write(url: str, writing: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """`writing` done in one committed transaction on the database at `url`; what it returns."""

    async def run() -> T:
        async with sessions_of(url) as sessions, sessions() as session, session.begin():
            return await writing(session)

    return asyncio.run(run())


def rows_in(url: str, statement: Select[Any]) -> list[Any]:
    """The rows one ORM select finds on the database at `url`."""

    async def scalars(session: AsyncSession) -> list[Any]:
        return list(await session.scalars(statement))

    return read(url, scalars)


def postgres_database_url(name: str) -> str:
    """The SQLAlchemy URL of database `name` on the server of `POSTGRES_ADMIN_DSN`."""
    base = POSTGRES_ADMIN_DSN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    return f"{base}/{name}"


class PostgresUnreachable(Exception):
    """The PostgreSQL server of `POSTGRES_ADMIN_DSN` did not take a connection."""


async def _administer(statement: str) -> None:
    try:
        admin = await asyncpg.connect(POSTGRES_ADMIN_DSN, timeout=5)
    except (OSError, asyncpg.PostgresError) as exc:
        raise PostgresUnreachable(f"PostgreSQL at {POSTGRES_ADMIN_DSN} unreachable: {exc}") from exc
    try:
        await admin.execute(statement)
    finally:
        await admin.close()


async def create_postgres_database(prefix: str = "crossfill_test") -> str:
    """A new, empty PostgreSQL database; its name. `PostgresUnreachable` without a server."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    await _administer(f'CREATE DATABASE "{name}"')
    return name


async def drop_postgres_database(name: str) -> None:
    """Drop database `name`, whoever is still connected to it."""
    await _administer(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@asynccontextmanager
async def throwaway_postgres(
    prefix: str = "crossfill_test", *, keep: bool = False
) -> AsyncIterator[str]:
    """A new PostgreSQL database for one run; its SQLAlchemy URL. Dropped after, unless `keep`."""
    name = await create_postgres_database(prefix)
    try:
        yield postgres_database_url(name)
    finally:
        if not keep:
            await drop_postgres_database(name)
