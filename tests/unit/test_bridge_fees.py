"""Bridge fee arithmetic: integers only, exact reconciliation, rounding for the service."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crossfill.quoting.fees import BPS, AmountTooLow, TradeType, bridge_amounts
from crossfill.quoting.money import ceil_div, convert_ceil, format_units

amounts = st.integers(min_value=1, max_value=10**30)
gas_costs = st.integers(min_value=0, max_value=10**20)
bps = st.integers(min_value=0, max_value=1000)


def _service_fee(amount_in: int, fee_bps: int) -> int:
    return ceil_div(amount_in * fee_bps, BPS)


@given(amount=amounts, gas=gas_costs, fee_bps=bps)
def test_exact_input_reconciles_and_charges_at_least_the_service_fee(amount, gas, fee_bps) -> None:
    expected_out = amount - gas - _service_fee(amount, fee_bps)
    if expected_out <= 0:
        with pytest.raises(AmountTooLow):
            bridge_amounts(
                TradeType.EXACT_INPUT, amount, fill_gas_cost=gas, service_fee_bps=fee_bps
            )
        return
    quote = bridge_amounts(
        TradeType.EXACT_INPUT, amount, fill_gas_cost=gas, service_fee_bps=fee_bps
    )
    assert (quote.amount_in, quote.amount_out, quote.relayer_gas) == (amount, expected_out, gas)
    assert quote.amount_out + quote.relayer == quote.amount_in
    # Rounded up: at least the exact share, less than one unit above it.
    assert amount * fee_bps <= quote.relayer_service * BPS < amount * fee_bps + BPS


@given(amount=amounts, gas=gas_costs, fee_bps=bps)
def test_exact_output_delivers_the_requested_amount_for_the_least_input(
    amount, gas, fee_bps
) -> None:
    quote = bridge_amounts(
        TradeType.EXACT_OUTPUT, amount, fill_gas_cost=gas, service_fee_bps=fee_bps
    )

    def delivers(amount_in: int) -> bool:
        received: int = amount_in - gas - _service_fee(amount_in, fee_bps)
        return bool(received >= amount)

    assert quote.amount_out == amount
    assert quote.amount_out + quote.relayer == quote.amount_in
    assert quote.relayer_service >= _service_fee(quote.amount_in, fee_bps)
    assert delivers(quote.amount_in)
    assert not delivers(quote.amount_in - 1)


def test_amount_below_fees_is_too_low() -> None:
    with pytest.raises(AmountTooLow):
        bridge_amounts(TradeType.EXACT_INPUT, 100, fill_gas_cost=100, service_fee_bps=0)


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
    ],
)
def test_format_units(amount, decimals, text) -> None:
    assert format_units(amount, decimals) == text
