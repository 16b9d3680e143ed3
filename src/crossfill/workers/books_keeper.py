"""The books keeper, one per chain of every kind that keeps books: reconciles the chain's books
with the chain at a fixed interval (`app.books`), opening the accounts on its first tick, and
exports what it found as metrics; an unexplained difference is logged as a warning at every
tick it lasts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.app.books import export, reconcile_chain
from crossfill.kinds.books_port import BooksReader
from crossfill.loops import run_every
from crossfill.metrics import Metrics

# Seconds between reconciliations of a chain.
BOOKS_INTERVAL_SECONDS = 30.0


class BooksKeeper:
    def __init__(
        self,
        reader: BooksReader,
        sessions: async_sessionmaker[AsyncSession],
        *,
        now: Callable[[], datetime],
        metrics: Metrics,
        interval_seconds: float = BOOKS_INTERVAL_SECONDS,
    ) -> None:
        self.reader = reader
        self.sessions = sessions
        self.now = now
        self.metrics = metrics
        self.interval_seconds = interval_seconds
        self.name = f"books-{reader.chain_id}"

    async def run(self) -> None:
        await run_every(self.name, self.tick, self.interval_seconds)

    async def tick(self) -> None:
        found = await reconcile_chain(self.sessions, self.reader, now=self.now)
        export(self.metrics, self.reader, found)
