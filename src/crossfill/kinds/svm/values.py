"""What moved on the SVM chain, valued at the configured prices (pure): an amount of a
currency, and a transaction's fee in lamports, in micro-USD (None without a price)."""

from __future__ import annotations

from crossfill.domain.record_facts import Moved
from crossfill.kinds.svm.config import SvmChainConfig
from crossfill.quoting.money import to_usd_micros, usd_micros_per_unit


def usd_value(config: SvmChainConfig, currency: str, amount: int) -> int | None:
    """`amount` of `currency` in micro-USD; None for a currency not configured or unpriced."""
    configured = config.currency(currency)
    if configured is None or configured.usd_price is None:
        return None
    return to_usd_micros(amount, configured.decimals, usd_micros_per_unit(configured.usd_price))


def moved(config: SvmChainConfig, currency: str, amount: int) -> Moved:
    """What a transaction moved, with its value."""
    return Moved(currency, amount, usd_value(config, currency, amount))


def fee_value(config: SvmChainConfig, lamports: int) -> int | None:
    """A transaction's fee in micro-USD."""
    return usd_value(config, config.native_currency.address, lamports)
