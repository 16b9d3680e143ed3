"""An EVM chain's side of its books' reconciliation (`kinds.books_port`): its Depository and
the solver key in every currency it serves, and every other key that sent a journalled
transaction there in its gas currency, read at the chain's head; deposits may be unread while
the indexer's cursor is below the head the balances were read at."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.domain import books
from crossfill.kinds.books_port import BooksCurrency, Holding
from crossfill.kinds.evm.config import ChainConfig
from crossfill.kinds.evm.port import EvmPort
from crossfill.store import books as ledger
from crossfill.store import deposits
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId


def evm_holdings(config: ChainConfig, solver: str, keys: Sequence[str]) -> list[Holding]:
    """What is reconciled on the chain: its Depository and the solver key in every currency
    it serves (both take deposits: a v1 deposit is paid to the solver through the Receiver),
    and every other key that sent a journalled transaction there in its gas currency."""
    currencies = tuple(currency.address.lower() for currency in config.currencies)
    found = [
        Holding(books.DEPOSITORY, config.contracts.depository.lower(), currencies, True),
        Holding(books.key_account(solver), solver.lower(), currencies, True),
    ]
    found += [
        Holding(books.key_account(key), key, (NATIVE_EVM_ADDRESS,))
        for key in keys
        if key != solver.lower()
    ]
    return found


@dataclass(frozen=True)
class EvmBooks:
    """`kinds.books_port.BooksReader` of one EVM chain."""

    config: ChainConfig
    port: EvmPort
    solver: str

    @property
    def chain_id(self) -> ChainId:
        return self.config.id

    def currencies(self) -> Sequence[BooksCurrency]:
        return [
            BooksCurrency(currency.address.lower(), currency.symbol, currency.decimals)
            for currency in self.config.currencies
        ]

    async def holdings(self, session: AsyncSession) -> list[Holding]:
        return evm_holdings(self.config, self.solver, await ledger.senders(session, self.chain_id))

    async def read(self, holding: Holding) -> dict[str, int]:
        """At the chain's head: the native balance and each token's, in one call."""
        tokens = [currency for currency in holding.currencies if currency != NATIVE_EVM_ADDRESS]
        poll = await self.port.poll(holding.address, tokens, [])
        balances = dict(zip(tokens, poll.token_balances, strict=True))
        balances[NATIVE_EVM_ADDRESS] = poll.native_balance
        return {currency: balances[currency] for currency in holding.currencies}

    async def unread(self, sessions: async_sessionmaker[AsyncSession]) -> bool:
        """The head now (the balances were read at it or before) is past the block the indexer
        has read deposits through."""
        head = (await self.port.head()).number
        async with sessions() as session:
            indexed = await deposits.cursor(session, self.chain_id)
        return indexed is None or indexed.block_number < head

    async def payments_in_flight(self, session: AsyncSession) -> int:
        """Its payments are journalled transactions, counted by the core."""
        return 0
