"""USD prices per currency, from the chains' snapshots: fixed, AMM-pool derived, or a feed.

A price is micro-USD per whole unit (an integer). Pool prices read a pool pairing the currency
with a fixed-price one (USDC on the devnet) and fall back to the configured price; feed prices
never fall back: a missing or stale round means no price, and quotes answer 503.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig
from crossfill.kinds.evm.state import ChainState
from crossfill.quoting.money import (
    MICROS_PER_USD,
    convert_ceil,
    to_usd_micros,
    unit,
    usd_micros_per_unit,
)


class PriceMissing(LookupError):
    """No usable price for a currency right now."""


def pool_token(chain: ChainConfig, currency: CurrencyConfig) -> str:
    """The token that stands for a currency in AMM pools (wrapped native for the native coin)."""
    if currency.is_native:
        if chain.contracts.weth is None:
            return currency.address.lower()
        return chain.contracts.weth.lower()
    return currency.address.lower()


@dataclass(frozen=True)
class PriceBook:
    chains: Mapping[int, tuple[ChainConfig, ChainState]]
    now_seconds: int

    def price(self, chain_id: int, currency: CurrencyConfig) -> int:
        config, state = self.chains[chain_id]
        if currency.price_source == "feed":
            return self._feed_price(state, currency)
        if currency.price_source == "pool":
            derived = self._pool_price(config, state, currency)
            if derived is not None:
                return derived
        if currency.usd_price is None:
            raise PriceMissing(f"no price for {currency.symbol} on chain {chain_id}")
        return usd_micros_per_unit(currency.usd_price)

    def _feed_price(self, state: ChainState, currency: CurrencyConfig) -> int:
        found = state.market.feed_rounds.get(currency.address.lower())
        if found is None or found.answer <= 0:
            raise PriceMissing(f"price feed of {currency.symbol} has no answer")
        age = self.now_seconds - found.updated_at
        if age > currency.price_feed_max_age_seconds:
            raise PriceMissing(f"price feed of {currency.symbol} is stale ({age} s old)")
        return found.answer * MICROS_PER_USD // unit(found.decimals)

    def _pool_price(
        self, config: ChainConfig, state: ChainState, currency: CurrencyConfig
    ) -> int | None:
        """Against the deepest pool pairing it with a fixed-price currency; worked out once
        per market snapshot (the chain's configuration does not change under it)."""
        key = (pool_token(config, currency), currency.decimals)
        known = state.market.pool_prices
        if key not in known:
            known[key] = _deepest_pool_price(config, state, currency)
        return known[key]


def _deepest_pool_price(
    config: ChainConfig, state: ChainState, currency: CurrencyConfig
) -> int | None:
    """Against the deepest pool pairing it with a fixed-price currency."""
    token = pool_token(config, currency)
    anchors = {
        c.address.lower(): c
        for c in config.erc20_currencies
        if c.price_source == "fixed" and c.usd_price is not None
    }
    best: tuple[int, int] | None = None  # (anchor reserve, price)
    for pool in config.pools:
        reserves = state.market.reserves.get(pool.address.lower())
        tokens = (pool.token0.lower(), pool.token1.lower())
        if reserves is None or token not in tokens:
            continue
        other = tokens[1] if tokens[0] == token else tokens[0]
        anchor = anchors.get(other)
        if anchor is None or anchor.usd_price is None:
            continue
        own_reserve, anchor_reserve = reserves if tokens[0] == token else reserves[::-1]
        if own_reserve == 0 or anchor_reserve == 0:
            continue
        price = (
            anchor_reserve
            * usd_micros_per_unit(anchor.usd_price)
            * unit(currency.decimals)
            // (own_reserve * unit(anchor.decimals))
        )
        if best is None or anchor_reserve > best[0]:
            best = (anchor_reserve, price)
    return None if best is None else best[1]


def price_on_chain(
    config: ChainConfig, state: ChainState, currency: CurrencyConfig, now_seconds: int
) -> int | None:
    """One currency's price as quotes see it (fixed, pool or feed); None when there is none."""
    try:
        return PriceBook({config.id: (config, state)}, now_seconds).price(config.id, currency)
    except PriceMissing:
        return None


def value_on_chain(
    config: ChainConfig, state: ChainState, currency_address: str, amount: int, now_seconds: int
) -> int | None:
    """`amount` of a currency in micro-USD at the prices quotes use; None for a currency that
    is not configured or has no price right now."""
    currency = config.currency(currency_address)
    if currency is None:
        return None
    price = price_on_chain(config, state, currency, now_seconds)
    return None if price is None else to_usd_micros(amount, currency.decimals, price)


def gas_cost_on_chain(
    config: ChainConfig, state: ChainState, currency_address: str, gas: int, now_seconds: int
) -> int | None:
    """What `gas` costs at the chain's fee per gas now, in units of a currency (rounded up) at
    the prices quotes use; None while there is no gas price, or no price for a currency."""
    fee = state.fee_per_gas(config.fees.base_fee_buffer_percent)
    currency = config.currency(currency_address)
    if fee is None or currency is None:
        return None
    native = config.native_currency
    if currency.address.lower() == native.address.lower():
        return gas * fee
    native_price = price_on_chain(config, state, native, now_seconds)
    currency_price = price_on_chain(config, state, currency, now_seconds)
    if native_price is None or currency_price is None:
        return None
    return convert_ceil(
        gas * fee,
        from_decimals=native.decimals,
        from_price=native_price,
        to_decimals=currency.decimals,
        to_price=currency_price,
    )
