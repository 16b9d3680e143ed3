"""A quote a solver's bid won: which quotes are open to bids, and the quote paying the bid's
output exactly, under the order id of its new order."""

from __future__ import annotations

import pytest

from crossfill.quoting.bid_output import open_to_bids, with_output
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support.quote_fixtures import USDC, body, quote


def test_a_bridge_of_an_exact_input_is_open_to_bids() -> None:
    assert open_to_bids(quote(body(destinationCurrency=NATIVE_EVM_ADDRESS)))


@pytest.mark.parametrize(
    "fields",
    [
        {"destinationCurrency": USDC},  # a swap
        {"destinationCurrency": NATIVE_EVM_ADDRESS, "tradeType": "EXACT_OUTPUT"},
        {"destinationCurrency": NATIVE_EVM_ADDRESS, "protocolVersion": "v1"},
        {
            "destinationCurrency": NATIVE_EVM_ADDRESS,
            "txs": [{"to": USDC, "value": "0", "data": "0x"}],
        },
    ],
)
def test_what_a_bid_cannot_name_is_not_open_to_bids(fields: dict[str, object]) -> None:
    assert not open_to_bids(quote(body(**fields)))


def test_the_won_quote_pays_the_bid_exactly_under_a_new_order_id() -> None:
    operator = quote(body(destinationCurrency=NATIVE_EVM_ADDRESS))
    output = operator.amount_out + 12_345
    won = with_output(operator, output)
    assert (won.amount_out, won.minimum_out) == (output, output)
    (payment,) = won.order.output.payments
    assert (payment.expected_amount, payment.minimum_amount) == (output, output)
    assert won.order_id == "0x" + won.order.order_id().hex() != operator.order_id
    # Everything else of the order stands: its input, recipient, deadline, solver, salt.
    assert won.order.inputs == operator.order.inputs
    assert (won.order.solver, won.order.salt) == (operator.order.solver, operator.order.salt)
    assert won.order.output.deadline == operator.order.output.deadline
    assert payment.recipient == operator.order.output.payments[0].recipient
    assert won.request_id == operator.request_id and won.split == operator.split
