"""Serve a quote that withdraws from the perps exchange (chain 1337) to an EVM chain: plan it,
answer it, store its request (with the fill the EVM destination's solver executes)."""

from __future__ import annotations

from typing import Any

import structlog

from crossfill.app import registry
from crossfill.app.cross_vm_rows import evm_payment_plan, request_row
from crossfill.app.payout_capacity import check_evm_payout
from crossfill.app.quote_stamps import fresh_stamp
from crossfill.app.quote_store import store_quote
from crossfill.errors import ChainError
from crossfill.kinds.perps.actions import SendAsset
from crossfill.kinds.perps.config import PERPS_USDC_ADDRESS, PerpsExchangeConfig
from crossfill.kinds.perps.inventory import perps_usdc_of
from crossfill.kinds.perps.quote import perps_currency
from crossfill.kinds.perps.runtime import PerpsRuntime
from crossfill.kinds.perps.transfers import PLAN_KIND
from crossfill.kinds.perps.withdrawal import (
    PerpsWithdrawalContext,
    PerpsWithdrawalQuote,
    PerpsWithdrawalSide,
    check_protocol_version,
    plan_perps_withdrawal,
)
from crossfill.kinds.perps.withdrawal_response import perps_withdrawal_wire
from crossfill.quoting.cross_vm import EvmSide, evm_side
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest
from crossfill.quoting.unsupported import reject_unsupported
from crossfill.runtime import Runtime
from crossfill.store.requests import REQUESTS

log = structlog.get_logger(__name__)


def perps_side(perps: PerpsExchangeConfig) -> PerpsWithdrawalSide:
    """The exchange as a withdrawal quote reads it: perps USDC into the solver's account."""
    usdc = perps_currency(perps, PERPS_USDC_ADDRESS, "originCurrency")
    return PerpsWithdrawalSide(
        chain_id=perps.id,
        solver_account=perps.solver.address.lower(),
        network=perps.exchange_chain,
        currency=usdc,
        token=perps.usdc_token,
    )


def _context(
    runtime: Runtime, body: QuoteRequest, perps: PerpsExchangeConfig
) -> PerpsWithdrawalContext:
    evm = evm_side(runtime.deployment, body.destination_chain_id)
    if evm is None:
        raise QuoteError(
            "UNSUPPORTED_CHAIN",
            f"destinationChainId {body.destination_chain_id}: withdrawals from chain "
            f"{perps.id} go to an EVM chain of this service",
        )
    registry.require_enabled(runtime, perps.id, evm.id)
    price = registry.live_usd_price(runtime, evm, evm.currency(body.destination_currency))
    return PerpsWithdrawalContext(
        evm=evm,
        perps=perps_side(perps),
        evm_price=price,
        stamp=fresh_stamp(body, runtime.deployment.quotes, solver=runtime.solver_account.address),
    )


def _request_row(
    quote: PerpsWithdrawalQuote,
    wire: dict[str, Any],
    body: QuoteRequest,
    evm: EvmSide,
    api_key_id: int | None,
) -> dict[str, Any]:
    return request_row(
        quote, wire, body, api_key_id,
        request_type="Bridge" if quote.terms.is_bridge else "Crosschain Swap",
        # What the watcher matches the user's exchange transfer against.
        plan={
            "kind": PLAN_KIND,
            "nonce": quote.nonce,
            "token": quote.send_asset.token,
            "sourceDex": quote.send_asset.source_dex,
        },
        fill_plan=evm_payment_plan(quote, evm),
    )  # fmt: skip


async def _user_balance(exchange: PerpsRuntime, user: str) -> int | None:
    """The user's perps USDC on the exchange (what the withdrawal spends), for the quote's
    `userBalance`; None when the exchange does not answer (the quote still goes out)."""
    try:
        return await perps_usdc_of(exchange.client, user)
    except ChainError as exc:
        log.warning("user balance unavailable", chain_id=exchange.config.id, error=str(exc))
        return None


async def create_perps_withdrawal_quote(
    runtime: Runtime,
    exchange: PerpsRuntime,
    body: QuoteRequest,
    *,
    api_key_id: int | None = None,
) -> dict[str, Any]:
    perps = exchange.config
    check_protocol_version(body, perps.id)
    reject_unsupported(body)
    context = _context(runtime, body, perps)
    quote = plan_perps_withdrawal(body, context)
    check_evm_payout(runtime, quote.terms.currency_out, quote.terms.amount_out)
    wire = perps_withdrawal_wire(
        quote,
        send_asset_types={
            SendAsset.primary_type: [{"name": n, "type": t} for n, t in SendAsset.typed_fields]
        },
        send_asset_primary_type=SendAsset.primary_type,
        depository=context.perps.solver_account,
        user_balance=await _user_balance(exchange, quote.terms.user),
    )
    await store_quote(
        runtime,
        [(REQUESTS, _request_row(quote, wire, body, context.evm, api_key_id))],
        request_id=quote.request_id,
    )
    return wire
