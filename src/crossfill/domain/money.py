"""Integer money: amounts in a currency's smallest unit, values in micro-USD, and how both are
written out. No floats anywhere."""

from __future__ import annotations

MICROS_PER_USD = 10**6

# 10**0 .. 10**77 (a uint256 has 78 digits): worked out once, as every amount on a quote is
# converted or formatted with one of them, about forty times per quote.
_UNITS: tuple[int, ...] = tuple(int(10**decimals) for decimals in range(78))


def unit(decimals: int) -> int:
    """10**decimals, typed as the integer it is."""
    if 0 <= decimals < len(_UNITS):
        return _UNITS[decimals]
    return int(10**decimals)


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
