"""Serve a quote that bridges to or from the SVM chain: plan it, answer it, store its request."""

from __future__ import annotations

from typing import Any

from crossfill.app import registry
from crossfill.app.cross_vm_rows import evm_payment_plan, request_row
from crossfill.app.payout_capacity import check_evm_payout
from crossfill.app.quote_stamps import fresh_stamp
from crossfill.app.quote_store import store_quote
from crossfill.domain.order import sign_order_id
from crossfill.kinds.svm.config import SvmChainConfig
from crossfill.kinds.svm.payout import check_svm_payout
from crossfill.kinds.svm.quote import Direction, SvmQuote, SvmQuoteContext, plan_svm_quote
from crossfill.kinds.svm.response import svm_price_wire, svm_quote_wire
from crossfill.kinds.svm.runtime import SvmChainRuntime
from crossfill.quoting.cross_vm import EvmSide, evm_side
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest
from crossfill.runtime import Runtime
from crossfill.store.requests import REQUESTS


def _deposit_fee_per_gas(runtime: Runtime, evm: EvmSide) -> int | None:
    """The EVM chain's fee per gas now; None until the chain's state has one (the quote is
    refused 503 then, once its inputs are checked)."""
    return registry.fee_per_gas(runtime, evm)


def _context(
    runtime: Runtime, svm: SvmChainConfig, body: QuoteRequest, direction: Direction
) -> SvmQuoteContext:
    to_svm = direction == "to_svm"
    svm_id, evm_id = (
        (body.destination_chain_id, body.origin_chain_id)
        if to_svm
        else (body.origin_chain_id, body.destination_chain_id)
    )
    if svm_id == evm_id or (
        runtime.deployment.serves(evm_id) and evm_side(runtime.deployment, evm_id) is None
    ):
        raise QuoteError("UNSUPPORTED_ROUTE", "an SVM route crosses to or from an EVM chain")
    evm = evm_side(runtime.deployment, evm_id)
    if evm is None:
        raise QuoteError("UNSUPPORTED_CHAIN", f"chain {evm_id} is not a supported chain")
    registry.require_enabled(runtime, svm_id, evm_id)
    evm_currency = evm.currency(body.origin_currency if to_svm else body.destination_currency)
    native_price = registry.live_usd_price(runtime, evm, evm.native_currency) if to_svm else None
    return SvmQuoteContext(
        evm=evm,
        svm=svm,
        evm_price=registry.live_usd_price(runtime, evm, evm_currency),
        evm_native_price=native_price,
        evm_fee_per_gas=_deposit_fee_per_gas(runtime, evm) if to_svm else None,
        stamp=fresh_stamp(
            body, runtime.deployment.quotes, solver=runtime.deployment.solver.address
        ),
    )


def _request_row(
    quote: SvmQuote,
    wire: dict[str, Any],
    body: QuoteRequest,
    evm: EvmSide,
    api_key_id: int | None,
) -> dict[str, Any]:
    # From the SVM chain the EVM destination's solver fills; to it, the SVM payer pays.
    fill_plan = evm_payment_plan(quote, evm) if quote.direction == "from_svm" else None
    return request_row(
        quote, wire, body, api_key_id,
        request_type="Bridge",
        plan={"kind": "svm", "direction": quote.direction},
        fill_plan=fill_plan,
    )  # fmt: skip


def _planned(
    runtime: Runtime,
    svm: SvmChainRuntime,
    body: QuoteRequest,
    direction: Direction,
    context: SvmQuoteContext,
) -> SvmQuote:
    """The quote, once the side paying its output can pay it: the vault to the SVM chain, the
    EVM solver from it."""
    quote = plan_svm_quote(body, direction, context)
    if direction == "to_svm":
        check_svm_payout(svm, quote.terms.currency_out, quote.terms.amount_out)
    else:
        check_evm_payout(runtime, quote.terms.currency_out, quote.terms.amount_out)
    return quote


async def create_svm_quote(
    runtime: Runtime,
    svm: SvmChainRuntime,
    body: QuoteRequest,
    direction: Direction,
    *,
    api_key_id: int | None = None,
) -> dict[str, Any]:
    context = _context(runtime, svm.config, body, direction)
    quote = _planned(runtime, svm, body, direction, context)
    signature = (
        sign_order_id(runtime.solver_account, bytes.fromhex(quote.order_id[2:]))
        if body.include_protocol_data
        else None
    )
    wire = svm_quote_wire(quote, context.evm, order_signature=signature)
    await store_quote(
        runtime,
        [(REQUESTS, _request_row(quote, wire, body, context.evm, api_key_id))],
        request_id=quote.request_id,
    )
    return wire


def preview_svm_price(
    runtime: Runtime, svm: SvmChainRuntime, body: QuoteRequest, direction: Direction
) -> dict[str, Any]:
    """POST /price for an SVM route: planned and checked as its quote is, nothing stored."""
    context = _context(runtime, svm.config, body, direction)
    return svm_price_wire(_planned(runtime, svm, body, direction, context), context.evm)
