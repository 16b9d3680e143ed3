"""The Filler call that executes a request's destination leg, and what its revert means.

A bridge pays the recipient from the solver's inventory. A cross-chain swap pays the bridged
asset into the Router and swaps it there, straight to the recipient, with the quote's
`minimumAmount` as the swap's own floor: a price that moved too far reverts the fill. A
bridge-and-call funds the request's `txs` through the Router and gives the rest to the
recipient.
"""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.config import ChainConfig
from crossfill.contracts import calldata
from crossfill.contracts.reverts import RevertReason
from crossfill.contracts.router_calls import Call, SwapPlan, swap_calls, sweep_call
from crossfill.quoting.engine import fill_deadline
from crossfill.store.db import as_utc
from crossfill.store.tables import Request
from crossfill.types import NATIVE_EVM_ADDRESS

# The exact revert messages of a swap's own output floor (Uniswap V2's router and pair).
_SLIPPAGE_REVERTS = frozenset(
    {
        "UniswapV2Router: INSUFFICIENT_OUTPUT_AMOUNT",
        "UniswapV2Router: EXCESSIVE_INPUT_AMOUNT",
        "UniswapV2: INSUFFICIENT_OUTPUT_AMOUNT",
    }
)


@dataclass(frozen=True)
class FillCall:
    data: bytes
    value: int
    # What the fill takes from the solver's inventory.
    spends_currency: str
    spends_amount: int


def _with_calls(
    order_id: bytes, request: Request, chain: ChainConfig, stored_calls: list[dict[str, str]]
) -> FillCall:
    """Bridge-and-call: the output funds the calls; what they leave goes to the recipient."""
    amount = int(request.amount_out)
    currency = request.destination_currency
    calls: list[Call] = [
        (call["to"], False, int(call["value"]), bytes.fromhex(call["data"][2:]))
        for call in stored_calls
    ]
    router = chain.contracts.router
    if currency == NATIVE_EVM_ADDRESS:
        rest = amount - sum(call[2] for call in calls)
        payments = [(request.recipient, currency, rest)] if rest > 0 else []
        data = calldata.filler_fill(order_id, payments, calls)
        return FillCall(data, amount, currency, amount)
    calls.append(sweep_call(router, currency, request.recipient))
    data = calldata.filler_fill(order_id, [(router, currency, amount)], calls)
    return FillCall(data, 0, currency, amount)


def fill_call(request: Request, chain: ChainConfig) -> FillCall:
    order_id = bytes.fromhex(request.order_id[2:])
    plan = request.plan or {}
    stored_swap = plan.get("swap")
    if plan.get("calls"):
        return _with_calls(order_id, request, chain, plan["calls"])
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
    deadline = fill_deadline(as_utc(request.expires_at))
    calls = swap_calls(swap, request.recipient, deadline)
    leg_currency = str(plan["legCurrency"])
    payments = [] if swap.native_in else [(chain.contracts.router, leg_currency, swap.amount_in)]
    return FillCall(
        data=calldata.filler_fill(order_id, payments, calls),
        value=swap.amount_in if swap.native_in else 0,
        spends_currency=leg_currency,
        spends_amount=swap.amount_in,
    )


def revert_reason(reason: RevertReason) -> str:
    """The fail reason of a fill whose simulation reverted."""
    if reason.name == "Error" and reason.message in _SLIPPAGE_REVERTS:
        return "SLIPPAGE"
    return "EXECUTION_REVERTED"
