"""The perps exchange's side of its books' reconciliation (`kinds.books_port`): the solver's
exchange account (which transfers in are paid into and fills and refunds paid from), in perps
USDC (its account value) and each served token of the spot DEX (its total, held or not; a
third-party DEX's balance no read shows, so those are not reconciled); transfers in may be
unread while its ledger has entries past the watcher's cursor."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.kinds.account_books import SolverAccountBooks
from crossfill.kinds.books_port import BooksCurrency, Holding
from crossfill.kinds.perps.client import PerpsPort
from crossfill.kinds.perps.config import (
    PERPS_USDC_ADDRESS,
    PERPS_USDC_DECIMALS,
    PerpsExchangeConfig,
)
from crossfill.kinds.perps.payments import PERPS_PAYMENTS
from crossfill.kinds.perps.watcher import ROLE
from crossfill.store.tables import ChainCursor


def exact_units(amount: Decimal, decimals: int) -> int:
    """An exchange amount in smallest units; it never carries more decimals than those."""
    return int((amount * 10**decimals).to_integral_value())


@dataclass(frozen=True)
class PerpsBooks(SolverAccountBooks[PerpsExchangeConfig, PerpsPort]):
    """`kinds.books_port.BooksReader` of the perps exchange."""

    journal = PERPS_PAYMENTS

    @property
    def solver(self) -> str:
        return self.config.solver.address.lower()

    def currencies(self) -> list[BooksCurrency]:
        return [
            BooksCurrency(PERPS_USDC_ADDRESS, "USDC", PERPS_USDC_DECIMALS),
            *(
                BooksCurrency(spot.address.lower(), spot.symbol, spot.decimals)
                for spot in self.config.spot_currencies
                if not spot.dex
            ),
        ]

    async def read(self, holding: Holding) -> dict[str, int]:
        state = await self.port.clearinghouse_state(self.solver)
        found = {PERPS_USDC_ADDRESS: exact_units(state.account_value, PERPS_USDC_DECIMALS)}
        if len(holding.currencies) > 1:
            held = {b.coin: b.total for b in await self.port.spot_balances(self.solver)}
            for spot in self.config.spot_currencies:
                if not spot.dex:
                    total = held.get(spot.exchange_name, Decimal(0))
                    found[spot.address.lower()] = exact_units(total, spot.decimals)
        return {currency: found[currency] for currency in holding.currencies}

    async def unread(self, sessions: async_sessionmaker[AsyncSession]) -> bool:
        """The account's ledger has entries after the newest the watcher has read."""
        async with sessions() as session:
            cursor = await session.get(ChainCursor, (self.chain_id, ROLE))
        if cursor is None or cursor.block_hash != self.solver:
            return True
        later = await self.port.ledger_updates(self.solver, start_ms=cursor.block_number + 1)
        return bool(later)
