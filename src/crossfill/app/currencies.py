"""The token list (POST /currencies/v2) and token prices, from the chain registry and its
price book. A currency's id is its symbol in lower case (`eth`, `usdc`): the same currency on
every chain shares it."""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.app import registry
from crossfill.config import Deployment
from crossfill.errors import ServiceUnavailable
from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig, evm_chains
from crossfill.quoting.prices import PriceMissing
from crossfill.runtime import Runtime


def currency_id(currency: CurrencyConfig) -> str:
    return currency.symbol.lower()


@dataclass(frozen=True)
class CurrencySearch:
    """The filters of POST /currencies/v2; every one given must match (None: any)."""

    chain_ids: frozenset[int] | None = None
    term: str | None = None
    address: str | None = None
    currency_id: str | None = None
    tokens: frozenset[tuple[int, str]] | None = None
    verified: bool | None = None
    featured_only: bool = False
    include_all_chains: bool = False
    deposit_address_only: bool = False
    limit: int = 20


@dataclass(frozen=True)
class Listed:
    chain: ChainConfig
    currency: CurrencyConfig


def _term_matches(term: str, currency: CurrencyConfig) -> bool:
    wanted = term.lower()
    if wanted.startswith("0x"):
        return currency.address.lower() == wanted
    return wanted in currency.symbol.lower() or wanted in currency.name.lower()


def _matches(found: Listed, search: CurrencySearch, *, chain_filter: bool) -> bool:
    chain, currency = found.chain, found.currency
    checks = (
        not chain_filter or search.chain_ids is None or chain.id in search.chain_ids,
        search.term is None or _term_matches(search.term, currency),
        search.address is None or currency.address.lower() == search.address,
        search.currency_id is None or currency_id(currency) == search.currency_id,
        search.tokens is None or (chain.id, currency.address.lower()) in search.tokens,
        search.verified is None or currency.verified == search.verified,
        not search.featured_only or currency.featured,
        # `depositAddressOnly`: currencies of chains with a deposit-address factory.
        not search.deposit_address_only or chain.contracts.deposit_address_factory is not None,
    )
    return all(checks)


def search_currencies(deployment: Deployment, search: CurrencySearch) -> list[Listed]:
    """The registry's currencies that match, in registry order, at most `limit`."""
    every = [
        Listed(chain, currency) for chain in evm_chains(deployment) for currency in chain.currencies
    ]
    found = [listed for listed in every if _matches(listed, search, chain_filter=True)]
    if search.include_all_chains:
        ids = {currency_id(listed.currency) for listed in found}
        found = [listed for listed in every if currency_id(listed.currency) in ids]
    return found[: search.limit]


def token_price_micros(runtime: Runtime, chain_id: int, address: str) -> int:
    """A currency's USD price per whole unit (micro-USD), as quotes price it now."""
    chain = registry.chain(runtime, chain_id)
    currency = registry.currency(chain, address, "address")
    try:
        return registry.price_book(runtime).price(chain.id, currency)
    except PriceMissing as exc:
        raise ServiceUnavailable(str(exc), error_code="PRICE_FETCH_FAILED") from None
