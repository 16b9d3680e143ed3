"""Integer money: unit conversion through USD prices, formatting. No floats anywhere."""

from __future__ import annotations

from decimal import Decimal

MICROS_PER_USD = 10**6


def ceil_div(numerator: int, denominator: int) -> int:
    quotient: int = -(-numerator // denominator)
    return quotient


# 10**0 .. 10**77 (a uint256 has 78 digits): worked out once, as every amount on a quote is
# converted or formatted with one of them, about forty times per quote.
_UNITS: tuple[int, ...] = tuple(int(10**decimals) for decimals in range(78))


def unit(decimals: int) -> int:
    """10**decimals, typed as the integer it is."""
    if 0 <= decimals < len(_UNITS):
        return _UNITS[decimals]
    return int(10**decimals)


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


def format_units(amount: int, decimals: int) -> str:
    """1500000 with 6 decimals -> "1.5"; integers stay plain."""
    if amount == 0:  # most fees of a quote are
        return "0"
    sign = "-" if amount < 0 else ""
    whole, fraction = divmod(abs(amount), unit(decimals))
    if decimals == 0 or fraction == 0:
        return f"{sign}{whole}"
    digits = str(fraction).rjust(decimals, "0").rstrip("0")
    return f"{sign}{whole}.{digits}"


def format_usd(usd_micros: int) -> str:
    return format_units(usd_micros, 6)


RATE_DECIMALS = 18


def format_rate(amount_in: int, decimals_in: int, amount_out: int, decimals_out: int) -> str:
    """Output per whole unit of input, to 18 decimals (rounded down)."""
    scaled = (
        amount_out * unit(decimals_in) * unit(RATE_DECIMALS) // (amount_in * unit(decimals_out))
    )
    return format_units(scaled, RATE_DECIMALS)
