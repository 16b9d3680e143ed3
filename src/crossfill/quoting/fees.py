"""How an input amount splits into fees and the part that is bridged or swapped.

All amounts are in the input currency's smallest unit. The user's side is rounded once: the
percentage fees (service + app) are rounded up, by less than one unit in total. Each app
recipient's share is rounded down and the remainder stays with the service, so every unit the
user pays is accounted for: `amount_in + sponsored == relayer_gas + relayer_service + app_total +
leg_input`, where `sponsored` is what a sponsor pays in the user's place (`sponsorship.py`).

A fixed-rate quote (`fixedRate`) charges its basis points as the whole of the service's fee,
the relayer gas included (`gas_included`): the spread does not move with gas prices.
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


class AmountTooLow(ValueError):
    """The amount does not cover the fees."""


@dataclass(frozen=True)
class FeeRates:
    """The percentage and fixed fees of one quote; `flat` and gas are in input units."""

    service_bps: int
    flat: int = 0
    app_bps: tuple[int, ...] = ()
    # The service's bps already pay the relayer gas (a fixed rate), rather than adding to it.
    gas_included: bool = False

    def __post_init__(self) -> None:
        if self.percent_bps >= BPS:
            raise AmountTooLow("fees of 100% or more leave nothing to deliver")

    @property
    def percent_bps(self) -> int:
        return self.service_bps + sum(self.app_bps)


@dataclass(frozen=True)
class Split:
    amount_in: int
    relayer_gas: int
    relayer_service: int
    app: tuple[int, ...]
    # What reaches the bridge or swap leg after fees.
    leg_input: int
    # Fees a sponsor pays instead of the user: amount_in + sponsored covers every fee.
    sponsored: int = 0

    @property
    def app_total(self) -> int:
        return sum(self.app)

    @property
    def relayer(self) -> int:
        return self.relayer_gas + self.relayer_service


def _app_shares(amount_in: int, rates: FeeRates) -> tuple[int, ...]:
    return tuple(amount_in * bps // BPS for bps in rates.app_bps)


def service_fee(amount_in: int, rates: FeeRates) -> int:
    """The service's percentage and flat fee on `amount_in` (gas not counted)."""
    percent_fees = ceil_div(amount_in * rates.percent_bps, BPS)
    return percent_fees - sum(_app_shares(amount_in, rates)) + rates.flat


def split_input(amount_in: int, *, gas: int, rates: FeeRates) -> Split:
    """EXACT_INPUT: fees come out of `amount_in`; the rest goes to the leg."""
    app = _app_shares(amount_in, rates)
    service = service_fee(amount_in, rates) - (gas if rates.gas_included else 0)
    if service < 0:
        raise AmountTooLow(f"fixedRate's fee {service + gas} does not cover gas of {gas}")
    leg_input = amount_in - gas - service - sum(app)
    if leg_input <= 0:
        raise AmountTooLow(f"amount {amount_in} does not cover fees of {amount_in - leg_input}")
    return Split(amount_in, gas, service, app, leg_input)


def split_for_leg_input(leg_input: int, *, gas: int, rates: FeeRates) -> Split:
    """EXACT_OUTPUT: the least input whose fees leave exactly `leg_input` for the leg."""
    on_top = 0 if rates.gas_included else gas
    amount_in = ceil_div((leg_input + on_top + rates.flat) * BPS, BPS - rates.percent_bps)
    app = _app_shares(amount_in, rates)
    service = amount_in - gas - sum(app) - leg_input
    if service < 0:
        raise AmountTooLow(f"fixedRate's fee {service + gas} does not cover gas of {gas}")
    return Split(amount_in, gas, service, app, leg_input)


def minimum_after_slippage(amount: int, slippage_bps: int) -> int:
    """The least output accepted when `amount` is expected (rounded down)."""
    return amount * (BPS - slippage_bps) // BPS


def with_slippage_headroom(amount: int, slippage_bps: int) -> int:
    """An input large enough to buy a target even after prices move by `slippage_bps`."""
    return ceil_div(amount * (BPS + slippage_bps), BPS)
