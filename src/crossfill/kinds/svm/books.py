"""The SVM chain's side of its books' reconciliation (`kinds.books_port`): the solver's vault
(its own account, which deposits are paid into and fills and refunds paid from, and which pays
every fee) in SOL and each served mint; deposits may be unread while an address the indexer
watches has a transaction newer than its cursor."""

from __future__ import annotations

from dataclasses import dataclass

from solders.pubkey import Pubkey
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.kinds.account_books import SolverAccountBooks
from crossfill.kinds.books_port import BooksCurrency, Holding
from crossfill.kinds.svm import programs
from crossfill.kinds.svm.client import SvmPort
from crossfill.kinds.svm.config import SvmChainConfig
from crossfill.kinds.svm.indexer import cursor_role
from crossfill.kinds.svm.payments import SVM_PAYMENTS
from crossfill.store.tables import ChainCursor


def watched_accounts(config: SvmChainConfig) -> list[Pubkey]:
    """The vault and its associated token accounts of the served mints: where deposits land."""
    vault = Pubkey.from_string(config.solver.address)
    return [vault] + [
        programs.token_account(vault, Pubkey.from_string(token.address))
        for token in config.token_currencies
    ]


def unread_past(newest_slot: int | None, cursor: int | None) -> bool:
    """Whether an address's newest transaction (its slot; None: it has none) is past what the
    indexer has settled of it (its cursor trails the slot it read by one; None: not read
    yet)."""
    if newest_slot is None:
        return False
    return cursor is None or newest_slot > cursor + 1


@dataclass(frozen=True)
class SvmBooks(SolverAccountBooks[SvmChainConfig, SvmPort]):
    """`kinds.books_port.BooksReader` of the SVM chain."""

    journal = SVM_PAYMENTS

    @property
    def solver(self) -> str:
        return self.config.solver.address

    def currencies(self) -> list[BooksCurrency]:
        return [
            BooksCurrency(currency.address.lower(), currency.symbol, currency.decimals)
            for currency in self.config.currencies
        ]

    async def read(self, holding: Holding) -> dict[str, int]:
        """The vault's lamports, and its associated token account's balance of each mint."""
        vault = Pubkey.from_string(self.solver)
        found = {}
        for currency in self.config.currencies:
            if currency.is_native:
                found[currency.address.lower()] = await self.port.balance(vault)
            else:
                mint = Pubkey.from_string(currency.address)
                found[currency.address.lower()] = await self.port.token_balance(vault, mint)
        return {currency: found[currency] for currency in holding.currencies}

    async def unread(self, sessions: async_sessionmaker[AsyncSession]) -> bool:
        """An address deposits land in has a transaction newer than the indexer's cursor."""
        watched = watched_accounts(self.config)
        listings = await self.port.signatures_for_each(
            [(address, None) for address in watched], limit=1
        )
        async with sessions() as session:
            for address, listed in zip(watched, listings, strict=True):
                cursor = await session.get(ChainCursor, (self.chain_id, cursor_role(address)))
                newest = max((int(entry["slot"]) for entry in listed), default=None)
                if unread_past(newest, None if cursor is None else cursor.block_number):
                    return True
        return False
