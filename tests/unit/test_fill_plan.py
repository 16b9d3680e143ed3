"""The stored fill plan: round trip through its JSON, and versions it does not know refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crossfill.domain.fill_plan import FillPlan, FillPlanError, Payment, PlannedCall

ADDRESS = st.binary(min_size=20, max_size=20).map(lambda raw: "0x" + raw.hex())
UINT = st.integers(0, 2**256 - 1)


@given(
    payments=st.lists(st.builds(Payment, ADDRESS, ADDRESS, UINT), max_size=3),
    calls=st.lists(
        st.builds(PlannedCall, ADDRESS, st.booleans(), UINT, st.binary(max_size=100)), max_size=3
    ),
    value=UINT,
    deadline=st.integers(0, 2**40),
)
def test_a_plan_reads_back_as_it_was_written(
    payments: list[Payment], calls: list[PlannedCall], value: int, deadline: int
) -> None:
    plan = FillPlan(
        900002,
        "0x" + "07" * 32,
        tuple(payments),
        tuple(calls),
        value,
        "0x" + "00" * 20,
        5,
        deadline,
    )
    assert FillPlan.from_json(plan.to_json()) == plan


@pytest.mark.parametrize(
    "document",
    [{"version": 2}, {"version": 1}, {"version": 1, "chainId": "x"}, {}],
)
def test_an_unknown_or_malformed_plan_is_refused(document: dict[str, object]) -> None:
    with pytest.raises(FillPlanError):
        FillPlan.from_json(document)
