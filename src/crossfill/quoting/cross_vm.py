"""What quotes with a side off the EVM chains share, whichever kind that side is: a currency
at its quoted USD price, an EVM chain's side of such a route, and a transfer priced in USD."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from crossfill.config import ChainConfig, CurrencyConfig
from crossfill.quoting import inputs
from crossfill.quoting.errors import QuoteError

BPS = 10_000


@dataclass(frozen=True)
class QuotedCurrency:
    chain_id: int
    # The chain's protocol name (the order's chain id).
    chain_name: str
    address: str
    symbol: str
    name: str
    decimals: int
    is_native: bool
    logo_uri: str
    usd_price: Decimal

    def usd_micros(self, amount: int) -> int:
        """What `amount` smallest units are worth at this price, in micro-USD (rounded down)."""
        return int(Fraction(amount, 10**self.decimals) * Fraction(self.usd_price) * 10**6)


def quoted_evm_currency(
    chain: ChainConfig, address: str, field: str, price: Decimal | None
) -> QuotedCurrency:
    """A bridgeable currency of an EVM chain at its live USD price, or its configured one."""
    inputs.address(address, "UNSUPPORTED_CURRENCY", field)
    found = chain.currency(address)
    if found is None or not found.supports_bridging:
        raise QuoteError(
            "UNSUPPORTED_CURRENCY", f"{field} {address} is not supported on chain {chain.id}"
        )
    usd = price if price is not None else found.usd_price
    if usd is None:
        raise QuoteError("UNSUPPORTED_CURRENCY", f"{field} {address} has no price")
    return evm_currency(chain, found, usd)


def evm_currency(chain: ChainConfig, found: CurrencyConfig, usd: Decimal) -> QuotedCurrency:
    return QuotedCurrency(
        chain.id, chain.protocol_name, found.address.lower(), found.symbol, found.name,
        found.decimals, found.is_native, found.logo_uri, usd,
    )  # fmt: skip


def fixed_rate_output(
    amount_in: int, fee_bps: int, into: QuotedCurrency, out: QuotedCurrency
) -> tuple[int, int]:
    """(amount out, service fee in input units) of a transfer priced in USD: the input's
    value less the fee, in the output currency (rounded down)."""
    fee = amount_in * fee_bps // BPS
    value = Fraction(amount_in - fee, 10**into.decimals) * Fraction(into.usd_price)
    return int(value / Fraction(out.usd_price) * 10**out.decimals), fee
