"""Constant-product arithmetic and route search, against the pair's own invariant."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from crossfill.quoting.amm import (
    Pool,
    amount_in,
    amount_out,
    best_route_for_input,
    best_route_for_output,
    candidate_routes,
)

reserves = st.integers(min_value=10**3, max_value=10**30)
trade = st.integers(min_value=1, max_value=10**28)
A, B, C = "0x" + "0a" * 20, "0x" + "0b" * 20, "0x" + "0c" * 20


def _pool(address: str, token0: str, token1: str, reserve0: int, reserve1: int) -> Pool:
    return Pool(address, "uniswap-v2", token0, token1, reserve0, reserve1)


def _invariant_holds(paid_in: int, paid_out: int, reserve_in: int, reserve_out: int) -> bool:
    """The pair's check: balances after the swap, fee-adjusted, keep k."""
    balance_in = reserve_in + paid_in
    balance_out = reserve_out - paid_out
    adjusted_in = balance_in * 1000 - paid_in * 3
    return bool(
        balance_out >= 0 and adjusted_in * balance_out * 1000 >= reserve_in * reserve_out * 1000**2
    )


@given(paid=trade, reserve_in=reserves, reserve_out=reserves)
def test_amount_out_is_the_most_the_pair_pays(paid, reserve_in, reserve_out) -> None:
    out = amount_out(paid, reserve_in, reserve_out)
    assert 0 <= out < reserve_out
    assert _invariant_holds(paid, out, reserve_in, reserve_out)
    assert not _invariant_holds(paid, out + 1, reserve_in, reserve_out)


@given(wanted=trade, reserve_in=reserves, reserve_out=reserves)
def test_amount_in_buys_at_least_the_output_for_at_most_one_unit_extra(
    wanted, reserve_in, reserve_out
) -> None:
    needed = amount_in(wanted, reserve_in, reserve_out)
    if wanted >= reserve_out:
        assert needed is None
        return
    assert needed is not None
    assert amount_out(needed, reserve_in, reserve_out) >= wanted
    assert needed == 1 or amount_out(needed - 2, reserve_in, reserve_out) < wanted


@given(paid=trade, r1=reserves, r2=reserves, r3=reserves, r4=reserves)
def test_one_hop_route_chains_the_pools_exactly(paid, r1, r2, r3, r4) -> None:
    first, second = _pool("0x01", A, B, r1, r2), _pool("0x02", B, C, r3, r4)
    [route] = candidate_routes([first, second], A, C)
    assert route.path == (A, B, C)
    assert route.quote_out(paid) == amount_out(amount_out(paid, r1, r2), r3, r4)
    needed = route.quote_in(max(1, route.quote_out(paid)))
    if needed is not None:
        assert route.quote_out(needed) >= max(1, route.quote_out(paid))


def test_best_route_prefers_the_deeper_path() -> None:
    shallow = _pool("0x01", A, C, 10**18, 10**18)
    deep_first, deep_second = (
        _pool("0x02", A, B, 10**24, 10**24),
        _pool("0x03", B, C, 10**24, 10**24),
    )
    routes = candidate_routes([shallow, deep_first, deep_second], A, C)
    assert {route.path for route in routes} == {(A, C), (A, B, C)}
    route, out = best_route_for_input(routes, 10**17)
    assert route.path == (A, B, C) and out == route.quote_out(10**17)
    route, needed = best_route_for_output(routes, 10**17)
    assert route.path == (A, B, C) and route.quote_out(needed) >= 10**17


@given(paid=trade, r1=reserves, r2=reserves)
def test_mid_price_output_is_never_below_the_executed_one(paid, r1, r2) -> None:
    [route] = candidate_routes([_pool("0x01", A, B, r1, r2)], A, B)
    assume(route.quote_out(paid) > 0)
    assert route.mid_out(paid) >= route.quote_out(paid)
