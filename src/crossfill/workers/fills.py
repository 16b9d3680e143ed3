"""The Filler call that executes a request's destination leg, and what its revert means.

A bridge pays the recipient from the solver's inventory. A cross-chain swap pays the bridged
asset into the Router and swaps it there, straight to the recipient, with the quote's
`minimumAmount` as the swap's own floor: a price that moved too far reverts the fill.
"""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.config import ChainConfig
from crossfill.contracts import calldata
from crossfill.contracts.router_calls import SwapPlan, swap_calls
from crossfill.quoting.engine import FILL_WINDOW
from crossfill.store.db import as_utc
from crossfill.store.tables import Request
from crossfill.types import NATIVE_EVM_ADDRESS

# Revert texts of the swap's own output floor (Uniswap V2 router and pair).
_SLIPPAGE_REVERTS = ("INSUFFICIENT_OUTPUT_AMOUNT", "EXCESSIVE_INPUT_AMOUNT")


@dataclass(frozen=True)
class FillCall:
    data: bytes
    value: int
    # What the fill takes from the solver's inventory.
    spends_currency: str
    spends_amount: int


def fill_call(request: Request, chain: ChainConfig) -> FillCall:
    order_id = bytes.fromhex(request.order_id[2:])
    plan = request.plan or {}
    stored_swap = plan.get("swap")
    if not stored_swap:
        amount = int(request.amount_out)
        native = request.destination_currency == NATIVE_EVM_ADDRESS
        payments = [(request.recipient, request.destination_currency, amount)]
        return FillCall(
            data=calldata.filler_fill(order_id, payments),
            value=amount if native else 0,
            spends_currency=request.destination_currency,
            spends_amount=amount,
        )
    swap = SwapPlan.from_json(stored_swap)
    deadline = int((as_utc(request.expires_at) + FILL_WINDOW).timestamp())
    calls = swap_calls(swap, request.recipient, deadline)
    leg_currency = str(plan["legCurrency"])
    payments = [] if swap.native_in else [(chain.contracts.router, leg_currency, swap.amount_in)]
    return FillCall(
        data=calldata.filler_fill(order_id, payments, calls),
        value=swap.amount_in if swap.native_in else 0,
        spends_currency=leg_currency,
        spends_amount=swap.amount_in,
    )


def revert_reason(error: str) -> str:
    """The fail reason of a fill whose simulation reverted."""
    if any(text in error for text in _SLIPPAGE_REVERTS):
        return "SLIPPAGE"
    return "EXECUTION_REVERTED"
