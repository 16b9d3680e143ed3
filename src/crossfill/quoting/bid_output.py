"""A quote whose output is an external solver's winning bid (docs/solvers.md): the order pays
the bid's output, exactly (a firm bid has no slippage), under a new order id."""

from __future__ import annotations

from dataclasses import replace

from crossfill.quoting.engine import Quote
from crossfill.quoting.fees import TradeType


def open_to_bids(quote: Quote) -> bool:
    """Whether solvers may bid on `quote`: an exact input bridged as it is (no swap, no
    destination calls), paid into the Depository by the user, not through a deposit address;
    its order's output is then one payment of the output currency a bid can name."""
    return (
        quote.trade_type is TradeType.EXACT_INPUT
        and quote.swap_plan is None
        and not quote.calls
        and quote.deposit_address is None
        and not quote.true_exact_output
        and not quote.paid_to_solver
        and quote.permit_valid_before is None
    )


def with_output(quote: Quote, output: int) -> Quote:
    """`quote` paying `output` of its output currency to the recipient."""
    order = quote.order
    first, *rest = order.output.payments
    payment = replace(first, expected_amount=output, minimum_amount=output)
    order = replace(order, output=replace(order.output, payments=(payment, *rest)))
    return replace(
        quote,
        order=order,
        order_id="0x" + order.order_id().hex(),
        amount_out=output,
        minimum_out=output,
    )
