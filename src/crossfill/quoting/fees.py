"""Bridge amounts: what the user deposits, what the recipient gets, and the fees in between.

All amounts are in the input currency's smallest unit (a bridge moves one asset, so input and
output units are the same). Every rounding goes in the service's favour by at most one unit.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from crossfill.quoting.money import ceil_div

BPS = 10_000


class TradeType(StrEnum):
    EXACT_INPUT = "EXACT_INPUT"
    EXACT_OUTPUT = "EXACT_OUTPUT"
    EXPECTED_OUTPUT = "EXPECTED_OUTPUT"


@dataclass(frozen=True)
class BridgeAmounts:
    amount_in: int
    amount_out: int
    relayer_gas: int
    relayer_service: int

    @property
    def relayer(self) -> int:
        return self.relayer_gas + self.relayer_service


class AmountTooLow(ValueError):
    """The amount does not cover the fees."""


def bridge_amounts(
    trade_type: TradeType, amount: int, *, fill_gas_cost: int, service_fee_bps: int
) -> BridgeAmounts:
    """Split a bridge into output and fees; `fill_gas_cost` is already in input units."""
    if trade_type is TradeType.EXACT_OUTPUT:
        amount_in = ceil_div((amount + fill_gas_cost) * BPS, BPS - service_fee_bps)
        amount_out = amount
    else:
        amount_in = amount
        service = ceil_div(amount * service_fee_bps, BPS)
        amount_out = amount - fill_gas_cost - service
        if amount_out <= 0:
            raise AmountTooLow(f"amount {amount} does not cover fees of {fill_gas_cost + service}")
    return BridgeAmounts(
        amount_in=amount_in,
        amount_out=amount_out,
        relayer_gas=fill_gas_cost,
        relayer_service=amount_in - amount_out - fill_gas_cost,
    )
