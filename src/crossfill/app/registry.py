"""The chain registry and its price book, as answers outside a quote read them: a chain or a
currency by id (a 400 naming the field when it is not served here) and USD values."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from crossfill.errors import BadRequest
from crossfill.kinds.evm.chain import evm_chains
from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig, evm_chain
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.money import to_usd_micros
from crossfill.quoting.prices import PriceBook, PriceMissing
from crossfill.runtime import Runtime


def chain(runtime: Runtime, chain_id: int, field: str = "chainId") -> ChainConfig:
    found = evm_chain(runtime.deployment, chain_id)
    if found is None:
        raise BadRequest(
            f"{field}: chain {chain_id} is not supported", error_code="UNSUPPORTED_CHAIN"
        )
    return found


def currency(chain_config: ChainConfig, address: str, field: str = "currency") -> CurrencyConfig:
    found = chain_config.currency(address)
    if found is None:
        raise BadRequest(
            f"{field}: {address} is not a currency of chain {chain_config.id}",
            error_code="UNSUPPORTED_CURRENCY",
        )
    return found


def require_enabled(runtime: Runtime, *chain_ids: int) -> None:
    """A quote touching a disabled chain (configured, or the operator's override) is refused."""
    for chain_id in chain_ids:
        if runtime.chain_disabled(chain_id):
            raise QuoteError("CHAIN_DISABLED", f"chain {chain_id} is disabled")


def live_usd_price(
    runtime: Runtime, chain_config: ChainConfig, currency: CurrencyConfig | None
) -> Decimal | None:
    """The currency's live USD price, when the service has one (None for no currency)."""
    if currency is None:
        return None
    try:
        return Decimal(price_book(runtime).price(chain_config.id, currency)) / 10**6
    except PriceMissing:
        return None


def fee_per_gas(runtime: Runtime, chain_config: ChainConfig) -> int | None:
    """The EVM chain's fee per gas now, with its configured buffer; None until its state has
    one."""
    state = evm_chains(runtime)[chain_config.id].state
    return state.fee_per_gas(chain_config.fees.base_fee_buffer_percent)


def price_book(runtime: Runtime) -> PriceBook:
    """Every chain's prices as a quote made now would see them."""
    return PriceBook(
        {chain_id: (chain.config, chain.state) for chain_id, chain in evm_chains(runtime).items()},
        now_seconds=int(datetime.now(UTC).timestamp()),
    )


def usd_micros(
    book: PriceBook, chain_config: ChainConfig, currency_config: CurrencyConfig, amount: int
) -> int | None:
    """`amount`'s value now; None while the currency has no price."""
    try:
        price = book.price(chain_config.id, currency_config)
    except PriceMissing:
        return None
    return to_usd_micros(amount, currency_config.decimals, price)
