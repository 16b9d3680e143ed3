"""The fill plan of a request (`domain.fill_plan`) and its Filler call, and what a revert of
that call means.

A bridge pays the recipient from the solver's inventory. A cross-chain swap pays the bridged
asset into the Router and swaps it there, straight to the recipient, with the quote's
`minimumAmount` as the swap's own floor: a price that moved too far reverts the fill (with
`enableTrueExactOutput`, into the Router, which pays the recipient exactly and the solver the
surplus). A
bridge-and-call funds the request's `txs` through the Router and gives the rest to the
recipient.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from crossfill.contracts import calldata
from crossfill.contracts.reverts import RevertReason
from crossfill.contracts.router_calls import Call, SwapPlan, pay_calls, swap_calls, sweep_call
from crossfill.domain.fill_plan import FillPlan, Payment, PlannedCall
from crossfill.kinds.evm.config import ChainConfig
from crossfill.quoting.engine import Quote, fill_deadline
from crossfill.quoting.inputs import ExtraCall
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


def _payments(entries: Sequence[tuple[str, str, int]]) -> tuple[Payment, ...]:
    return tuple(Payment(recipient, currency, amount) for recipient, currency, amount in entries)


def _calls(entries: Sequence[Call]) -> tuple[PlannedCall, ...]:
    return tuple(
        PlannedCall(target, failure_ok, value, data) for target, failure_ok, value, data in entries
    )


@dataclass(frozen=True)
class FillTerms:
    """What a fill must deliver, as quoted: the order, who gets what by when, and how (a
    destination swap, the client's calls)."""

    order_id: str
    recipient: str
    currency: str  # the destination currency, lower-case
    amount_out: int
    expires_at: datetime
    swap: SwapPlan | None
    leg_currency: str  # what the solver pays in: the swap's input, else the output
    calls: tuple[ExtraCall, ...]
    # Destination gas currency paid to the recipient besides the output (`topupGas`).
    gas_topup: int = 0
    # `enableTrueExactOutput`: who gets a destination swap's surplus (None: the recipient).
    surplus_to: str | None = None

    @classmethod
    def of_quote(cls, quote: Quote) -> FillTerms:
        return cls(
            order_id=quote.order_id,
            recipient=quote.recipient,
            currency=quote.currency_out.address.lower(),
            amount_out=quote.amount_out,
            expires_at=quote.expires_at,
            swap=quote.swap_plan,
            leg_currency=quote.leg.currency_in.address.lower(),
            calls=quote.calls,
            gas_topup=quote.gas_topup,
            surplus_to=quote.order.solver if quote.true_exact_output else None,
        )

    @classmethod
    def of_row(cls, request: Request) -> FillTerms:
        """A request stored before fill plans were (its `plan` column holds the rest)."""
        plan = request.plan or {}
        stored_swap = plan.get("swap")
        return cls(
            order_id=request.order_id,
            recipient=request.recipient,
            currency=request.destination_currency,
            amount_out=int(request.amount_out),
            expires_at=as_utc(request.expires_at),
            swap=SwapPlan.from_json(stored_swap) if stored_swap else None,
            leg_currency=str(plan.get("legCurrency") or request.destination_currency),
            calls=tuple(
                ExtraCall(call["to"], int(call["value"]), bytes.fromhex(call["data"][2:]))
                for call in plan.get("calls") or ()
            ),
        )


def _with_calls(terms: FillTerms, chain: ChainConfig, deadline: int) -> FillPlan:
    """Bridge-and-call: the output funds the calls; what they leave goes to the recipient."""
    amount = terms.amount_out
    currency = terms.currency
    calls: list[Call] = [(call.to, False, call.value, call.data) for call in terms.calls]
    router = chain.contracts.router
    if currency == NATIVE_EVM_ADDRESS:
        rest = amount - sum(call[2] for call in calls)
        payments = [(terms.recipient, currency, rest)] if rest > 0 else []
        return FillPlan(
            chain.id,
            terms.order_id,
            _payments(payments),
            _calls(calls),
            amount,
            currency,
            amount,
            deadline,
        )
    calls.append(sweep_call(router, currency, terms.recipient))
    return FillPlan(
        chain.id,
        terms.order_id,
        _payments([(router, currency, amount)]),
        _calls(calls),
        0,
        currency,
        amount,
        deadline,
    )


def _swap_calls(terms: FillTerms, swap: SwapPlan, chain: ChainConfig, deadline: int) -> list[Call]:
    """The destination swap, straight to the recipient; or, for a true exact output (an
    ERC-20), into the Router, which pays the recipient the amount and the solver the rest."""
    if terms.surplus_to is None:
        return swap_calls(swap, terms.recipient, deadline)
    router = chain.contracts.router
    return [
        *swap_calls(swap, router, deadline),
        *pay_calls(terms.currency, False, [(terms.recipient, terms.amount_out)]),
        sweep_call(router, terms.currency, terms.surplus_to),
    ]


def plan_fill(terms: FillTerms, chain: ChainConfig) -> FillPlan:
    """The fill that delivers `terms` on `chain` (the destination), with its gas top-up."""
    plan = _plan_output(terms, chain)
    if terms.gas_topup == 0:
        return plan
    topup = Payment(terms.recipient, NATIVE_EVM_ADDRESS, terms.gas_topup)
    spends = plan.spends_amount
    if plan.spends_currency == NATIVE_EVM_ADDRESS:
        spends += terms.gas_topup  # a native-in swap: the top-up comes from the same balance
    return replace(
        plan,
        payments=(*plan.payments, topup),
        value=plan.value + terms.gas_topup,
        spends_amount=spends,
    )


def _plan_output(terms: FillTerms, chain: ChainConfig) -> FillPlan:
    """The fill that delivers the output of `terms` on `chain`."""
    deadline = fill_deadline(terms.expires_at)
    if terms.calls:
        return _with_calls(terms, chain, deadline)
    if terms.swap is None:
        amount = terms.amount_out
        native = terms.currency == NATIVE_EVM_ADDRESS
        return FillPlan(
            chain.id,
            terms.order_id,
            _payments([(terms.recipient, terms.currency, amount)]),
            (),
            amount if native else 0,
            terms.currency,
            amount,
            deadline,
        )
    swap = terms.swap
    calls = _swap_calls(terms, swap, chain, deadline)
    payments = (
        [] if swap.native_in else [(chain.contracts.router, terms.leg_currency, swap.amount_in)]
    )
    return FillPlan(
        chain.id,
        terms.order_id,
        _payments(payments),
        _calls(calls),
        swap.amount_in if swap.native_in else 0,
        terms.leg_currency,
        swap.amount_in,
        deadline,
    )


def stored_fill_plan(request: Request, chain: ChainConfig) -> FillPlan:
    """The plan stored when the request was quoted; requests quoted before plans were stored
    have none, and theirs is made from the row as it was then."""
    if request.fill_plan is None:
        return plan_fill(FillTerms.of_row(request), chain)
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
