"""The perps exchange port's two backends: the in-memory `FakeExchange`, and `PerpsClient`
against the devnet exchange's HTTP app (in-process, `tests/integration/perps`), each on a
clock the test holds, with a driver that funds accounts and moves the clock."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from crossfill.devnet.exchange.ledger import Leg
from crossfill.devnet.exchange.process import fund
from crossfill.devnet.exchange.tokens import (
    LEDGER_DECIMALS,
    PERPS_DEX,
    PERPS_USD_DECIMALS,
    SPOT_DEX,
    USDC,
    SpotToken,
)
from crossfill.kinds.perps.actions import parse_amount
from crossfill.kinds.perps.client import PerpsPort
from tests.integration.perps.conftest import DevnetExchange
from tests.unit.fake_exchange import FakeExchange
from tests.unit.worker_world import Clock


class ExchangeDriver(Protocol):
    """Arranges the exchange's state beside the port under test."""

    def now_ms(self) -> int:
        """The exchange's clock, in unix milliseconds."""

    def advance(self, ms: int) -> None:
        """The exchange's clock moves on."""

    def fund_usd(self, user: str, usd: str) -> None:
        """`user`'s perps account is credited `usd` (a decimal string)."""

    def fund_spot(self, user: str, token: SpotToken, amount: str) -> None:
        """`user`'s spot account is credited `amount` of `token`."""


@dataclass
class ExchangeBackend:
    port: PerpsPort
    driver: ExchangeDriver


@dataclass
class FakeExchangeDriver:
    exchange: FakeExchange
    clock: Clock

    def now_ms(self) -> int:
        return int(self.clock().timestamp() * 1000)

    def advance(self, ms: int) -> None:
        self.clock.advance(timedelta(milliseconds=ms))

    def fund_usd(self, user: str, usd: str) -> None:
        units = _ledger_units(usd, PERPS_USD_DECIMALS)
        self.exchange.ledger.credit(user, Leg(PERPS_DEX, USDC.name, units))

    def fund_spot(self, user: str, token: SpotToken, amount: str) -> None:
        units = _ledger_units(amount, token.wei_decimals)
        self.exchange.ledger.credit(user, Leg(SPOT_DEX, token.name, units))


@dataclass
class DevnetExchangeDriver:
    """Funds through the exchange's own `POST /devnet/fund`."""

    exchange: DevnetExchange
    api_url: str

    def now_ms(self) -> int:
        return self.exchange.clock.now_ms

    def advance(self, ms: int) -> None:
        self.exchange.clock.now_ms += ms

    def fund_usd(self, user: str, usd: str) -> None:
        fund(self.api_url, user, usd)

    def fund_spot(self, user: str, token: SpotToken, amount: str) -> None:
        fund(self.api_url, user, amount, token.name)


def _ledger_units(amount: str, decimals: int) -> int:
    units: int = parse_amount(amount, decimals) * 10 ** (LEDGER_DECIMALS - decimals)
    return units
