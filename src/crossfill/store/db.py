"""Engine and session factory for the configured database (SQLite WAL or PostgreSQL)."""

from __future__ import annotations

import functools
import json
from datetime import UTC, datetime
from typing import Any

import asyncpg
import orjson
from sqlalchemy import event, text
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import InterfaceError, OperationalError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.pool import ConnectionPoolEntry

from crossfill.errors import StoreError
from crossfill.store.sqlite_driver import BUSY_TIMEOUT_MS, OneCallDbapi


def as_utc(moment: datetime) -> datetime:
    """SQLite hands stored times back without their zone; they were stored in UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


# What a caller meets when the database cannot be reached or lost the connection under it (a
# restart, a failover, a network cut, a lock held too long, a full disk): nothing about the
# caller's own input; the same call may succeed later. asyncpg's failures to connect reach us
# as the OS's own errors (ConnectionRefusedError, TimeoutError, ...), not wrapped.
UNAVAILABLE: tuple[type[Exception], ...] = (
    StoreError,
    OperationalError,
    InterfaceError,
    PoolTimeout,  # no pooled connection came free in time
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.OperatorInterventionError,  # e.g. the server shutting down
    ConnectionError,
    TimeoutError,
)


def _sqlite_pragmas(
    dbapi_connection: DBAPIConnection,
    _record: ConnectionPoolEntry,
    *,
    autocheckpoint_pages: int | None,
) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    if autocheckpoint_pages is not None:
        cursor.execute(f"PRAGMA wal_autocheckpoint={int(autocheckpoint_pages)}")
    cursor.close()


class EncodedJson(str):
    """A JSON document encoded already (a quote's answer, sent as these very bytes): a JSON
    column stores it as it is instead of encoding the document a second time."""

    __slots__ = ()


def json_text(value: Any) -> str:
    """JSON columns written through orjson (a stored quote is ~10 KB; the standard encoder
    took a fifth of an insert). orjson refuses integers wider than 64 bits, which the standard
    encoder writes exactly: those documents take the slow path. Reading stays with the standard
    decoder, which (unlike orjson) keeps such integers exact."""
    if isinstance(value, EncodedJson):
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value)


def create_engine(
    url: str,
    *,
    autocheckpoint_pages: int | None = None,
    timeout_seconds: float | None = None,
    **engine_options: Any,
) -> AsyncEngine:
    """`autocheckpoint_pages` (SQLite): how long the write-ahead log may grow before a commit
    checkpoints it, when another thread usually does (`store.wal_checkpoints`).

    `timeout_seconds` (PostgreSQL): how long a connection attempt or a statement's answer is
    awaited before the call fails with one of `UNAVAILABLE`. Without it, a server behind a
    network cut that loses packets silently held every request and worker that touched the
    database until the cut ended, or until TCP gave up on the connection (about a quarter of
    an hour). A free pooled connection is awaited SQLAlchemy's 30 s: a busy process's workers
    queue for one rather than fail. None (migrations, one-off commands): wait."""
    engine_options = {"json_serializer": json_text, **engine_options}
    if is_sqlite(url):
        # SQLite has one writer. Connections racing for its lock wait in SQLite's busy handler,
        # which sleeps up to 100 ms at a time (quote p99 was 2 s at 16 clients); one pooled
        # connection makes them queue in asyncio instead. No code holds a session across RPC.
        # Each statement one call, on the event loop when it need not wait (`sqlite_driver`).
        engine_options = {
            "pool_size": 1,
            "max_overflow": 0,
            "module": OneCallDbapi(),
            **engine_options,
        }
        engine = create_async_engine(url, **engine_options)
        pragmas = functools.partial(_sqlite_pragmas, autocheckpoint_pages=autocheckpoint_pages)
        event.listen(engine.sync_engine, "connect", pragmas)
        return engine
    if timeout_seconds is not None:
        engine_options = {
            "connect_args": {"timeout": timeout_seconds, "command_timeout": timeout_seconds},
            **engine_options,
        }
    return create_async_engine(url, pool_pre_ping=True, **engine_options)


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


# Whatever a database call may raise that is the database's (or the way to it) failing.
DATABASE_FAILURES: tuple[type[Exception], ...] = (SQLAlchemyError, OSError, *UNAVAILABLE)


async def ping(engine: AsyncEngine) -> None:
    try:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
    except DATABASE_FAILURES as exc:
        raise StoreError(f"database unreachable: {type(exc).__name__}") from exc
