"""Group commit: rows from concurrent callers written in one transaction.

Every quote stores its request row before it is answered. One transaction per row made the
insert the slowest part of a quote under load (SQLite has one writer, and each statement is a
round trip to the driver's thread); here a caller's row joins the batch being collected while
the previous one commits, and each caller returns once the transaction holding its row has
committed, so an answered quote always has its row.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.store.tables import Base


@dataclass
class GroupCommit:
    sessions: async_sessionmaker[AsyncSession]
    _pending: list[tuple[Base, asyncio.Future[None]]] = field(default_factory=list)
    _writer: asyncio.Task[None] | None = None

    async def add(self, row: Base) -> None:
        """Return once `row` (with what it cascades to) is committed; raise what its
        transaction raised."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((row, done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_pending(), name="group-commit")
        await asyncio.shield(done)

    async def _write_pending(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await self._commit([row for row, _ in batch])
            except Exception as exc:
                if len(batch) == 1:
                    _settle(batch[0][1], exc)
                else:
                    await self._commit_one_by_one(batch)
            else:
                for _, done in batch:
                    _settle(done, None)

    async def _commit_one_by_one(self, batch: list[tuple[Base, asyncio.Future[None]]]) -> None:
        """After a failed batch: one row's failure must not fail the others."""
        for row, done in batch:
            try:
                await self._commit([row])
            except Exception as exc:
                _settle(done, exc)
            else:
                _settle(done, None)

    async def _commit(self, rows: list[Base]) -> None:
        async with self.sessions() as session, session.begin():
            session.add_all(rows)


def _settle(done: asyncio.Future[None], error: Exception | None) -> None:
    if done.done():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)
