"""The fill plan of a request (`domain.fill_plan`) and its Filler call, and what a revert of
that call means.

A bridge pays the recipient from the solver's inventory. A cross-chain swap pays the bridged
asset into the Router and swaps it there, straight to the recipient, with the quote's
`minimumAmount` as the swap's own floor: a price that moved too far reverts the fill. A
bridge-and-call funds the request's `txs` through the Router and gives the rest to the
recipient.
"""

from __future__ import annotations

from crossfill.config import ChainConfig
from crossfill.contracts import calldata
from crossfill.contracts.reverts import RevertReason
from crossfill.contracts.router_calls import Call, SwapPlan, swap_calls, sweep_call
from crossfill.domain.fill_plan import FillPlan, Payment, PlannedCall
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


def _payments(entries: list[tuple[str, str, int]]) -> tuple[Payment, ...]:
    return tuple(Payment(recipient, currency, amount) for recipient, currency, amount in entries)


def _calls(entries: list[Call]) -> tuple[PlannedCall, ...]:
    return tuple(
        PlannedCall(target, failure_ok, value, data) for target, failure_ok, value, data in entries
    )


def _with_calls(
    request: Request, chain: ChainConfig, stored_calls: list[dict[str, str]], deadline: int
) -> FillPlan:
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
        return FillPlan(
            chain.id,
            request.order_id,
            _payments(payments),
            _calls(calls),
            amount,
            currency,
            amount,
            deadline,
        )
    calls.append(sweep_call(router, currency, request.recipient))
    return FillPlan(
        chain.id,
        request.order_id,
        _payments([(router, currency, amount)]),
        _calls(calls),
        0,
        currency,
        amount,
        deadline,
    )


def plan_fill(request: Request, chain: ChainConfig) -> FillPlan:
    """The fill of a request as quoted (its row's amounts, recipient and execution plan)."""
    plan = request.plan or {}
    stored_swap = plan.get("swap")
    deadline = fill_deadline(as_utc(request.expires_at))
    if plan.get("calls"):
        return _with_calls(request, chain, plan["calls"], deadline)
    if not stored_swap:
        amount = int(request.amount_out)
        native = request.destination_currency == NATIVE_EVM_ADDRESS
        payments = [(request.recipient, request.destination_currency, amount)]
        return FillPlan(
            chain.id,
            request.order_id,
            _payments(payments),
            (),
            amount if native else 0,
            request.destination_currency,
            amount,
            deadline,
        )
    swap = SwapPlan.from_json(stored_swap)
    calls = swap_calls(swap, request.recipient, deadline)
    leg_currency = str(plan["legCurrency"])
    payments = [] if swap.native_in else [(chain.contracts.router, leg_currency, swap.amount_in)]
    return FillPlan(
        chain.id,
        request.order_id,
        _payments(payments),
        _calls(calls),
        swap.amount_in if swap.native_in else 0,
        leg_currency,
        swap.amount_in,
        deadline,
    )


def stored_fill_plan(request: Request, chain: ChainConfig) -> FillPlan:
    """The plan stored when the request was quoted; requests quoted before plans were stored
    have none, and theirs is made from the row as it was then."""
    if request.fill_plan is None:
        return plan_fill(request, chain)
    return FillPlan.from_json(request.fill_plan)


def filler_calldata(plan: FillPlan) -> bytes:
    """Filler.fill(orderId, payments, calls) for the plan."""
    return calldata.filler_fill(
        bytes.fromhex(plan.order_id[2:]),
        [(p.recipient, p.currency, p.amount) for p in plan.payments],
        [(c.target, c.allow_failure, c.value, c.data) for c in plan.calls],
    )


def revert_reason(reason: RevertReason) -> str:
    """The fail reason of a fill whose simulation reverted."""
    if reason.name == "Error" and reason.message in _SLIPPAGE_REVERTS:
        return "SLIPPAGE"
    return "EXECUTION_REVERTED"
