"""What a quote does between the fees and the output: the route kind and its last leg."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from crossfill.contracts.router_calls import SwapPlan
from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig
from crossfill.kinds.evm.state import ChainState
from crossfill.quoting.amm import Pool, Route, candidate_routes
from crossfill.quoting.prices import pool_token


class RouteKind(StrEnum):
    BRIDGE = "bridge"
    CROSSCHAIN_SWAP = "crosschain-swap"
    SAME_CHAIN_SWAP = "same-chain-swap"
    WRAP = "wrap"
    UNWRAP = "unwrap"
    SEND = "send"

    @property
    def operation(self) -> str:
        """`details.operation`."""
        return _NAMES[self][0]

    @property
    def request_type(self) -> str:
        """The record's `requestType`."""
        return _NAMES[self][1]

    @property
    def same_chain(self) -> bool:
        return self not in _CROSS_CHAIN


_CROSS_CHAIN = frozenset({RouteKind.BRIDGE, RouteKind.CROSSCHAIN_SWAP})
# Route kind -> (`details.operation`, `requestType`).
_NAMES = {
    RouteKind.BRIDGE: ("bridge", "Bridge"),
    RouteKind.CROSSCHAIN_SWAP: ("swap", "Crosschain Swap"),
    RouteKind.SAME_CHAIN_SWAP: ("swap", "Same-chain Swap"),
    RouteKind.WRAP: ("wrap", "Wrap"),
    RouteKind.UNWRAP: ("unwrap", "Unwrap"),
    RouteKind.SEND: ("send", "Send"),
}


def same_asset(a: CurrencyConfig, b: CurrencyConfig) -> bool:
    return (a.symbol.upper(), a.decimals) == (b.symbol.upper(), b.decimals)


def route_kind(
    origin: ChainConfig,
    destination: ChainConfig,
    currency_in: CurrencyConfig,
    currency_out: CurrencyConfig,
) -> RouteKind:
    if origin.id != destination.id:
        return (
            RouteKind.BRIDGE if same_asset(currency_in, currency_out) else RouteKind.CROSSCHAIN_SWAP
        )
    if currency_in.address == currency_out.address:
        return RouteKind.SEND
    weth = (origin.contracts.weth or "").lower()
    if currency_in.is_native and currency_out.address.lower() == weth:
        return RouteKind.WRAP
    if currency_out.is_native and currency_in.address.lower() == weth:
        return RouteKind.UNWRAP
    return RouteKind.SAME_CHAIN_SWAP


def pools_of(config: ChainConfig, state: ChainState, sources: frozenset[str]) -> list[Pool]:
    """The chain's configured pools with their last known reserves."""
    pools = []
    for pool in config.pools:
        reserves = state.market.reserves.get(pool.address.lower())
        if pool.source in sources and reserves is not None:
            pools.append(
                Pool(
                    address=pool.address.lower(),
                    source=pool.source,
                    token0=pool.token0.lower(),
                    token1=pool.token1.lower(),
                    reserve0=reserves[0],
                    reserve1=reserves[1],
                )
            )
    return pools


def unread_pools(config: ChainConfig, state: ChainState, sources: frozenset[str]) -> list[str]:
    """Addresses of the chain's configured pools (of `sources`) whose reserves are not known."""
    return [
        pool.address
        for pool in config.pools
        if pool.source in sources and pool.address.lower() not in state.market.reserves
    ]


@dataclass(frozen=True)
class Leg:
    """Turns the leg input (in `currency_in` on `chain`) into the output: an AMM swap along
    `route`, or, with no route, the same asset delivered as is (bridge, wrap, unwrap, send)."""

    chain: ChainConfig
    currency_in: CurrencyConfig
    currency_out: CurrencyConfig
    route: Route | None = None

    @property
    def is_swap(self) -> bool:
        return self.route is not None

    def out(self, amount: int) -> int:
        return amount if self.route is None else self.route.quote_out(amount)

    def needed(self, amount: int) -> int | None:
        return amount if self.route is None else self.route.quote_in(amount)

    def swap_plan(self, amount_in: int, minimum_out: int) -> SwapPlan:
        assert self.route is not None and self.chain.contracts.uniswap_v2_router is not None
        return SwapPlan(
            router=self.chain.contracts.uniswap_v2_router.lower(),
            path=self.route.path,
            native_in=self.currency_in.is_native,
            native_out=self.currency_out.is_native,
            amount_in=amount_in,
            minimum_out=minimum_out,
        )


def swap_routes(
    chain: ChainConfig,
    pools: Iterable[Pool],
    currency_in: CurrencyConfig,
    currency_out: CurrencyConfig,
) -> list[Route]:
    if chain.contracts.uniswap_v2_router is None:
        return []
    return candidate_routes(pools, pool_token(chain, currency_in), pool_token(chain, currency_out))
