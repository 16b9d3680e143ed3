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
on a new one (not when the server merely did not answer in time: a second try would wait as
long); should the first attempt have committed after all, the second fails on the
duplicate keys and the callers see an error for rows that are stored, which is safe (a quote
nobody was told about). SQLite's pool has a single connection, which other work needs too:
there the writer checks it out, takes every row waiting, and commits them on the event loop
itself, in one transaction begun with `BEGIN IMMEDIATE` and no busy timeout, then gives the
connection back; rows added meanwhile make the next batch. A batch of a loaded API process is
about a millisecond of SQLite's work, all of it CPU (in WAL mode with `synchronous=NORMAL` a
commit syncs nothing; checkpoints run on a thread of their own, `store.wal_checkpoints`).
Committed on aiosqlite's thread instead, the event loop and that thread handed Python's GIL
back and forth several times per batch: a loaded process's main thread got about 81% of a core
and served 15-20% fewer quotes than now, at 95% (docs/performance.md). Should the write lock be
taken (another process on the same file, one started by mistake) or the transaction fail, the
batch is written on aiosqlite's thread instead, as any other statement is: there it waits out
the busy timeout, and one caller's bad rows fail only that caller. The event loop never waits
for a lock.

Every failure reaches the callers as a StoreError.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import aiosqlite
import asyncpg
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from crossfill.errors import StoreError
from crossfill.store.bulk_insert import PostgresBulkInsert, Row, SqliteBulkInsert
from crossfill.store.sqlite_driver import not_waiting

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

# A caller's rows and the future it awaits; a caller's future and what failed its rows.
_Waiting = tuple[Sequence[Row], "asyncio.Future[None]"]
_Outcome = tuple["asyncio.Future[None]", Exception | None]


@dataclass
class GroupCommit:
    engine: AsyncEngine
    # Callers' rows and futures, in the order they came; the writer takes them all at once.
    _pending: deque[_Waiting] = field(default_factory=deque)
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
        if self.engine.dialect.name == "sqlite":
            await self._write_pending_sqlite()
            return
        while self._pending:
            batch = list(self._pending)
            self._pending.clear()
            try:
                await self._commit(_rows_of(batch))
            except Exception as exc:
                if len(batch) == 1:
                    _settle(batch[0][1], exc)
                else:
                    await self._commit_one_by_one(batch)
            else:
                for _, done in batch:
                    _settle(done, None)

    async def _commit_one_by_one(self, batch: list[_Waiting]) -> None:
        """After a failed batch: one caller's failure must not fail the others."""
        for rows, done in batch:
            try:
                await self._commit(rows)
            except Exception as exc:
                _settle(done, exc)
            else:
                _settle(done, None)

    async def _commit(self, rows: Sequence[Row]) -> None:
        """PostgreSQL: `rows` in one statement, committed by itself."""
        try:
            await self._commit_postgres(rows)
        except _DATABASE_ERRORS as exc:
            raise _stored_error(exc) from exc
        self.commits += 1

    async def _write_pending_sqlite(self) -> None:
        if self._sqlite_insert is None:
            self._sqlite_insert = SqliteBulkInsert(self.engine.dialect)
        batches = _SqliteBatches(self._sqlite_insert)
        while self._pending:
            batch: list[_Waiting] = []
            try:
                async with self.engine.connect() as connection:
                    raw = await connection.get_raw_connection()
                    driver = raw.driver_connection
                    assert isinstance(driver, aiosqlite.Connection)
                    batch = [self._pending.popleft() for _ in range(len(self._pending))]
                    if batches.store_now(driver._conn, batch):
                        self._told([(done, None) for _, done in batch], 1)
                        continue
                    # aiosqlite's own way of running a call on its thread (what each of its
                    # methods does).
                    outcomes, commits = await driver._execute(  # type: ignore[no-untyped-call]
                        batches.store, driver._conn, batch
                    )
                    self._told(outcomes, commits)
            except Exception as exc:
                # No connection to write on, or the call failed: the rows not yet told of
                # were not stored.
                error = _stored_error(exc)
                for _, done in batch:
                    _settle(done, error)
                while self._pending:
                    _settle(self._pending.popleft()[1], error)

    def _told(self, outcomes: list[_Outcome], commits: int) -> None:
        """SQLite: a batch committed (or not)."""
        self.commits += commits
        for done, error in outcomes:
            _settle(done, error)

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
            if isinstance(exc, TimeoutError):
                raise  # the server is there but silent: another try would wait as long
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


def _stored_error(exc: Exception) -> Exception:
    """What a caller whose rows failed is told: the database's refusal as a StoreError."""
    return StoreError(f"rows not stored: {exc}") if isinstance(exc, _DATABASE_ERRORS) else exc


def _rows_of(batch: Sequence[_Waiting]) -> list[Row]:
    """Every caller's rows of a batch, in the callers' order."""
    return [row for rows, _ in batch for row in rows]


def _settle(done: asyncio.Future[None], error: Exception | None) -> None:
    if done.done():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


@dataclass(frozen=True)
class _SqliteBatches:
    """Batches of callers' rows written on SQLite: at once on the event loop when nothing has
    to wait, otherwise on aiosqlite's thread."""

    insert: SqliteBulkInsert

    def store_now(self, connection: sqlite3.Connection, batch: list[_Waiting]) -> bool:
        """On the event loop, without waiting: True once the batch is committed; False, with
        nothing stored, when another connection holds the write lock or the transaction
        failed (`store` then writes it on aiosqlite's thread)."""
        if connection.in_transaction:
            return False
        try:
            with not_waiting(connection):
                statements = self.insert.statements(_rows_of(batch))
                _insert_and_commit(connection, statements, begin="BEGIN IMMEDIATE")
        except Exception:
            return False
        return True

    def store(
        self, connection: sqlite3.Connection, batch: list[_Waiting]
    ) -> tuple[list[_Outcome], int]:
        """On aiosqlite's thread: every caller's outcome and the transactions committed: the
        batch in one, or, if that failed, each caller's rows in their own (one caller's
        failure must not fail the others)."""
        error = self._commit(connection, _rows_of(batch))
        if error is None:
            return [(done, None) for _, done in batch], 1
        if len(batch) == 1:
            return [(batch[0][1], error)], 0
        outcomes = [(done, self._commit(connection, rows)) for rows, done in batch]
        return outcomes, sum(1 for _, failed in outcomes if failed is None)

    def _commit(self, connection: sqlite3.Connection, rows: Sequence[Row]) -> Exception | None:
        try:
            _insert_and_commit(connection, self.insert.statements(rows))
        except Exception as exc:
            return _stored_error(exc)
        return None


def _insert_and_commit(
    connection: sqlite3.Connection,
    statements: list[tuple[str, list[tuple[object, ...]]]],
    *,
    begin: str = "BEGIN",
) -> None:
    """One transaction, every row or none."""
    if not connection.in_transaction:
        connection.execute(begin)
    try:
        for sql, parameters in statements:
            connection.executemany(sql, parameters)
        connection.commit()
    except BaseException:
        connection.rollback()
        raise
