"""Prices and gas prices as the quote engine reads them, failing with the right 503s."""

from __future__ import annotations

from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig
from crossfill.quoting.errors import QuoteUnavailable
from crossfill.quoting.inputs import ChainView
from crossfill.quoting.prices import PriceBook, PriceMissing


class QuotePrices:
    """Prices looked up while planning, remembered for the quote's USD figures."""

    def __init__(self, book: PriceBook) -> None:
        self.book = book
        self.seen: dict[tuple[int, str], int] = {}

    def __call__(self, chain: ChainConfig, currency: CurrencyConfig) -> int:
        key = (chain.id, currency.address.lower())
        if key not in self.seen:
            try:
                self.seen[key] = self.book.price(chain.id, currency)
            except PriceMissing as exc:
                raise QuoteUnavailable("PRICE_FETCH_FAILED", str(exc)) from None
        return self.seen[key]


def fee_per_gas(view: ChainView) -> int:
    fee = view.state.fee_per_gas(view.config.fees.base_fee_buffer_percent)
    if fee is None:
        raise QuoteUnavailable(
            "SERVICE_UNAVAILABLE", f"no fresh gas price for chain {view.config.id} yet"
        )
    return fee
