"""Sponsorship arithmetic: every fee unit is paid by the user or the sponsor, never above cap."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from crossfill.quoting.fees import FeeRates, TradeType, split_for_leg_input, split_input
from crossfill.quoting.sponsorship import COMPONENTS, apply, sponsor

amounts = st.integers(min_value=10**6, max_value=10**30)
gas_costs = st.integers(min_value=0, max_value=10**5)
rates = st.builds(
    FeeRates,
    service_bps=st.integers(min_value=0, max_value=1000),
    flat=st.integers(min_value=0, max_value=10**4),
    app_bps=st.lists(st.integers(min_value=0, max_value=500), max_size=3).map(tuple),
)
selections = st.lists(st.sampled_from(COMPONENTS), unique=True).map(tuple)
caps = st.one_of(st.none(), st.integers(min_value=0, max_value=10**6))


@given(amount=amounts, gas=gas_costs, fee_rates=rates, selected=selections, cap=caps)
def test_exact_input_sponsorship_moves_fees_to_the_sponsor(
    amount, gas, fee_rates, selected, cap
) -> None:
    split = split_input(amount, gas=gas, rates=fee_rates)
    sponsorship = sponsor(split, selected, cap)
    sponsored = apply(split, sponsorship.sponsored, TradeType.EXACT_INPUT)
    fees = split.relayer_gas + split.relayer_service + split.app_total
    assert sponsored.amount_in == amount
    assert sponsored.amount_in + sponsored.sponsored == fees + sponsored.leg_input
    assert sponsored.leg_input == split.leg_input + sponsorship.sponsored
    assert cap is None or sponsorship.sponsored <= cap
    for component in sponsorship.components:
        assert 0 <= component.sponsored <= component.total
        assert component.selected or component.sponsored == 0
    assert sponsorship.cap_hit == any(
        c.selected and c.sponsored < c.total for c in sponsorship.components
    )
    if cap is None:
        assert not sponsorship.cap_hit


@given(target=amounts, gas=gas_costs, fee_rates=rates, selected=selections, cap=caps)
def test_output_sponsorship_takes_less_input_for_the_same_output(
    target, gas, fee_rates, selected, cap
) -> None:
    split = split_for_leg_input(target, gas=gas, rates=fee_rates)
    sponsorship = sponsor(split, selected, cap)
    sponsored = apply(split, sponsorship.sponsored, TradeType.EXACT_OUTPUT)
    assert sponsored.leg_input == target
    assert sponsored.amount_in == split.amount_in - sponsorship.sponsored
    fees = split.relayer_gas + split.relayer_service + split.app_total
    assert sponsored.amount_in + sponsored.sponsored == fees + target
