"""Constant-product (Uniswap V2) pool arithmetic and route search. Integers only, no I/O.

The formulas are the pair's own (`UniswapV2Library.getAmountOut/getAmountIn`, 0.3% fee), so a
quote computed here is exactly what the pair pays out against the same reserves.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

V2_FEE_NUMERATOR = 997
V2_FEE_DENOMINATOR = 1000


class NoRoute(ValueError):
    """No configured pool path joins the two tokens (or none can carry the amount)."""


@dataclass(frozen=True)
class Pool:
    """One pair and its reserves; tokens are lower-case addresses in the pair's own order."""

    address: str
    source: str
    token0: str
    token1: str
    reserve0: int
    reserve1: int

    def other(self, token: str) -> str:
        return self.token1 if token == self.token0 else self.token0

    def reserves(self, token_in: str) -> tuple[int, int]:
        """(reserve of token_in, reserve of the other token)."""
        if token_in == self.token0:
            return self.reserve0, self.reserve1
        return self.reserve1, self.reserve0

    def holds(self, token: str) -> bool:
        return token in (self.token0, self.token1)


def amount_out(amount_in: int, reserve_in: int, reserve_out: int) -> int:
    """What the pair pays for `amount_in` (rounded down, as the pair does)."""
    if amount_in <= 0 or reserve_in <= 0 or reserve_out <= 0:
        return 0
    with_fee = amount_in * V2_FEE_NUMERATOR
    return with_fee * reserve_out // (reserve_in * V2_FEE_DENOMINATOR + with_fee)


def amount_in(amount_out: int, reserve_in: int, reserve_out: int) -> int | None:
    """The least input that buys `amount_out`; None when the pool cannot pay it."""
    if amount_out <= 0 or reserve_in <= 0 or amount_out >= reserve_out:
        return None
    numerator = reserve_in * amount_out * V2_FEE_DENOMINATOR
    denominator = (reserve_out - amount_out) * V2_FEE_NUMERATOR
    return numerator // denominator + 1


@dataclass(frozen=True)
class Route:
    """A path of tokens through pools: `path[i]` → `path[i + 1]` in `pools[i]`."""

    path: tuple[str, ...]
    pools: tuple[Pool, ...]

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(pool.source for pool in self.pools))

    def quote_out(self, amount: int) -> int:
        """Output of swapping exactly `amount` along the route."""
        for token, pool in zip(self.path, self.pools, strict=False):
            amount = amount_out(amount, *pool.reserves(token))
        return amount

    def quote_in(self, amount: int) -> int | None:
        """Least input that yields at least `amount` at the end of the route."""
        hops = list(zip(self.path, self.pools, strict=False))
        needed: int | None = amount
        for token, pool in reversed(hops):
            assert needed is not None
            needed = amount_in(needed, *pool.reserves(token))
            if needed is None:
                return None
        return needed

    def mid_out(self, amount: int) -> int:
        """Output at the pools' current prices with no fee and no impact (rounded down)."""
        numerator, denominator = amount, 1
        for token, pool in zip(self.path, self.pools, strict=False):
            reserve_in, reserve_out = pool.reserves(token)
            numerator *= reserve_out
            denominator *= reserve_in
        return numerator // denominator


def candidate_routes(pools: Iterable[Pool], token_in: str, token_out: str) -> list[Route]:
    """Every direct and one-hop route between two tokens over the given pools."""
    pools = [pool for pool in pools if pool.reserve0 > 0 and pool.reserve1 > 0]
    routes = [
        Route(path=(token_in, token_out), pools=(pool,))
        for pool in pools
        if pool.holds(token_in) and pool.holds(token_out) and token_in != token_out
    ]
    for first in pools:
        if not first.holds(token_in):
            continue
        middle = first.other(token_in)
        if middle in (token_in, token_out):
            continue
        routes.extend(
            Route(path=(token_in, middle, token_out), pools=(first, second))
            for second in pools
            if second is not first and second.holds(middle) and second.holds(token_out)
        )
    return routes


def best_route_for_input(routes: Iterable[Route], amount: int) -> tuple[Route, int]:
    """The route paying the most for exactly `amount`."""
    quoted = [(route.quote_out(amount), route) for route in routes]
    quoted = [(out, route) for out, route in quoted if out > 0]
    if not quoted:
        raise NoRoute("no route pays anything for this amount")
    out, route = max(quoted, key=lambda pair: pair[0])
    return route, out


def best_route_for_output(routes: Iterable[Route], amount: int) -> tuple[Route, int]:
    """The route needing the least input for at least `amount` out."""
    quoted = [(route.quote_in(amount), route) for route in routes]
    feasible = [(needed, route) for needed, route in quoted if needed is not None]
    if not feasible:
        raise NoRoute("no route holds enough liquidity for this amount")
    needed, route = min(feasible, key=lambda pair: pair[0])
    return route, needed
