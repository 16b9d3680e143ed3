"""Group commit: rows from concurrent callers written in one transaction.

Every quote stores its request row before it is answered. One transaction per row made the
insert the slowest part of a quote under load (SQLite has one writer, and each statement is a
round trip to the driver's thread); here a caller's rows join the batch being collected while
the previous one commits, and each caller returns once the transaction holding its rows has
committed, so an answered quote always has its row.

Rows are column values, written with one multi-row INSERT per table (parents first): the ORM's
unit of work cost four times as much CPU per row, and new rows need none of it.

On PostgreSQL the writer keeps one connection of its own: a pool checkout with its liveness
ping cost about a third of a one-row commit, and at moderate load most commits hold one row.
If that connection has gone (the server restarted), the batch is written once more on a new
one. SQLite's pool has a single connection, which other work needs too: there the writer
checks it out per batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Table, insert
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from crossfill.store.tables import Base

Row = tuple[Table, Mapping[str, Any]]
_TABLE_ORDER = {table.name: position for position, table in enumerate(Base.metadata.sorted_tables)}


@dataclass
class GroupCommit:
    engine: AsyncEngine
    _pending: list[tuple[Sequence[Row], asyncio.Future[None]]] = field(default_factory=list)
    _writer: asyncio.Task[None] | None = None
    _connection: AsyncConnection | None = None

    async def add(self, rows: Sequence[Row]) -> None:
        """Return once `rows` are committed; raise what their transaction raised."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((rows, done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_pending(), name="group-commit")
        await asyncio.shield(done)

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
        by_table: dict[Table, list[Mapping[str, Any]]] = {}
        for table, values in rows:
            by_table.setdefault(table, []).append(values)
        if self.engine.dialect.name == "sqlite":
            async with self.engine.begin() as connection:
                await _insert(connection, by_table)
            return
        try:
            await _insert_in_transaction(await self._held(), by_table)
        except DBAPIError as exc:
            await self.close()
            if not exc.connection_invalidated:
                raise
            await _insert_in_transaction(await self._held(), by_table)

    async def _held(self) -> AsyncConnection:
        if self._connection is None or self._connection.closed:
            self._connection = await self.engine.connect()
        return self._connection

    async def close(self) -> None:
        """Give back the writer's own connection (before the engine is disposed)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.close()


async def _insert_in_transaction(
    connection: AsyncConnection, by_table: dict[Table, list[Mapping[str, Any]]]
) -> None:
    async with connection.begin():
        await _insert(connection, by_table)


async def _insert(
    connection: AsyncConnection, by_table: dict[Table, list[Mapping[str, Any]]]
) -> None:
    for table in sorted(by_table, key=lambda table: _TABLE_ORDER[table.name]):
        await connection.execute(insert(table), by_table[table])


def _settle(done: asyncio.Future[None], error: Exception | None) -> None:
    if done.done():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)
