"""A fill is planned from the quote itself; a request stored before plans were has its plan
made from its row, and both must be the same fill."""

from __future__ import annotations

import pytest

from crossfill.app.fills import FillTerms, plan_fill
from crossfill.app.quote_rows import quote_rows
from crossfill.quoting.response import quote_wire
from crossfill.store.tables import Request
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support import quote_fixtures as fx

CALL = {"to": fx.CONTRACT, "value": str(10**16), "data": "0xabcdef"}
ROUTES = {
    "native bridge": {"destinationCurrency": NATIVE_EVM_ADDRESS},
    "native bridge with txs": {"destinationCurrency": NATIVE_EVM_ADDRESS, "txs": [CALL]},
    "cross-chain swap": {},
}


@pytest.mark.parametrize("fields", ROUTES.values(), ids=ROUTES.keys())
def test_the_quote_and_its_stored_row_plan_the_same_fill(fields: dict[str, object]) -> None:
    quote = fx.quote(fx.body(**fields))
    wire = quote_wire(quote, allowance=None, user_balance=None)
    row = Request(**quote_rows(quote, wire, referrer=None, api_key_id=None).request)
    from_quote = plan_fill(FillTerms.of_quote(quote), quote.destination)
    assert plan_fill(FillTerms.of_row(row), quote.destination) == from_quote
    assert from_quote.order_id == quote.order_id
    assert from_quote.deadline > int(quote.expires_at.timestamp())


def test_a_swap_from_the_native_leg_sends_it_as_value_to_the_swap() -> None:
    quote = fx.quote(fx.body())  # ETH -> USDC: the solver's ETH is swapped on the destination
    plan = plan_fill(FillTerms.of_quote(quote), quote.destination)
    assert quote.swap_plan is not None and quote.swap_plan.native_in
    assert plan.payments == ()
    assert plan.value == plan.spends_amount == quote.swap_plan.amount_in
    assert [call.target for call in plan.calls] == [quote.swap_plan.router]
