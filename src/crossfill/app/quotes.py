"""Serve a quote: snapshot chain state, plan, read the user's position, persist the request;
or preview its price (the same checks, nothing stored)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import orjson
import structlog

from crossfill.app.entropy import new_entropy
from crossfill.app.fills import FillTerms, filler_calldata, plan_fill
from crossfill.app.quote_rows import quote_rows
from crossfill.app.quote_store import store_quote
from crossfill.app.rfq import auction, may_hold
from crossfill.contracts import calldata
from crossfill.domain.fill_plan import FillPlan
from crossfill.domain.order import sign_order_id
from crossfill.errors import ApiError, ChainError, Reverted, ServiceUnavailable
from crossfill.kinds.evm.chain import evm_chains
from crossfill.metrics import FAILED, NO_ROUTE, QUOTED, REFUSED, UNAVAILABLE
from crossfill.quoting.bid_output import with_output
from crossfill.quoting.deposit_address import DepositAddressTerms
from crossfill.quoting.engine import ChainView, Quote, plan_quote
from crossfill.quoting.errors import (
    QuoteError,
    QuoteSimulationFailed,
    QuoteUnavailable,
    SimulatedCall,
)
from crossfill.quoting.request import QuoteRequest
from crossfill.quoting.response import price_wire, quote_wire
from crossfill.quoting.sponsorship import SponsorWallet
from crossfill.quoting.steps import allowance_suffices, spender, spends_allowance
from crossfill.runtime import Runtime
from crossfill.store import requests
from crossfill.store.db import EncodedJson
from crossfill.store.tables import ApiKey
from crossfill.types import ChainId

log = structlog.get_logger(__name__)


def chain_views(runtime: Runtime) -> dict[int, ChainView]:
    return {
        chain_id: ChainView(
            config=chain.config, state=chain.state, disabled=runtime.chain_disabled(chain_id)
        )
        for chain_id, chain in evm_chains(runtime).items()
    }


async def _user_position(runtime: Runtime, quote: Quote) -> tuple[int | None, int | None]:
    """The user's balance of the input currency and its allowance to our spender contract.

    The one RPC read on the quote path (only the user's own wallet can answer it), kept per
    head (`chains/positions.py`): a value read earlier in this head may be older than the
    chain's latest block. That is harmless for the balance (shown only) and for an allowance
    that leaves the approval step in; an allowance that would drop the step is read again, so
    a stale one never drops a needed approval. On failure the quote still goes out, with an
    approve step included to be safe.
    """
    positions = evm_chains(runtime)[quote.origin.id].positions
    currency, user, contract = quote.currency_in.address, quote.user, spender(quote)
    try:
        position = await positions.read(currency, user, contract)
        if (
            position.cached
            and spends_allowance(quote)
            and allowance_suffices(quote, position.allowance)
        ):
            position = await positions.read(currency, user, contract, fresh=True)
    except ChainError as exc:
        log.warning("user position unavailable", chain_id=quote.origin.id, error=str(exc))
        return None, None
    return position.balance, position.allowance


async def evm_user_balance(
    runtime: Runtime, chain_id: int, currency: str, holder: str, spender: str
) -> int | None:
    """`holder`'s balance of `currency` on EVM chain `chain_id`, read as `_user_position`
    reads it (kept per head, with the allowance to `spender`), for a quote's `userBalance`
    when its input is paid on that chain; None when the chain does not answer."""
    try:
        position = await evm_chains(runtime)[ChainId(chain_id)].positions.read(
            currency, holder, spender
        )
    except ChainError as exc:
        log.warning("user balance unavailable", chain_id=chain_id, error=str(exc))
        return None
    return position.balance


async def _sponsor_wallet(
    runtime: Runtime, body: QuoteRequest, api_key_id: int | None
) -> SponsorWallet | None:
    """The calling key's sponsor wallet, read only when the body asks for sponsorship."""
    if not body.subsidize_fees or api_key_id is None:
        return None
    async with runtime.sessions() as session:
        key = await session.get(ApiKey, api_key_id)
    if key is None or key.sponsor_address is None:
        return None
    assert key.sponsor_chain_id is not None and key.sponsor_currency is not None
    return SponsorWallet(key.sponsor_address, key.sponsor_chain_id, key.sponsor_currency)


async def _check_sponsor_funds(runtime: Runtime, quote: Quote) -> None:
    """The sponsor must hold the payment and have approved the solver to pull it."""
    wallet = quote.sponsor
    if wallet is None or quote.sponsor_payment == 0:
        return
    client = evm_chains(runtime)[ChainId(wallet.chain_id)].client
    try:
        balance, allowance = await client.balance_and_allowance(
            wallet.currency, wallet.address, runtime.deployment.solver.address
        )
    except ChainError as exc:
        raise QuoteUnavailable("SERVICE_UNAVAILABLE", f"sponsor balance unknown: {exc}") from None
    if min(balance, allowance or 0) < quote.sponsor_payment:
        raise QuoteError(
            "SPONSOR_BALANCE_TOO_LOW",
            f"the sponsor wallet {wallet.address} cannot pay {quote.sponsor_payment} "
            f"(balance {balance}, allowance to the solver {allowance or 0})",
        )


async def _planned(runtime: Runtime, body: QuoteRequest, api_key_id: int | None) -> Quote:
    """The quote planned and checked as every quote is: sponsor funds included."""
    quote = plan_quote(
        body,
        chains=chain_views(runtime),
        deployment=runtime.deployment,
        now=datetime.now(UTC),
        entropy=new_entropy(),
        sponsor_wallet=await _sponsor_wallet(runtime, body, api_key_id),
    )
    await _check_sponsor_funds(runtime, quote)
    return quote


async def create_quote(
    runtime: Runtime, body: QuoteRequest, *, api_key_id: int | None = None
) -> bytes:
    """The quote's wire answer as JSON, its request stored; timed by route kind and outcome."""
    started = time.perf_counter()
    route_kind, outcome = NO_ROUTE, FAILED
    try:
        quote = await _planned(runtime, body, api_key_id)
        route_kind = quote.kind
        wire = await _answer(runtime, body, quote, api_key_id)
        outcome = QUOTED
        return wire
    except ServiceUnavailable:
        outcome = UNAVAILABLE
        raise
    except ApiError:
        outcome = REFUSED
        raise
    finally:
        elapsed = time.perf_counter() - started
        runtime.metrics.quote_duration.labels(route_kind, outcome).observe(elapsed)


async def _answer(
    runtime: Runtime, body: QuoteRequest, quote: Quote, api_key_id: int | None
) -> bytes:
    """Check the user's position while solvers bid (`app.rfq`), sign, plan the fill, store
    the rows; the answer's JSON."""
    if may_hold(runtime, quote):
        (balance, allowance), won = await asyncio.gather(
            _user_position(runtime, quote), auction(runtime, quote)
        )
    else:
        (balance, allowance), won = await _user_position(runtime, quote), None
    operator_output = quote.amount_out
    if won is not None:
        quote = with_output(quote, won.offer.bid.output)
    signature = (
        sign_order_id(runtime.solver_account, bytes.fromhex(quote.order_id[2:]))
        if body.include_protocol_data
        else None
    )
    wire = quote_wire(quote, allowance=allowance, user_balance=balance, order_signature=signature)
    rows = quote_rows(quote, wire, referrer=quote.referrer, api_key_id=api_key_id)
    if won is not None:
        wire["protocol"]["solver"] = won.wire()
        rows.request["exclusive_solver"] = won.offer.bid.solver.lower()
        rows.request["exclusivity_deadline"] = won.exclusivity_deadline
        rows.request["operator_amount_out"] = str(operator_output)
    # Encoded once: the answer's bytes, and the stored copy of the same document.
    encoded = orjson.dumps(wire)
    rows.request["quote"] = EncodedJson(encoded.decode())
    # The fill is planned once, here; the solver executes this plan.
    fill_plan = plan_fill(FillTerms.of_quote(quote), quote.destination)
    rows.request["fill_plan"] = fill_plan.to_json()
    if quote.calls:
        await _simulate_fill(runtime, quote, fill_plan)
    await store_quote(runtime, rows.inserts(), request_id=quote.request_id)
    return encoded


async def preview_price(
    runtime: Runtime, body: QuoteRequest, *, api_key_id: int | None = None
) -> dict[str, Any]:
    """POST /price: what /quote/v2 would answer, checked the same way (the `txs` simulated
    too), as fees and details only: no steps, and nothing stored."""
    quote = await _planned(runtime, body, api_key_id)
    balance, _allowance = await _user_position(runtime, quote)
    if quote.calls:
        await _simulate_fill(
            runtime, quote, plan_fill(FillTerms.of_quote(quote), quote.destination)
        )
    return price_wire(quote, user_balance=balance)


async def _simulate_fill(runtime: Runtime, quote: Quote, fill: FillPlan) -> None:
    """Run the very fill the solver will send, from the solver, against the destination's
    current state: calls that revert, or need more gas than budgeted, are refused now, in the
    Detailed error shape (what ran, against about which block, what the chain said)."""
    destination = quote.destination
    chain = evm_chains(runtime)[destination.id]
    call = SimulatedCall(
        sender=runtime.deployment.solver.address,
        to=destination.contracts.filler,
        data=calldata.hex_data(filler_calldata(fill)),
        value=fill.value,
    )
    # The node simulates against its latest block: our last seen head is about that block.
    head = chain.state.head
    simulated_block = head.number if head is not None else 0

    def refused(message: str, error_data: str) -> QuoteSimulationFailed:
        return QuoteSimulationFailed(
            "INVALID_EXTRA_TXS",
            message,
            request_id=quote.request_id,
            error_data=error_data,
            simulated_block=simulated_block,
            failed_call=call,
        )

    try:
        gas = await chain.client.estimate_gas(
            {"from": call.sender, "to": call.to, "data": call.data, "value": call.value}
        )
    except Reverted as revert:
        raise refused(
            f"txs fail in simulation: {revert.reason.message}", calldata.hex_data(revert.data)
        ) from None
    except ChainError:
        # The node, not the calls, failed: nothing is known about the txs yet.
        raise QuoteUnavailable(
            "SERVICE_UNAVAILABLE",
            f"chain {destination.id} did not answer the txs simulation; try again",
        ) from None
    fees = destination.fees
    base = fees.fill_gas_native if quote.currency_out.is_native else fees.fill_gas_erc20
    if gas > base + quote.calls_gas:
        raise refused(
            f"txs need about {gas - base} gas, more than the {quote.calls_gas} budgeted; "
            "raise txsGasLimit",
            "0x",
        )


def arrival_rows(
    runtime: Runtime, body: QuoteRequest, terms: DepositAddressTerms
) -> requests.QuoteRows:
    """An open deposit address's transfer priced as it arrives (`app.deposit_addresses`): the
    rows of its child request, paid at the address `terms` (not one of its own), its fill
    planned as every quote's is. QuoteError when it cannot be priced."""
    quote = replace(
        plan_quote(
            body,
            chains=chain_views(runtime),
            deployment=runtime.deployment,
            now=datetime.now(UTC),
            entropy=new_entropy(),
        ),
        deposit_address=terms,
    )
    wire = quote_wire(quote, allowance=None, user_balance=None, order_signature=None)
    rows = quote_rows(quote, wire, referrer=quote.referrer, api_key_id=None)
    rows.request["fill_plan"] = plan_fill(FillTerms.of_quote(quote), quote.destination).to_json()
    return rows
