"""What the books ask of a chain of any kind to reconcile it (`app.books`): the accounts that
hold money there, each one's balances read from the chain (or the exchange), whether deposits
may have reached it that its indexer has not read yet, and its payer's payments in flight.

Each kind answers through its `KindChain.books()` (`kinds.port`); the reconciliation itself,
its causes and its report are the core's, alike for every kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.types import ChainId


@dataclass(frozen=True)
class BooksCurrency:
    """A currency of the chain as the books key it (`ledger_entries.currency`, lower-cased),
    its symbol and its decimals."""

    key: str
    symbol: str
    decimals: int


@dataclass(frozen=True)
class Holding:
    """One account of the books that holds money on the chain: its account in the books, its
    address there (as the chain writes it), the currencies it is reconciled in (as the books
    key them), and whether deposits are paid to it."""

    account: str
    address: str
    currencies: tuple[str, ...]
    takes_deposits: bool = False


class BooksReader(Protocol):
    """A chain's side of its reconciliation."""

    @property
    def chain_id(self) -> ChainId: ...

    @property
    def solver(self) -> str:
        """The address of the solver's account there (its key in the books)."""

    def currencies(self) -> Sequence[BooksCurrency]:
        """The currencies the chain serves."""

    async def holdings(self, session: AsyncSession) -> list[Holding]:
        """The accounts reconciled on the chain."""

    async def read(self, holding: Holding) -> dict[str, int]:
        """The holding's balance in each of its currencies (by the books' key), smallest
        units. Raises `ChainError` when the chain does not answer (the caller retries)."""

    async def unread(self, sessions: async_sessionmaker[AsyncSession]) -> bool:
        """Asked once the balances were read: whether the chain may hold deposits its indexer
        has not read yet (so more on chain than in the books is theirs, until it has).
        Raises `ChainError` when the chain does not answer."""

    async def payments_in_flight(self, session: AsyncSession) -> int:
        """How many payments of the kind's own payer from the solver's account are sent and
        not yet settled (0 for a kind whose payments are journalled transactions)."""
