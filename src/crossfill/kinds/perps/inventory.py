"""The solver's balances on the perps exchange, for quotes: read on demand, at most once per
`poll_interval_seconds` per process and kind of balance, and shared by the quotes asking
meanwhile.

An exchange has no heads to follow, and a poller would spend the exchange's request weight
while no one quotes (the public API allows an IP 1,200 a minute; each read below weighs 2), so
a quote reads the balances when the last read is older than the interval, holding a lock so
that a burst of quotes makes one read.

Each read is recorded in the solver's reserved inventory there (`kinds.timed_inventory`): what
a new order may take is that balance less what the orders in flight to the exchange commit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal

from crossfill.kinds.perps.client import PerpsPort
from crossfill.kinds.perps.config import (
    PERPS_USDC_ADDRESS,
    PERPS_USDC_DECIMALS,
    PerpsExchangeConfig,
)
from crossfill.kinds.port import InventoryCurrency
from crossfill.kinds.timed_inventory import TimedInventory


@dataclass(frozen=True)
class _Read:
    at: float
    # Currency address on the exchange -> the solver's balance, in its smallest units.
    balances: dict[str, int]


def _units(amount: Decimal, decimals: int) -> int:
    return int((amount * 10**decimals).to_integral_value(rounding=ROUND_FLOOR))


async def perps_usdc_of(client: PerpsPort, account: str) -> int:
    """What `account` can withdraw of its perps USDC (the clearinghouse's `withdrawable`), in
    its smallest units. Raises the port's `ChainError` when the exchange does not answer."""
    state = await client.clearinghouse_state(account)
    return _units(state.withdrawable, PERPS_USDC_DECIMALS)


def _checked_currencies(config: PerpsExchangeConfig) -> tuple[InventoryCurrency, ...]:
    """The currencies whose balance the exchange's reads show: perps USDC and the spot DEX's."""
    usdc = InventoryCurrency(PERPS_USDC_ADDRESS, "USDC", PERPS_USDC_DECIMALS)
    spot = (
        InventoryCurrency(c.address, c.symbol, c.decimals)
        for c in config.spot_currencies
        if not c.dex
    )
    return (usdc, *spot)


class PerpsInventory(TimedInventory):
    """What the solver's exchange account can pay, by currency address on the exchange."""

    def __init__(
        self, client: PerpsPort, config: PerpsExchangeConfig, clock: Callable[[], float]
    ) -> None:
        super().__init__(_checked_currencies(config), clock, key=str.lower)
        self._client = client
        self._config = config
        self._clock = clock
        self._reads: dict[str, _Read] = {}
        self._lock = asyncio.Lock()

    async def balance(self, currency: str) -> int | None:
        """The solver's balance of `currency` (perps USDC or a spot token of the spot DEX), or
        None for a currency whose balance this exchange's reads do not show (a third-party
        DEX's). Raises the port's `ChainError` when the exchange does not answer."""
        wanted = currency.lower()
        if wanted == PERPS_USDC_ADDRESS:
            kind = "perps"
        else:
            spot = self._config.spot_currency(wanted)
            if spot is None or spot.dex:
                return None
            kind = "spot"
        read = await self._fresh(kind)
        return read.balances.get(wanted, 0)

    async def _fresh(self, kind: str) -> _Read:
        async with self._lock:
            read = self._reads.get(kind)
            interval = self._config.poll_interval_seconds
            if read is None or self._clock() - read.at >= interval:
                started = self._clock()
                read = _Read(started, await self._read(kind))
                self._reads[kind] = read
                self.read(read.balances, started)
            return read

    async def refresh_balances(self) -> None:
        """Every balance the reads show, read at most `poll_interval_seconds` ago."""
        await self._fresh("perps")
        if any(not spot.dex for spot in self._config.spot_currencies):
            await self._fresh("spot")

    async def free(self, currency: str) -> int | None:
        """What a new order may take of `currency`, from a balance read at most
        `poll_interval_seconds` ago (None: a currency whose balance the reads do not show)."""
        if await self.balance(currency) is None:
            return None
        return self.free_now(self.key(currency))

    async def _read(self, kind: str) -> dict[str, int]:
        account = self._config.solver.address
        if kind == "perps":
            return {PERPS_USDC_ADDRESS: await perps_usdc_of(self._client, account)}
        held = {b.coin: b.total - b.hold for b in await self._client.spot_balances(account)}
        return {
            spot.address: _units(held.get(spot.exchange_name, Decimal(0)), spot.decimals)
            for spot in self._config.spot_currencies
            if not spot.dex
        }
