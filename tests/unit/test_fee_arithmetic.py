"""Fee arithmetic: integers only, every unit accounted for, rounding for the service."""

from __future__ import annotations

import contextlib
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crossfill.quoting.fees import (
    BPS,
    AmountTooLow,
    FeeRates,
    minimum_after_slippage,
    split_for_leg_input,
    split_input,
    with_slippage_headroom,
)
from crossfill.quoting.money import convert_ceil, format_units

amounts = st.integers(min_value=1, max_value=10**30)
gas_costs = st.integers(min_value=0, max_value=10**20)
rates = st.builds(
    FeeRates,
    service_bps=st.integers(min_value=0, max_value=1000),
    flat=st.integers(min_value=0, max_value=10**18),
    app_bps=st.lists(st.integers(min_value=0, max_value=1000), max_size=4).map(tuple),
)


def _exact_percent_fees(amount_in: int, fee_rates: FeeRates) -> Fraction:
    return Fraction(amount_in * fee_rates.percent_bps, BPS)


def _check_split_invariants(split, fee_rates: FeeRates) -> None:
    # Every unit the user pays goes somewhere.
    assert split.amount_in == split.relayer_gas + split.relayer_service + split.app_total + (
        split.leg_input
    )
    # Each app recipient gets its exact share rounded down, by less than one unit.
    for bps, share in zip(fee_rates.app_bps, split.app, strict=True):
        exact = Fraction(split.amount_in * bps, BPS)
        assert exact - 1 < share <= exact
    # Service and app together: the exact percentage fees, rounded up by less than one unit.
    percent_fees = split.relayer_service - fee_rates.flat + split.app_total
    exact = _exact_percent_fees(split.amount_in, fee_rates)
    assert exact <= percent_fees < exact + 1
    assert split.relayer_service >= fee_rates.flat


@given(amount=amounts, gas=gas_costs, fee_rates=rates)
def test_exact_input_split_reconciles_and_rounds_for_the_service(amount, gas, fee_rates) -> None:
    try:
        split = split_input(amount, gas=gas, rates=fee_rates)
    except AmountTooLow:
        exact_left = amount - gas - fee_rates.flat - _exact_percent_fees(amount, fee_rates)
        assert exact_left < 1
        return
    assert (split.amount_in, split.relayer_gas) == (amount, gas)
    assert split.leg_input > 0
    _check_split_invariants(split, fee_rates)


@given(target=amounts, gas=gas_costs, fee_rates=rates)
def test_exact_output_split_is_the_least_input_leaving_the_target(target, gas, fee_rates) -> None:
    split = split_for_leg_input(target, gas=gas, rates=fee_rates)
    assert split.leg_input == target
    _check_split_invariants(split, fee_rates)
    # The same input quoted as EXACT_INPUT leaves at least the target; one unit less does not.
    assert split_input(split.amount_in, gas=gas, rates=fee_rates).leg_input >= target
    with contextlib.suppress(AmountTooLow):  # too low to quote at all is "less" too
        assert split_input(split.amount_in - 1, gas=gas, rates=fee_rates).leg_input < target


def test_fees_of_a_hundred_percent_are_refused() -> None:
    with pytest.raises(AmountTooLow):
        FeeRates(service_bps=5_000, app_bps=(5_000,))


def test_amount_below_fees_is_too_low() -> None:
    with pytest.raises(AmountTooLow):
        split_input(100, gas=100, rates=FeeRates(service_bps=0))


@given(amount=amounts, slippage=st.integers(min_value=0, max_value=BPS))
def test_slippage_bounds_round_for_the_service(amount, slippage) -> None:
    floor = minimum_after_slippage(amount, slippage)
    exact_floor = Fraction(amount * (BPS - slippage), BPS)
    assert exact_floor - 1 < floor <= exact_floor
    headroom = with_slippage_headroom(amount, slippage)
    exact = Fraction(amount * (BPS + slippage), BPS)
    assert exact <= headroom < exact + 1


@given(
    amount=st.integers(min_value=0, max_value=10**24),
    from_price=st.integers(min_value=1, max_value=10**12),
    to_price=st.integers(min_value=1, max_value=10**12),
)
def test_conversion_rounds_up_by_less_than_one_unit(amount, from_price, to_price) -> None:
    converted = convert_ceil(
        amount, from_decimals=18, from_price=from_price, to_decimals=6, to_price=to_price
    )
    exact_numerator = amount * from_price * 10**6
    exact_denominator = to_price * 10**18
    assert converted * exact_denominator >= exact_numerator
    assert (converted - 1) * exact_denominator < exact_numerator


@pytest.mark.parametrize(
    ("amount", "decimals", "text"),
    [
        (1_500_000, 6, "1.5"),
        (10**18, 18, "1"),
        (1, 18, "0.000000000000000001"),
        (0, 6, "0"),
        (42, 0, "42"),
        (-1_250_000, 6, "-1.25"),
    ],
)
def test_format_units(amount, decimals, text) -> None:
    assert format_units(amount, decimals) == text
