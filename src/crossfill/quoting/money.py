"""Integer money: unit conversion through USD prices. No floats anywhere.

Units, micro-USD and their formatting are the domain's (`domain.money`); named here too, for
pricing code that uses them beside the conversions."""

from __future__ import annotations

from decimal import Decimal

from crossfill.domain.money import MICROS_PER_USD as MICROS_PER_USD
from crossfill.domain.money import RATE_DECIMALS as RATE_DECIMALS
from crossfill.domain.money import format_rate as format_rate
from crossfill.domain.money import format_units as format_units
from crossfill.domain.money import format_usd as format_usd
from crossfill.domain.money import unit as unit


def ceil_div(numerator: int, denominator: int) -> int:
    quotient: int = -(-numerator // denominator)
    return quotient


def usd_micros_per_unit(usd_price: Decimal) -> int:
    """A whole unit's price in micro-USD (prices carry at most 6 decimals)."""
    return int(usd_price * MICROS_PER_USD)


def to_usd_micros(amount: int, decimals: int, price_micros: int) -> int:
    """Value of `amount` smallest units, rounded down."""
    return amount * price_micros // unit(decimals)


def from_usd_micros_ceil(usd_micros: int, decimals: int, price_micros: int) -> int:
    """Smallest units worth at least `usd_micros` (rounded up: in the service's favour)."""
    return ceil_div(usd_micros * unit(decimals), price_micros)


def convert_ceil(
    amount: int, *, from_decimals: int, from_price: int, to_decimals: int, to_price: int
) -> int:
    """`amount` of one currency in units of another, rounded up, without an intermediate cut."""
    return ceil_div(amount * from_price * unit(to_decimals), to_price * unit(from_decimals))
