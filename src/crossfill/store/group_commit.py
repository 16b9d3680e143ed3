"""Group commit: rows from concurrent callers written in one transaction.

Every quote stores its request row before it is answered. One transaction per row made the
insert the slowest part of a quote under load (SQLite has one writer, and each statement is a
round trip to the driver's thread); here a caller's rows join the batch being collected while
the previous one commits, and each caller returns once the transaction holding its rows has
committed, so an answered quote always has its row.

Rows are column values, inserted parents first: the ORM's unit of work cost four times as much
CPU per row, and new rows need none of it. On PostgreSQL a batch is one statement
(`bulk_insert`), sent on a connection the writer keeps: one round trip, no pool checkout or
liveness ping. If that connection has gone (the server restarted), the batch is sent once more
on a new one; should the first attempt have committed after all, the second fails on the
duplicate keys and the callers see an error for rows that are stored, which is safe (a quote
nobody was told about). SQLite's pool has a single connection, which other work needs too:
there the writer checks it out per batch and runs the whole transaction (BEGIN, one
`executemany` per table, COMMIT) as one call on aiosqlite's thread. Through SQLAlchemy's
adapter the same batch was about a dozen round trips to that thread, each a wake-up of the
event loop: 21% of a loaded API process's samples were aiosqlite's thread.

Every failure reaches the callers as a StoreError.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field

import aiosqlite
import asyncpg
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from crossfill.errors import StoreError
from crossfill.store.bulk_insert import PostgresBulkInsert, Row, SqliteBulkInsert

__all__ = ["GroupCommit", "Row"]

_DRIVER_ERRORS = (
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    asyncpg.ProtocolError,
    OSError,
    sqlite3.Error,
)
# The server's errors that end a session rather than refuse a statement.
_SESSION_ENDED = (
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,  # e.g. terminated by an administrator
)
_DATABASE_ERRORS = (SQLAlchemyError, *_DRIVER_ERRORS)


@dataclass
class GroupCommit:
    engine: AsyncEngine
    _pending: list[tuple[Sequence[Row], asyncio.Future[None]]] = field(default_factory=list)
    _writer: asyncio.Task[None] | None = None
    _connection: AsyncConnection | None = None
    _bulk_insert: PostgresBulkInsert | None = None
    _sqlite_insert: SqliteBulkInsert | None = None
    # Transactions committed, for tests: how many batches the rows went in.
    commits: int = 0

    async def add(self, rows: Sequence[Row]) -> None:
        """Return once `rows` are committed; raise StoreError if their transaction failed."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((rows, done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_pending(), name="group-commit")
        # Not shielded: a cancelled caller cancels its own future only, which the writer
        # then skips; the batch and the other callers go on.
        await done

    async def _write_pending(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await self._commit([row for rows, _ in batch for row in rows])
            except Exception as exc:
                if len(batch) == 1:
                    _settle(batch[0][1], exc)
                else:
                    await self._commit_one_by_one(batch)
            else:
                for _, done in batch:
                    _settle(done, None)

    async def _commit_one_by_one(
        self, batch: list[tuple[Sequence[Row], asyncio.Future[None]]]
    ) -> None:
        """After a failed batch: one caller's failure must not fail the others."""
        for rows, done in batch:
            try:
                await self._commit(rows)
            except Exception as exc:
                _settle(done, exc)
            else:
                _settle(done, None)

    async def _commit(self, rows: Sequence[Row]) -> None:
        try:
            if self.engine.dialect.name == "sqlite":
                await self._commit_sqlite(rows)
            else:
                await self._commit_postgres(rows)
        except _DATABASE_ERRORS as exc:
            raise StoreError(f"rows not stored: {exc}") from exc
        self.commits += 1

    async def _commit_sqlite(self, rows: Sequence[Row]) -> None:
        if self._sqlite_insert is None:
            self._sqlite_insert = SqliteBulkInsert(self.engine.dialect)
        statements = self._sqlite_insert.statements(rows)
        async with self.engine.connect() as connection:
            raw = await connection.get_raw_connection()
            driver = raw.driver_connection
            assert isinstance(driver, aiosqlite.Connection)
            # aiosqlite's own way of running a call on its thread (what each of its methods
            # does); the sqlite3 connection must only be used there.
            await driver._execute(_insert_and_commit, driver._conn, statements)  # type: ignore[no-untyped-call]

    async def _commit_postgres(self, rows: Sequence[Row]) -> None:
        if self._bulk_insert is None:
            self._bulk_insert = PostgresBulkInsert(self.engine.dialect)
        sql, arguments = self._bulk_insert.statement(rows)
        try:
            await (await self._driver_connection()).execute(sql, *arguments)
        except _DRIVER_ERRORS as exc:
            if isinstance(exc, asyncpg.PostgresError) and not isinstance(exc, _SESSION_ENDED):
                raise  # the server refused these rows; the connection is fine
            await self.close(lost=True)
            await (await self._driver_connection()).execute(sql, *arguments)

    async def _driver_connection(self) -> asyncpg.Connection:
        """asyncpg's own connection under the writer's pooled one: the statement needs no
        transaction, and SQLAlchemy's would cost a BEGIN and a COMMIT round trip."""
        if self._connection is None or self._connection.closed:
            self._connection = await self.engine.connect()
        raw = await self._connection.get_raw_connection()
        return raw.driver_connection

    async def close(self, *, lost: bool = False) -> None:
        """Give back the writer's own connection (before the engine is disposed); a lost one is
        discarded rather than pooled."""
        connection, self._connection = self._connection, None
        if connection is None:
            return
        if lost:
            await connection.invalidate()
        await connection.close()


def _settle(done: asyncio.Future[None], error: Exception | None) -> None:
    if done.done():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


def _insert_and_commit(
    connection: sqlite3.Connection, statements: list[tuple[str, list[tuple[object, ...]]]]
) -> None:
    """On aiosqlite's thread: one transaction, every row or none."""
    if not connection.in_transaction:
        connection.execute("BEGIN")
    try:
        for sql, parameters in statements:
            connection.executemany(sql, parameters)
        connection.commit()
    except BaseException:
        connection.rollback()
        raise
